"""The embedded default's worker: a `RunDispatcher` that judges in a thread of the server.

`opjudge serve` with the memory broker (no Redis) uses this instead of Celery.
It calls the same `workers.tasks.judge_run` as the Celery task, so both judge
the same way; only the queue differs: a local one, lost when the server stops.
That is why, on start, it takes back every run left queued or running by an
earlier server: with one embedded server, nobody else can hold them.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
from datetime import timedelta

from api.store.runs import mark_queued, stuck_runs
from api.store.types import utcnow
from api.store.views import StuckRun
from workers.context import WorkerContext
from workers.tasks import Outcome, StoreUnavailableError, judge_run

log = logging.getLogger("opjudge.worker")

STORE_RETRY_DELAY_S = 30.0
DEFAULT_PRIORITY = 6  # api.store.modes.QueuePriority.RANKED
_STOP = -1


class InProcessDispatcher:
    """A local queue and one judging thread (one run at a time, like a worker with concurrency 1)."""

    def __init__(self, ctx: WorkerContext) -> None:
        self._ctx = ctx
        # (priority, arrival, run id, take over): lower priority first (api.store.modes.QueuePriority), then oldest.
        self._queue: queue.PriorityQueue[tuple[int, int, int, bool]] = queue.PriorityQueue()
        self._arrivals = itertools.count()
        self._thread = threading.Thread(target=self._loop, name="opjudge-inprocess-worker", daemon=True)
        self._timers: list[threading.Timer] = []
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._machine = threading.Lock()  # held by the run being judged, or by an organiser job's work

    def enqueue(self, run_id: int, queue: str, priority: int = DEFAULT_PRIORITY) -> None:
        """Take the run (every queue: the embedded server is the only worker there is); a test
        run queued after ranked ones is judged before them."""
        self._put(priority, run_id, False)

    def _put(self, priority: int, run_id: int, take_over: bool) -> None:
        self._queue.put((priority, next(self._arrivals), run_id, take_over))

    def enqueue_job(self, job_id: int, queue: str) -> None:
        """An organiser job (api/store/jobs.py) in a thread of its own, taking turns with the judging one."""
        from workers.organiser_jobs import run_organiser_job

        # It waits for the run being judged and holds the next one back: on the one machine a build or a
        # comparison beside a run's timing would move its figures.
        threading.Thread(target=run_organiser_job, args=(self._ctx, job_id), kwargs={"exclusive": self._machine},
                         name=f"opjudge-job-{job_id}", daemon=True).start()  # fmt: skip

    def start(self) -> None:
        """Take back orphaned runs, then start judging."""
        for run in self._orphans():
            log.info("run %s: left %s by an earlier server; judging it again", run.run_id,
                     "running" if run.claimed_by else "queued")
            self._put(run.priority, run.run_id, True)  # a test run left queued stays ahead
        self._thread.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop after the run in progress (the thread is a daemon: a long run does not hold the exit)."""
        self._stopped.set()
        with self._lock:
            for timer in self._timers:
                timer.cancel()
        self._queue.put((_STOP, -1, _STOP, False))  # ahead of everything waiting
        self._thread.join(timeout_s)

    def idle(self) -> bool:
        """Nothing waiting (for tests and for a clean shutdown)."""
        return self._queue.empty()

    def _orphans(self) -> list[StuckRun]:
        # "Stuck as of far in the future" lists every running and queued run.
        later = utcnow() + timedelta(days=365 * 100)
        with self._ctx.db.session() as session:
            return stuck_runs(session, now=later, queued_before=later)

    def _loop(self) -> None:
        while True:
            priority, _, run_id, take_over = self._queue.get()
            if run_id == _STOP:
                return
            try:
                with self._machine:
                    outcome = judge_run(self._ctx, run_id, take_over=take_over)
            except StoreUnavailableError as exc:
                log.warning("run %s: %s; trying again in %.0f s", run_id, exc, STORE_RETRY_DELAY_S)
                self._later(STORE_RETRY_DELAY_S, priority, run_id, take_over or exc.held)
                continue
            except Exception:  # the judging thread must survive anything one run does
                log.exception("run %s: the in-process worker failed", run_id)
                continue
            if outcome.outcome is Outcome.RETRY:
                self._later(outcome.retry_in_s or 0.0, priority, run_id, False)
                try:
                    with self._ctx.db.session() as session:
                        mark_queued(session, run_id=run_id)
                except Exception:  # left pending: the reaper hands it out again
                    log.exception("run %s: could not mark the retry queued", run_id)

    def _later(self, delay_s: float, priority: int, run_id: int, take_over: bool) -> None:
        if self._stopped.is_set():
            return
        timer = threading.Timer(delay_s, self._put, args=(priority, run_id, take_over))
        timer.daemon = True
        with self._lock:
            self._timers = [t for t in self._timers if t.is_alive()] + [timer]
        timer.start()
