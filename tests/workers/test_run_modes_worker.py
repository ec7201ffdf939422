"""Run modes on the worker side: the embedded worker takes test runs first, and the engine is
asked for the submission's mode (judge/modes.py narrows the case sets)."""

from __future__ import annotations

import time

from api.store.enums import RunStatus
from api.store.modes import QueuePriority
from api.store.submissions import submission_detail
from judge.backends import CaseSet
from judge.modes import RunMode
from judge.verdict import Verdict
from workers.context import WorkerContext
from workers.inprocess import InProcessDispatcher
from workers.tasks import judge_run


def wait_done(ctx: WorkerContext, submission_ids: list[int], timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with ctx.db.session() as session:
            statuses = [submission_detail(session, submission_id=i).runs[0].status for i in submission_ids]
        if all(s in (RunStatus.DONE, RunStatus.FAILED) for s in statuses):
            return
        time.sleep(0.05)
    raise AssertionError(f"not judged within {timeout_s} s: {statuses}")


def test_the_embedded_worker_takes_a_later_test_run_before_earlier_ranked_ones(ctx, submit, fake_judge) -> None:
    judge = fake_judge(Verdict.AC)
    made = [submit(), submit(mode=RunMode.BENCHMARK), submit(), submit(mode=RunMode.TEST)]
    assert [m.priority for m in made] == [QueuePriority.RANKED, QueuePriority.BENCHMARK, QueuePriority.RANKED,
                                          QueuePriority.TEST]  # fmt: skip
    worker = InProcessDispatcher(ctx)
    for created in made:  # all waiting before the worker starts, as behind a long run
        worker.enqueue(created.run_id, created.queue, priority=created.priority)
    worker.start()
    try:
        wait_done(ctx, [m.submission_id for m in made])
    finally:
        worker.stop()
    assert [r.mode for r in judge.requests] == [RunMode.TEST, RunMode.BENCHMARK, RunMode.RANKED, RunMode.RANKED]


def test_the_engine_is_asked_for_the_submissions_mode(ctx, submit, fake_judge, settings) -> None:
    judge = fake_judge(Verdict.AC)
    settings.run_case_sets = ""  # every set the run kind has
    created = submit(mode=RunMode.TEST)
    judge_run(ctx, created.run_id)
    (request,) = judge.requests
    assert request.mode is RunMode.TEST
    assert request.case_sets == (CaseSet.TESTS, CaseSet.BENCHMARKS, CaseSet.PRIVATE)
    assert request.judged_sets == (CaseSet.TESTS,)
    with ctx.db.session() as session:
        detail = submission_detail(session, submission_id=created.submission_id)
    assert detail.submission.mode is RunMode.TEST and detail.runs[0].verdict is Verdict.AC
