"""The Celery app: one queue per device kind, late acks, one run at a time per device.

`make_celery(settings)` builds it (nothing is read at import time); the module
attribute `app` exists for `celery -A workers.celery_app ...` (Flower, inspect)
and is built from the environment on first access. Results go to the database,
so there is no result backend.

Delivery guarantees (docs/operations.md, "The parts"):
- `task_acks_late` + `task_reject_on_worker_lost`: a pool process killed in the
  middle of a run puts its task back on the queue; the redelivered task takes
  the run over (`take_over`), so it is judged once more and finishes once.
- `worker_prefetch_multiplier=1`, concurrency 1: a worker holds one run per device.
- Redis's visibility timeout is longer than a run's deadline, so Redis never
  hands a task to a second worker while the first is still within its time; and
  `task_time_limit` (between the two) stops a hung worker before Redis would.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Celery, Task
from celery.exceptions import Reject
from celery.signals import worker_process_init
from kombu.exceptions import KombuError
from redis.exceptions import RedisError

from api.dispatch import DispatchUnavailable
from api.store.runs import mark_queued
from workers.context import WorkerContext
from workers.settings import WorkerSettings
from workers.tasks import Outcome, StoreUnavailableError, judge_run

log = logging.getLogger("opjudge.worker")

JUDGE_TASK = "opjudge.judge_run"
JOB_TASK = "opjudge.organiser_job"  # re-audit and machine review (workers/organiser_jobs.py)
JOB_TIME_LIMIT_S = 6 * 3600  # a re-audit that rebuilds a whole contest runs for hours, not a run's minutes
# How long a task waits before it is tried again after the database stayed down.
STORE_RETRY_COUNTDOWN_S = 30.0
# What publishing raises when the broker cannot be reached (kombu wraps most, not all, of them).
BROKER_ERRORS: tuple[type[Exception], ...] = (KombuError, RedisError, OSError)


class OpjudgeCelery(Celery):
    """A Celery app that carries the worker context its tasks run with."""

    ctx: WorkerContext


def make_celery(
    settings: WorkerSettings, *, ctx: WorkerContext | None = None, publisher: bool = False
) -> OpjudgeCelery:
    """The Celery app for `settings.broker_url`, with the judge task registered.

    `publisher=True` for the API's and the reaper's `CeleryDispatcher`: connecting
    is tried once, so an upload never waits for a broker that is down.
    """
    app = OpjudgeCelery("opjudge", broker=settings.broker_url, set_as_current=False)
    timeout = settings.broker_connect_timeout_s
    transport: dict[str, Any] = {
        "visibility_timeout": settings.visibility_timeout_s,
        "socket_connect_timeout": timeout,
        "socket_timeout": max(timeout, 10.0),
        # One Redis list per priority step; BRPOP reads them in this order (api.store.modes.QueuePriority).
        "priority_steps": [0, 3, 6, 9],
    }
    if publisher:
        transport["max_retries"] = 0  # kombu: fail on the first refused connect instead of retrying
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        # A worker that hangs past its run's deadline is stopped, and its message acknowledged,
        # before Redis's visibility timeout hands the message to another worker, which would
        # take the run over from whoever the reaper gave it to meanwhile.
        task_time_limit=settings.task_time_limit_s,
        worker_prefetch_multiplier=1,
        worker_concurrency=1,
        worker_pool="prefork",
        task_default_queue="judge.cpu",
        task_create_missing_queues=True,
        task_ignore_result=True,
        task_serializer="json",
        accept_content=["json"],
        # Events for Flower: which worker runs which task, and when.
        worker_send_task_events=True,
        task_send_sent_event=True,
        broker_connection_timeout=timeout,
        broker_connection_retry_on_startup=True,
        broker_transport_options=transport,
        # The API publishes with a short timeout and no retry: a down broker must not hold an upload.
        task_publish_retry=False,
        worker_hijack_root_logger=False,
    )
    app.ctx = ctx or WorkerContext(settings)
    _register_tasks(app)
    _register_job_task(app)
    # A pool child must open its own database connections (workers/context.py).
    worker_process_init.connect(lambda **_: app.ctx.forget_database(), weak=False,
                                dispatch_uid=f"opjudge-forget-db-{id(app)}")
    return app


def _register_tasks(app: OpjudgeCelery) -> None:
    @app.task(name=JUDGE_TASK, bind=True, shared=False, acks_late=True, reject_on_worker_lost=True, max_retries=None,
              ignore_result=True)
    def judge_run_task(self: Task, run_id: int, take_over: bool = False) -> str:
        """Judge one run (workers.tasks.judge_run); retries with back-off on internal errors."""
        redelivered = bool((self.request.delivery_info or {}).get("redelivered"))
        try:
            outcome = judge_run(app.ctx, run_id, take_over=take_over or redelivered)
        except StoreUnavailableError as exc:
            # Tried again later; if this worker held the run, that later try takes it over.
            raise self.retry(kwargs={"run_id": run_id, "take_over": take_over or redelivered or exc.held}, exc=exc,
                             countdown=STORE_RETRY_COUNTDOWN_S) from exc
        if outcome.outcome is Outcome.RETRY:
            _retry_with_backoff(self, app.ctx, run_id, outcome.retry_in_s or 0.0)
        return outcome.outcome.value


def _register_job_task(app: OpjudgeCelery) -> None:
    @app.task(name=JOB_TASK, shared=False, acks_late=True, ignore_result=True, time_limit=JOB_TIME_LIMIT_S)
    def organiser_job_task(job_id: int) -> str:
        """Run an organiser job once; a second delivery finds it claimed and does nothing."""
        from workers.organiser_jobs import run_organiser_job

        return run_organiser_job(app.ctx, job_id)


def _retry_with_backoff(task: Task, ctx: WorkerContext, run_id: int, countdown: float) -> None:
    """Re-send the run with a countdown; the run (pending after fail_run) is marked queued."""
    try:
        retry = task.retry(kwargs={"run_id": run_id}, countdown=countdown, throw=False)
    except Reject as exc:
        # The broker refused the retry: the run stays pending and the reaper dispatches it.
        log.warning("run %s: could not schedule the retry (%s); the reaper will dispatch it", run_id, exc)
        return
    with ctx.db.session() as session:
        mark_queued(session, run_id=run_id)
    log.info("run %s: retry in %.0f s", run_id, countdown)
    raise retry


class CeleryDispatcher:
    """`api.dispatch.RunDispatcher` on Celery: publish the judge task to the run's queue."""

    def __init__(self, app: Celery) -> None:
        self._app = app

    def enqueue(self, run_id: int, queue: str, priority: int = 6) -> None:
        """Publish once, with the short connect timeout; DispatchUnavailable when the broker is down.

        `priority` uses kombu's Redis priorities: the worker takes 0 before 3, 6 and 9 (test
        runs before ranked ones, api.store.modes.QueuePriority); within one priority, oldest first.
        """
        try:
            self._app.send_task(JUDGE_TASK, kwargs={"run_id": run_id}, queue=queue, priority=priority, retry=False)
        except BROKER_ERRORS as exc:
            raise DispatchUnavailable(f"the broker is unavailable ({type(exc).__name__}: {exc})") from exc

    def enqueue_job(self, job_id: int, queue: str) -> None:
        """Publish an organiser job to a worker queue; DispatchUnavailable when the broker is down."""
        try:
            self._app.send_task(JOB_TASK, kwargs={"job_id": job_id}, queue=queue, retry=False)
        except BROKER_ERRORS as exc:
            raise DispatchUnavailable(f"the broker is unavailable ({type(exc).__name__}: {exc})") from exc


_lazy_app: OpjudgeCelery | None = None


def __getattr__(name: str) -> Any:
    # `celery -A workers.celery_app` looks for `app`; build it from the environment only then.
    global _lazy_app
    if name in ("app", "celery"):
        if _lazy_app is None:
            _lazy_app = make_celery(WorkerSettings())
        return _lazy_app
    raise AttributeError(name)
