"""The reaper and the heartbeat: a thread beside every worker (and the embedded server).

The reaper (docs/operations.md, "The parts") puts back on the broker
- runs held by a lost worker: one that missed `lost_after_missed_heartbeats` heartbeats
  (its host was killed outright), at once instead of at the run's deadline,
- runs claimed by a worker that passed their deadline (the worker died or hung),
- runs queued long ago that no worker ever received (the broker lost them), and
- pending runs whose enqueue failed at upload (Redis was down).
Several reapers may run at once: every move is a compare-and-set in the store,
and a run put on the broker twice is judged once (the second claim does nothing).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from api.dispatch import RunDispatcher, dispatch_pending, dispatch_runs
from api.store.db import DB_UNAVAILABLE_ERRORS, Session
from api.store.errors import NotFoundError
from api.store.runs import requeue_lost_run, requeue_run, runs_of_lost_workers, stuck_runs
from api.store.types import utcnow
from api.store.views import RunDispatch
from api.store.workers import register_worker, worker_heartbeat
from judge.oracle_cache import cache_usage
from workers.context import WorkerContext

log = logging.getLogger("opjudge.reaper")


@dataclass
class ReapReport:
    requeued: list[int] = field(default_factory=list)  # stuck runs put back on the broker (lost ones too)
    lost: list[int] = field(default_factory=list)  # of those, the runs taken back from lost workers
    dispatched: list[int] = field(default_factory=list)  # pending runs the broker took now
    still_pending: list[int] = field(default_factory=list)  # the broker is still down
    reason: str = ""


def reap_once(ctx: WorkerContext, dispatcher: RunDispatcher, *, lost_workers: bool = True) -> ReapReport:
    """One pass: requeue stuck runs, then hand the broker the pending ones (each step commits).

    `lost_workers=False` leaves the runs of silent workers to their deadline: the
    monitor passes it until it has seen the database answer for a whole lost-worker
    window, since after an outage every worker's last heartbeat is old.
    """
    settings = ctx.settings
    now = utcnow()
    report = ReapReport()
    with ctx.db.session() as session:
        stuck = stuck_runs(session, now=now,
                           queued_before=now - timedelta(seconds=settings.requeue_queued_after_s))  # fmt: skip
        moved = []
        for run in stuck:
            dispatch = requeue_run(session, run_id=run.run_id, now=now)
            if dispatch is not None:
                log.warning("run %s: stuck (%s, deadline %s); requeued", run.run_id,
                            f"claimed by {run.claimed_by}" if run.claimed_by else "queued, never delivered",
                            run.deadline)  # fmt: skip
                moved.append(dispatch)
        if lost_workers:
            lost = _take_back_lost(session, seen_before=now - timedelta(seconds=settings.worker_lost_after_s), now=now)
            report.lost = [d.run_id for d in lost]
            moved += lost
        if moved:
            first = dispatch_runs(session, dispatcher, moved)
            report.requeued, report.still_pending = first.queued, first.pending
            report.reason = first.reason
        if not report.still_pending:
            later = dispatch_pending(session, dispatcher, min_age_s=settings.dispatch_grace_s)
            report.dispatched, report.still_pending = later.queued, later.pending
            report.reason = later.reason or report.reason
    if report.dispatched:
        log.info("dispatched %d pending run(s): %s", len(report.dispatched), report.dispatched)
    return report


def _take_back_lost(session: Session, *, seen_before: datetime, now: datetime) -> list[RunDispatch]:
    """Runs of workers silent since `seen_before`, back to pending (each a compare-and-set on the holder)."""
    moved = []
    for run in runs_of_lost_workers(session, seen_before=seen_before):
        assert run.claimed_by is not None  # the store lists only runs claimed by a registered worker
        dispatch = requeue_lost_run(session, run_id=run.run_id, worker=run.claimed_by, seen_before=seen_before,
                                    now=now)  # fmt: skip
        if dispatch is not None:
            log.warning("run %s: worker %s lost (no heartbeat since %s); requeued (attempt %d so far)",
                        run.run_id, run.claimed_by, seen_before.isoformat(timespec="seconds"), run.attempt)  # fmt: skip
            moved.append(dispatch)
    return moved


class WorkerMonitor:
    """A daemon thread: heartbeats for a registered worker and/or the reaper, each on its interval.

    It never dies of an error (a database outage is logged and waited out) and
    dies with its process, so a killed worker stops heartbeating at once. It
    judges other workers lost only once it has reached the database for a whole
    lost-worker window: right after it starts, or after an outage that silenced
    every worker's heartbeat, an old heartbeat says nothing.
    """

    def __init__(
        self,
        ctx: WorkerContext,
        *,
        dispatcher: RunDispatcher | None,
        queue: str | None = None,
        info: dict[str, Any] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ctx, self._dispatcher, self._queue, self._info = ctx, dispatcher, queue, info or {}
        self._clock = clock  # monotonic seconds; tests pass their own
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="opjudge-monitor", daemon=True)
        self._db_ok_since: float | None = None  # since when every store call of this monitor answered

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout_s: float = 10.0) -> None:
        self._stop.set()
        self._thread.join(timeout_s)

    def _loop(self) -> None:
        settings = self._ctx.settings
        start = time.monotonic()
        next_beat = start if self._queue is not None else math.inf
        next_reap = start if self._dispatcher is not None else math.inf
        while not self._stop.is_set():
            now = time.monotonic()
            if now >= next_beat:
                self.heartbeat()
                next_beat = now + settings.heartbeat_interval_s
            if now >= next_reap:
                self.reap()
                next_reap = now + settings.reaper_interval_s
            self._stop.wait(max(0.2, min(next_beat, next_reap) - time.monotonic()))

    def heartbeat(self) -> None:
        """One heartbeat, as the thread sends it (errors are logged, never raised)."""
        self._guarded("heartbeat", self._beat)

    def reap(self) -> None:
        """One reaper pass, as the thread makes it (errors are logged, never raised)."""
        self._guarded("reaper", self._reap)

    def _reap(self) -> None:
        assert self._dispatcher is not None
        since = self._db_ok_since
        watched = since is not None and self._clock() - since >= self._ctx.settings.worker_lost_after_s
        reap_once(self._ctx, self._dispatcher, lost_workers=watched)

    def _beat(self) -> None:
        with self._ctx.db.session() as session:
            try:
                worker_heartbeat(session, name=self._ctx.name, status=self._status())
            except NotFoundError:  # registered before a database restore, or never: register now
                assert self._queue is not None
                register_worker(session, name=self._ctx.name, queue=self._queue, info=self._info)

    def _status(self) -> dict[str, Any]:
        """What the heartbeat reports besides being alive: the oracle cache's size (for /metrics)."""
        usage = cache_usage(self._ctx.settings.cache_dir / "oracle")
        return {"oracle_cache_bytes": usage.bytes, "oracle_cache_entries": usage.entries}

    def _guarded(self, what: str, step: Any) -> None:
        try:
            step()
        except DB_UNAVAILABLE_ERRORS as exc:
            self._db_ok_since = None
            log.warning("%s: database unavailable: %s", what, exc)
        except Exception:  # the monitor must outlive any one bad pass
            log.exception("%s failed", what)
        else:
            if self._db_ok_since is None:
                self._db_ok_since = self._clock()
