"""`run_organiser_job(job_id)`: claim an organiser job (api/store/jobs.py), run it, store its outcome.

The Celery task `opjudge.organiser_job` (workers/celery_app.py) and the embedded
server's in-process dispatcher both call this. A job claimed already does nothing.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from api.store.db import Session
from api.store.jobs import JobKind, JobView, claim_job, finish_job
from api.store.types import utcnow
from workers.context import WorkerContext

log = logging.getLogger("opjudge.worker")

Runner = Callable[[WorkerContext, Session, JobView], dict[str, Any]]


def _runners() -> dict[JobKind, Runner]:
    from workers.reaudit import reaudit

    runners: dict[JobKind, Runner] = {JobKind.REAUDIT: reaudit}
    try:
        from workers.similarity_job import similarity
    except ImportError:  # machine review not installed on this worker
        return runners
    runners[JobKind.SIMILARITY] = similarity
    return runners


def run_organiser_job(ctx: WorkerContext, job_id: int, *,
                      exclusive: AbstractContextManager[Any] | None = None) -> str:
    """Run job `job_id` once: "done", "failed", or "skipped" when another worker has it.

    No transaction spans the job (on embedded SQLite a write transaction is the database's one
    write lock, and a re-audit's builds take minutes): the claim and the outcome are short writes
    of their own, and the job reads in a read session whose transactions it ends between batches
    (api/store/jobs.py, `stored_submissions`); a job that stores what it found opens a short write
    session for it. `exclusive`, where given, is held for the job's work: the embedded server's
    one machine, so that no build or comparison runs beside a judge run's timing (workers/inprocess.py)."""
    with ctx.db.session() as session:
        job = claim_job(session, job_id=job_id, now=utcnow())
        session.rollback()  # the claim is committed; end the transaction its read began
    if job is None:
        return "skipped"
    runner = _runners().get(job.kind)
    try:
        if runner is None:
            raise LookupError(f"this worker cannot run {job.kind.value} jobs")
        with exclusive or contextlib.nullcontext(), ctx.db.session(write=False) as reader:
            result = runner(ctx, reader, job)
    except Exception as error:  # noqa: BLE001 - any failure is the job's outcome, stored for the organisers
        log.exception("organiser job %s failed", job_id)
        _finish(ctx, job_id, {}, error=f"{type(error).__name__}: {error}")
        return "failed"
    _finish(ctx, job_id, result)
    return "done"


def _finish(ctx: WorkerContext, job_id: int, result: dict[str, Any], *, error: str = "") -> None:
    with ctx.db.session() as session:
        finish_job(session, job_id=job_id, result=result, now=utcnow(), error=error)
