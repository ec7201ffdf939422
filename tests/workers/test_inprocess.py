"""The embedded server's worker: same judge_run, a local queue, orphans taken back on start."""

from __future__ import annotations

import time

from api.store.enums import RunStatus
from api.store.runs import claim_run, mark_queued
from api.store.submissions import submission_detail
from judge.verdict import Verdict
from workers.context import WorkerContext
from workers.inprocess import InProcessDispatcher


def wait_for_verdict(ctx: WorkerContext, submission_id: int, timeout_s: float = 30) -> tuple[Verdict | None, int]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with ctx.db.session() as session:
            run = submission_detail(session, submission_id=submission_id).runs[0]
        if run.status in (RunStatus.DONE, RunStatus.FAILED):
            return run.verdict, run.attempt
        time.sleep(0.05)
    raise AssertionError(f"no verdict within {timeout_s} s (status {run.status})")


def test_enqueued_runs_are_judged(ctx, submit, fake_judge) -> None:
    fake_judge(Verdict.AC)
    worker = InProcessDispatcher(ctx)
    worker.start()
    try:
        created = [submit() for _ in range(3)]
        for c in created:
            worker.enqueue(c.run_id, c.queue)
        assert [wait_for_verdict(ctx, c.submission_id) for c in created] == [(Verdict.AC, 1)] * 3
    finally:
        worker.stop()


def test_an_internal_error_is_retried_after_the_back_off(ctx, submit, fake_judge) -> None:
    judge = fake_judge(Verdict.IE, Verdict.WA)
    worker = InProcessDispatcher(ctx)
    worker.start()
    try:
        created = submit()
        worker.enqueue(created.run_id, created.queue)
        assert wait_for_verdict(ctx, created.submission_id) == (Verdict.WA, 2)
        assert judge.calls == 2
    finally:
        worker.stop()


def test_runs_left_by_an_earlier_server_are_judged_again(ctx, submit, fake_judge) -> None:
    fake_judge(Verdict.AC)
    running, queued = submit(), submit()
    with ctx.db.session() as session:
        claim_run(session, run_id=running.run_id, worker="inprocess@old.1")  # the old server died mid-run
        mark_queued(session, run_id=queued.run_id)  # on the old server's local queue, now gone
    worker = InProcessDispatcher(ctx)
    worker.start()
    try:
        assert wait_for_verdict(ctx, running.submission_id) == (Verdict.AC, 2)
        assert wait_for_verdict(ctx, queued.submission_id) == (Verdict.AC, 1)
    finally:
        worker.stop()
