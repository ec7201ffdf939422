"""`run_organiser_job(job_id)`: claim an organiser job (api/store/jobs.py), run it, store its outcome.

The Celery task `opjudge.organiser_job` (workers/celery_app.py) and the embedded
server's in-process dispatcher both call this. A job claimed already does nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from api.store import Session
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


def run_organiser_job(ctx: WorkerContext, job_id: int) -> str:
    """Run job `job_id` once: "done", "failed", or "skipped" when another worker has it."""
    with ctx.db.session() as session:
        job = claim_job(session, job_id=job_id, now=utcnow())
        if job is None:
            return "skipped"
        runner = _runners().get(job.kind)
        try:
            if runner is None:
                raise LookupError(f"this worker cannot run {job.kind.value} jobs")
            result = runner(ctx, session, job)
        except Exception as error:  # noqa: BLE001 - any failure is the job's outcome, stored for the organisers
            log.exception("organiser job %s failed", job_id)
            session.rollback()
            finish_job(session, job_id=job_id, result={}, now=utcnow(), error=f"{type(error).__name__}: {error}")
            return "failed"
        finish_job(session, job_id=job_id, result=result, now=utcnow())
        return "done"
