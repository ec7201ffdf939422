"""judge_run: claim with compare-and-set, judge, store; safe to run twice; IE retried, never charged."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import OperationalError

from api.store.enums import RunKind, RunStatus
from api.store.models import Run, Submission
from api.store.runs import claim_run
from api.store.submissions import submission_detail
from api.store.views import RunView
from judge.backends import CaseSet
from judge.verdict import Verdict
from workers import tasks
from workers.context import WorkerContext
from workers.tasks import Outcome, StoreUnavailableError, judge_run, retry_delay_s, run_case_sets

from .conftest import FIXTURES


def run_of(ctx: WorkerContext, submission_id: int) -> tuple[RunView, bool]:
    with ctx.db.session() as session:
        detail = submission_detail(session, submission_id=submission_id)
        charged = session.get_one(Submission, submission_id).charged
    return detail.runs[0], charged


@pytest.mark.slow
def test_judges_the_baseline_for_real_and_records_stages(ctx, submit) -> None:
    created = submit()
    outcome = judge_run(ctx, created.run_id)
    assert (outcome.outcome, outcome.verdict) == (Outcome.JUDGED, Verdict.AC), outcome.message
    run, charged = run_of(ctx, created.submission_id)
    assert run.status is RunStatus.DONE and run.verdict is Verdict.AC and run.attempt == 1
    assert [c.case_set for c in run.cases] == [CaseSet.TESTS] * 5  # OPJUDGE_RUN_CASE_SETS=tests
    assert {"policy", "building", "checking", "done"} <= set(run.stage_times)
    assert run.toolchain and run.toolchain.startswith("g++")
    assert charged


@pytest.mark.slow
def test_wrong_kernel_gets_wa_for_real(ctx, submit) -> None:
    created = submit((FIXTURES / "wrong_no_relu.cpp").read_bytes())
    assert judge_run(ctx, created.run_id).verdict is Verdict.WA
    run, _ = run_of(ctx, created.submission_id)
    assert run.verdict is Verdict.WA and any(not c.passed for c in run.cases)


def test_a_second_delivery_does_nothing(ctx, submit, fake_judge) -> None:
    judge = fake_judge(Verdict.AC)
    created = submit()
    assert judge_run(ctx, created.run_id).outcome is Outcome.JUDGED
    again = judge_run(ctx, created.run_id)
    assert again.outcome is Outcome.SKIPPED and judge.calls == 1
    run, _ = run_of(ctx, created.submission_id)
    assert run.attempt == 1 and len(run.cases) == 1


def test_a_run_held_by_a_live_worker_is_left_alone_unless_taken_over(ctx, submit, fake_judge) -> None:
    judge = fake_judge(Verdict.AC)
    created = submit()
    with ctx.db.session() as session:
        assert claim_run(session, run_id=created.run_id, worker="judge.cpu@other.9") is not None
    assert judge_run(ctx, created.run_id).outcome is Outcome.SKIPPED
    assert judge.calls == 0
    # The broker redelivered the task because the worker holding it died: take it over.
    assert judge_run(ctx, created.run_id, take_over=True).verdict is Verdict.AC
    run, _ = run_of(ctx, created.submission_id)
    assert run.attempt == 2 and run.status is RunStatus.DONE


@pytest.mark.parametrize("late", [Verdict.WA, Verdict.IE])
def test_a_worker_whose_run_was_taken_over_stores_nothing(ctx, submit, fake_judge, late) -> None:
    """While this worker judges, the run is taken over (it was thought lost): its late verdict,
    or its IE retry, must leave the new holder's run alone."""
    judge = fake_judge(late)
    created = submit()

    def judged_while_taken_over(request, *, host, reporter):  # type: ignore[no-untyped-def]
        with ctx.db.session() as session:
            assert claim_run(session, run_id=created.run_id, worker="judge.cpu@other.9", take_over=True)
        return judge(request, host=host, reporter=reporter)

    tasks.judge_submission = judged_while_taken_over  # undone by fake_judge's monkeypatch
    outcome = judge_run(ctx, created.run_id)
    assert outcome.outcome is Outcome.SKIPPED  # no retry either: the run is the other worker's
    run, charged = run_of(ctx, created.submission_id)
    assert run.status is RunStatus.RUNNING and run.attempt == 2 and run.verdict is None and not run.cases
    with ctx.db.session() as session:
        assert session.get_one(Run, created.run_id).claimed_by == "judge.cpu@other.9"


def test_an_internal_error_is_retried_and_charged_only_for_its_final_verdict(ctx, submit, fake_judge) -> None:
    fake_judge(Verdict.IE, Verdict.AC)
    created = submit()
    first = judge_run(ctx, created.run_id)
    assert first.outcome is Outcome.RETRY and first.retry_in_s == 0
    run, charged = run_of(ctx, created.submission_id)
    assert run.status is RunStatus.PENDING and charged  # the quota stays used while it is retried
    second = judge_run(ctx, created.run_id)
    assert second.verdict is Verdict.AC
    run, charged = run_of(ctx, created.submission_id)
    assert run.status is RunStatus.DONE and run.attempt == 2 and charged


def test_the_last_attempt_ends_as_ie_with_the_quota_given_back(ctx, submit, fake_judge) -> None:
    fake_judge(RuntimeError("the oracle cache is corrupt"))  # max_attempts = 2 in these settings
    created = submit()
    assert judge_run(ctx, created.run_id).outcome is Outcome.RETRY
    last = judge_run(ctx, created.run_id)
    assert (last.outcome, last.verdict) == (Outcome.JUDGED, Verdict.IE)
    run, charged = run_of(ctx, created.submission_id)
    assert run.status is RunStatus.FAILED and run.verdict is Verdict.IE and not charged
    assert "the oracle cache is corrupt" in run.message


