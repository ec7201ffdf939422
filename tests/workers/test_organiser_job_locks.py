"""An organiser job holds no write lock while it works (embedded SQLite has one), and
in the embedded server it takes turns with the judge run instead of building beside its timing."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from api.store.jobs import JobKind, JobStatus, get_job, start_job
from api.store.types import utcnow
from api.store.views import NewSubmission
from judge.verdict import Verdict
from tests.workers.conftest import BASELINE
from workers import reaudit as reaudit_module
from workers.context import WorkerContext
from workers.inprocess import InProcessDispatcher
from workers.organiser_jobs import run_organiser_job


def _held(real: Callable[..., Any]) -> tuple[Callable[..., Any], threading.Event, threading.Event]:
    """`real` held at its start until released: (the stand-in, set when it is entered, the release)."""
    inside, release = threading.Event(), threading.Event()

    def held(*args: Any, **kwargs: Any) -> Any:
        inside.set()
        release.wait(30)
        return real(*args, **kwargs)

    return held, inside, release


def _held_scan(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, threading.Event]:
    """The re-audit's policy scan, held until released: a job in the middle of its work (a long build)."""
    held, inside, release = _held(reaudit_module.check_sources)
    monkeypatch.setattr(reaudit_module, "check_sources", held)
    return inside, release


def _reaudit_job(ctx: WorkerContext) -> int:
    with ctx.db.session() as session:
        return start_job(session, competition="demo", kind=JobKind.REAUDIT, params={}, actor=None, now=utcnow()).id


def _write_finishes(ctx: WorkerContext, timeout_s: float) -> bool:
    """Whether a write (another job's row, as an organiser's request makes one) commits within the time."""
    done = threading.Event()

    def write() -> None:
        with ctx.db.session() as session:
            start_job(session, competition="demo", kind=JobKind.SIMILARITY, params={}, actor=None, now=utcnow())
        done.set()

    threading.Thread(target=write, daemon=True).start()
    return done.wait(timeout_s)


def test_a_reaudit_in_the_middle_of_its_work_holds_no_write_lock(
        ctx: WorkerContext, submit: Callable[..., NewSubmission], monkeypatch: pytest.MonkeyPatch) -> None:
    submit(BASELINE.read_bytes())
    inside, release = _held_scan(monkeypatch)
    job_id = _reaudit_job(ctx)
    worker = threading.Thread(target=run_organiser_job, args=(ctx, job_id), daemon=True)
    worker.start()
    try:
        assert inside.wait(30), "the re-audit never reached its scan"
        # Before: the job's transaction held SQLite's write lock, and this waited 30 s for "database is locked".
        assert _write_finishes(ctx, timeout_s=10), "a write waited for the re-audit's lock"
    finally:
        release.set()
        worker.join(60)
    with ctx.db.session() as session:
        job = get_job(session, job_id=job_id)
        assert job.status is JobStatus.DONE and job.result["scanned"] >= 1


def test_in_the_embedded_server_a_job_waits_for_the_run_being_judged(
        ctx: WorkerContext, submit: Callable[..., NewSubmission], monkeypatch: pytest.MonkeyPatch,
        fake_judge: Callable[..., Any]) -> None:
    fake_judge(Verdict.AC)
    import workers.inprocess as inprocess

    held_run, judging, finish_run = _held(inprocess.judge_run)
    monkeypatch.setattr(inprocess, "judge_run", held_run)
    inside, release = _held_scan(monkeypatch)
    release.set()  # the scan itself runs free here: what is watched is when it starts
    dispatcher = InProcessDispatcher(ctx)
    dispatcher.start()
    try:
        created = submit(BASELINE.read_bytes())
        dispatcher.enqueue(created.run_id, created.queue)
        assert judging.wait(30)
        job_id = _reaudit_job(ctx)
        dispatcher.enqueue_job(job_id, "judge.cpu")
        assert not inside.wait(1.0), "the job's work started beside the run being judged"
        finish_run.set()
        assert inside.wait(30), "the job never ran after the run"
    finally:
        finish_run.set()
        dispatcher.stop()
    for _ in range(300):
        with ctx.db.session() as session:
            if get_job(session, job_id=job_id).status is JobStatus.DONE:
                return
        threading.Event().wait(0.1)
    raise AssertionError("the re-audit did not finish")
