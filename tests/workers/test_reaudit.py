"""Re-audit under today's policy lists what it refuses, with the rule and the place;
with `rebuild` the libraries are built and checked again; nothing is disqualified."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from api.store.audit import list_audit
from api.store.jobs import JobKind, JobStatus, get_job, start_job
from api.store.models import Submission
from api.store.types import utcnow
from api.store.views import NewSubmission
from tests.workers.conftest import BASELINE, FIXTURES
from workers.context import WorkerContext
from workers.organiser_jobs import run_organiser_job


def _submit_three(submit: Callable[..., NewSubmission]) -> dict[str, int]:
    return {
        "clean": submit(BASELINE.read_bytes()).submission_id,
        "system": submit((FIXTURES / "exploit_system.cpp").read_bytes()).submission_id,
        "constructor": submit((FIXTURES / "exploit_load_time_constructor.cpp").read_bytes()).submission_id,
    }


def _run(ctx: WorkerContext, *, rebuild: bool) -> dict:
    with ctx.db.session() as session:
        job = start_job(session, competition="demo", kind=JobKind.REAUDIT, params={"rebuild": rebuild},
                        actor=None, now=utcnow())  # fmt: skip
    assert run_organiser_job(ctx, job.id) == "done"
    assert run_organiser_job(ctx, job.id) == "skipped"  # a second delivery does nothing
    with ctx.db.session() as session:
        done = get_job(session, job_id=job.id)
        assert done.status is JobStatus.DONE and done.finished_at is not None
        assert any(e.action == "job.reaudit" for e in list_audit(session))
        assert session.query(Submission).filter(Submission.disqualified_at.is_not(None)).count() == 0
    return done.result


def test_the_source_scan_lists_refusals_with_rule_and_place(ctx: WorkerContext, submit) -> None:  # noqa: ANN001
    ids = _submit_three(submit)
    result = _run(ctx, rebuild=False)
    assert result["scanned"] >= 3 and result["rebuilt"] == 0
    refused = {r["submission_id"] for r in result["refused"]}
    assert ids["system"] in refused and ids["clean"] not in refused
    assert ids["constructor"] not in refused  # its trick shows only in the built library
    first = next(r for r in result["refused"] if r["submission_id"] == ids["system"])
    assert first["stage"] == "sources" and first["rule"] and first["file"] == "kernel.cpp" and first["line"]


@pytest.mark.slow
def test_a_rebuild_finds_what_only_the_library_shows(ctx: WorkerContext, submit) -> None:  # noqa: ANN001
    ids = _submit_three(submit)
    result = _run(ctx, rebuild=True)
    by_id = {r["submission_id"]: r for r in result["refused"]}
    assert by_id[ids["constructor"]]["stage"] == "build" and by_id[ids["constructor"]]["rule"] == "load-time-code"
    assert ids["clean"] not in by_id and result["rebuilt"] >= 2, result["not_rebuilt"]


def test_a_second_reaudit_waits_for_the_first(ctx: WorkerContext, demo) -> None:  # noqa: ANN001
    from api.store.errors import ConflictError

    with ctx.db.session() as session:
        start_job(session, competition="demo", kind=JobKind.REAUDIT, params={}, actor=None, now=utcnow())
        with pytest.raises(ConflictError, match="has not finished yet"):
            start_job(session, competition="demo", kind=JobKind.REAUDIT, params={}, actor=None, now=utcnow())


def test_a_job_whose_worker_died_does_not_block_the_next(ctx: WorkerContext, demo) -> None:  # noqa: ANN001
    from datetime import timedelta

    from api.store.jobs import claim_job

    with ctx.db.session() as session:
        stuck = start_job(session, competition="demo", kind=JobKind.REAUDIT, params={}, actor=None,
                          now=utcnow() - timedelta(hours=8))  # fmt: skip
        claim_job(session, job_id=stuck.id, now=utcnow() - timedelta(hours=8))
        fresh = start_job(session, competition="demo", kind=JobKind.REAUDIT, params={}, actor=None, now=utcnow())
        assert get_job(session, job_id=stuck.id).status is JobStatus.FAILED and "lost" in get_job(
            session, job_id=stuck.id).error
        assert fresh.status is JobStatus.PENDING