def test_a_run_that_kills_every_worker_ends_as_ie_without_judging(ctx, submit, fake_judge) -> None:
    judge = fake_judge(Verdict.AC)
    created = submit()
    for worker in ("a@h.1", "b@h.2"):  # two claims whose workers died (taken over each time)
        with ctx.db.session() as session:
            claim_run(session, run_id=created.run_id, worker=worker, take_over=True)
    outcome = judge_run(ctx, created.run_id, take_over=True)
    assert outcome.verdict is Verdict.IE and judge.calls == 0
    run, charged = run_of(ctx, created.submission_id)
    assert run.status is RunStatus.FAILED and "never finished" in run.message and not charged


def test_the_request_carries_the_runs_secret_sources_and_sets(ctx, submit, fake_judge) -> None:
    judge = fake_judge(Verdict.AC)
    created = submit(b"// k\n", name="k.cpp")
    judge_run(ctx, created.run_id)
    request = judge.requests[0]
    assert [(s.name, s.content) for s in request.sources] == [("k.cpp", b"// k\n")]
    assert request.case_sets == (CaseSet.TESTS,)
    # The judge secret, then the run's own salt (docs/rules.md: seeds the submission cannot predict).
    assert request.secret.startswith(ctx.settings.secret)


def test_case_sets_narrow_only_where_the_kind_has_them(ctx) -> None:
    class Claimed:
        case_sets = RunKind.JUDGE.case_sets

    assert run_case_sets(ctx, Claimed()) == (CaseSet.TESTS,)  # type: ignore[arg-type]
    Claimed.case_sets = RunKind.REPRODUCTION.case_sets
    assert run_case_sets(ctx, Claimed()) == (CaseSet.BENCHMARKS, CaseSet.PRIVATE)  # type: ignore[arg-type]


def test_default_settings_judge_every_set(ctx) -> None:
    ctx.settings.run_case_sets = ""

    class Claimed:
        case_sets = RunKind.JUDGE.case_sets

    assert run_case_sets(ctx, Claimed()) == (CaseSet.TESTS, CaseSet.BENCHMARKS, CaseSet.PRIVATE)  # type: ignore[arg-type]


def test_back_off_doubles_and_is_capped(ctx) -> None:
    ctx.settings.retry_backoff_s, ctx.settings.retry_backoff_max_s = 30, 100
    assert [retry_delay_s(ctx, a) for a in (1, 2, 3, 4)] == [30, 60, 100, 100]


def test_a_database_that_stays_down_gives_the_run_back(ctx, submit, monkeypatch) -> None:
    created = submit()
    monkeypatch.setattr(tasks, "STORE_RETRY_WINDOW_S", 0.0)

    def down(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise OperationalError("SELECT 1", {}, ConnectionRefusedError("connection refused"))

    monkeypatch.setattr(tasks, "claim_run", down)
    with pytest.raises(StoreUnavailableError) as caught:
        judge_run(ctx, created.run_id)
    assert caught.value.held is False


def test_a_judged_result_waits_out_an_outage_while_the_claim_lasts(ctx, submit, fake_judge, monkeypatch) -> None:
    """The store retry window is short for claims, but a judged result is kept until the claim's
    deadline: giving the run back would throw it away (and end the last attempt as IE)."""
    fake_judge(Verdict.AC)
    created = submit()
    monkeypatch.setattr(tasks, "STORE_RETRY_WINDOW_S", 0.0)
    real_finish, failures = tasks.finish_run, [0]

    def flaky_finish(*args, **kwargs):  # type: ignore[no-untyped-def]
        if failures[0] < 2:
            failures[0] += 1
            raise OperationalError("UPDATE runs", {}, ConnectionRefusedError("connection refused"))
        return real_finish(*args, **kwargs)

    monkeypatch.setattr(tasks, "finish_run", flaky_finish)
    outcome = judge_run(ctx, created.run_id)
    assert outcome.outcome is Outcome.JUDGED and outcome.verdict is Verdict.AC and failures[0] == 2
    run, _charged = run_of(ctx, created.submission_id)
    assert run.status is RunStatus.DONE and run.verdict is Verdict.AC


@pytest.mark.parametrize("mark", [True, False])
def test_a_run_that_stayed_disturbed_is_marked_unless_the_worker_says_not(ctx, submit, monkeypatch, mark) -> None:
    """judge/retime.py leaves `disturbed` in the run's conditions when the last timing attempt was disturbed; the
    worker stores it on the run (marked, out of a final ranking) unless `mark_disturbed_runs` is off."""
    from judge.conditions import RunConditions, stored_conditions
    from judge.results import JudgeResult

    def disturbed(request, *, host, reporter):  # type: ignore[no-untyped-def]
        return JudgeResult(verdict=Verdict.AC, problem=request.problem.slug, backend=request.backend,
                           message="ok", conditions=RunConditions(disturbed="load average 9.00 on 2 CPUs",
                                                                     retimed_attempts=3))

    monkeypatch.setattr(tasks, "judge_submission", disturbed)
    ctx.settings = ctx.settings.model_copy(update={"mark_disturbed_runs": mark})
    created = submit()
    judge_run(ctx, created.run_id)
    with ctx.db.session() as session:
        run = session.get(Run, created.run_id)
        assert run is not None
        assert run.disturbed == ("load average 9.00 on 2 CPUs" if mark else "")
        conditions = stored_conditions(run.worker_info)
        assert (conditions.disturbed_unmarked is not None) is not mark and conditions.timing_attempts == 3
