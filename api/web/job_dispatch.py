"""Handing organiser jobs (api/store/jobs.py) to a worker, through the API's dispatcher.

The Celery dispatcher and the embedded server's in-process one have `enqueue_job`;
a dispatcher without it (tests) leaves the job pending, and the answer says why.
"""

from __future__ import annotations

from api.dispatch import DispatchUnavailable, RunDispatcher
from api.store.jobs import JobView


def dispatch_job(dispatcher: RunDispatcher, job: JobView, queue: str) -> str:
    """Hand the job to a worker; the reason it stays pending, when it could not be."""
    enqueue = getattr(dispatcher, "enqueue_job", None)
    if enqueue is None:
        return "this server's dispatcher takes no organiser jobs; run them with a Celery worker (opjudge worker)"
    try:
        enqueue(job.id, queue)
    except DispatchUnavailable as error:
        return f"{error}; send it again with POST /api/v1/admin/jobs/{job.id}/dispatch"
    return ""
