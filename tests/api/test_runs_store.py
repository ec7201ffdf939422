"""The workers' store functions: compare-and-set claims, idempotent finishes, IE, dispatch and reaping."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from api.settings import Settings
from api.store.db import Database, Session
from api.store.enums import RunStatus
from api.store.models import Run
from api.store.runs import (
    claim_run,
    fail_run,
    finish_run,
    mark_queued,
    record_stage,
    release_runs_of_earlier_process,
    requeue_lost_run,
    requeue_run,
    runs_of_lost_workers,
    runs_to_dispatch,
    stuck_runs,
)
from api.store.stats import row_counts
from api.store.submissions import create_submission, submission_detail, team_quota
from api.store.views import NewSubmission, RunDispatch, RunHolder
from api.store.workers import list_workers, register_worker, worker_heartbeat
from judge.backends import Backend, CaseSet, Stage
from judge.verdict import Verdict
from tests.api.conftest import Clock, Contest
from tests.api.helpers import KERNEL, result
from tests.api.judging import open_quotas


def _submit(session: Session, contest: Contest, clock: Clock, team: str = "alpha") -> NewSubmission:
    return create_submission(session, team_id=contest.team_ids[team], problem="add_mul_relu", backend=Backend.CPU,
                             files=[("kernel.cpp", KERNEL)], queue="judge.cpu", now=clock.now)  # fmt: skip


def test_claim_is_compare_and_set(session: Session, contest: Contest, clock: Clock) -> None:
    created = _submit(session, contest, clock)
    claimed = claim_run(session, run_id=created.run_id, worker="w1", now=clock.now, deadline_s=600)
    assert claimed is not None
    assert claimed.problem == "add_mul_relu" and claimed.backend is Backend.CPU and claimed.attempt == 1
    assert claimed.sources == [("kernel.cpp", KERNEL)] and claimed.deadline == clock.now + timedelta(seconds=600)
    assert claimed.case_sets == (CaseSet.TESTS, CaseSet.BENCHMARKS, CaseSet.PRIVATE) and len(claimed.seed_salt) == 16
    assert claim_run(session, run_id=created.run_id, worker="w2", now=clock.now) is None
    assert claim_run(session, run_id=created.run_id, worker="w1", now=clock.now) is None  # even the same worker
    # A redelivered task whose worker was lost may take the run over.
    taken = claim_run(session, run_id=created.run_id, worker="w3", now=clock.now, take_over=True)
    assert taken is not None and taken.attempt == 2
    detail = submission_detail(session, submission_id=created.submission_id)
    assert detail.runs[0].status is RunStatus.RUNNING and detail.submission.status is RunStatus.RUNNING


def test_concurrent_claims_have_one_winner(database: Database, contest: Contest, clock: Clock) -> None:
    with database.session() as session:
        run_id = _submit(session, contest, clock).run_id
    winners: list[str] = []
    barrier = threading.Barrier(4)

    def claim(name: str) -> None:
        with database.session() as session:
            barrier.wait()
            if claim_run(session, run_id=run_id, worker=name, now=clock.now) is not None:
                winners.append(name)

    threads = [threading.Thread(target=claim, args=(f"w{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(winners) == 1


def test_finish_is_idempotent(session: Session, contest: Contest, clock: Clock) -> None:
    created = _submit(session, contest, clock)
    claim_run(session, run_id=created.run_id, worker="w1", now=clock.now)
    record_stage(session, run_id=created.run_id, stage=Stage.BUILDING, at=clock.now)
    judged = result(benchmarks={"b1": 0.8, "b2": 0.9}, private={"p1": 0.85})
    assert finish_run(session, run_id=created.run_id, result=judged, worker_info={"device": "cpu"}, now=clock.now)
    counts = row_counts(session)
    again = result(verdict=Verdict.WA, benchmarks={"b1": 5.0})
    assert not finish_run(session, run_id=created.run_id, result=again, worker_info={}, now=clock.now)
    assert row_counts(session) == counts
    run = submission_detail(session, submission_id=created.submission_id).runs[0]
    assert run.verdict is Verdict.AC and run.status is RunStatus.DONE and len(run.cases) == 4
    assert set(run.stage_times) == {"building", "done"} and run.toolchain == "g++ 12" and run.worker_host == "box"
    assert claim_run(session, run_id=created.run_id, worker="w2", now=clock.now) is None
    record_stage(session, run_id=created.run_id, stage=Stage.TIMING, at=clock.now)  # ignored once over
    assert "timing" not in submission_detail(session, submission_id=created.submission_id).runs[0].stage_times


def test_internal_error_gives_the_quota_back(session: Session, contest: Contest, clock: Clock) -> None:
    team = contest.team_ids["alpha"]
    created = _submit(session, contest, clock)
    assert team_quota(session, team_id=team, now=clock.now).used_24h == 1
    claim_run(session, run_id=created.run_id, worker="w1", now=clock.now)
    assert fail_run(session, run_id=created.run_id, reason="worker lost its toolchain", retry=True, now=clock.now)
    quota = team_quota(session, team_id=team, now=clock.now)
    # Back to pending, waiting for its retry: still charged, or the team could submit past its
    # quota meanwhile; only a final IE gives the quota back.
    assert quota.used_24h == 1 and quota.in_flight == 1
    assert runs_to_dispatch(session, limit=10, now=clock.now + timedelta(seconds=10))[0].run_id == created.run_id
    again = claim_run(session, run_id=created.run_id, worker="w2", now=clock.now)
    assert again is not None and again.attempt == 2
    assert fail_run(session, run_id=created.run_id, reason="still broken", retry=False, now=clock.now)
    assert not fail_run(session, run_id=created.run_id, reason="twice", retry=False, now=clock.now)
    run = submission_detail(session, submission_id=created.submission_id).runs[0]
    assert run.status is RunStatus.FAILED and run.verdict is Verdict.IE and "still broken" in run.message
    quota = team_quota(session, team_id=team, now=clock.now)
    assert quota.in_flight == 0 and quota.used_24h == 0


def test_an_ie_result_is_not_charged_and_does_not_rank(session: Session, contest: Contest, clock: Clock) -> None:
    created = _submit(session, contest, clock)
    claim_run(session, run_id=created.run_id, worker="w1", now=clock.now)
    finish_run(session, run_id=created.run_id, result=result(verdict=Verdict.IE), worker_info={}, now=clock.now)
    assert team_quota(session, team_id=contest.team_ids["alpha"], now=clock.now).used_24h == 0
    detail = submission_detail(session, submission_id=created.submission_id)
    assert detail.runs[0].status is RunStatus.FAILED and detail.scored_run_id is None


def test_dispatch_bookkeeping(session: Session, contest: Contest, clock: Clock) -> None:
    created = _submit(session, contest, clock)
    assert runs_to_dispatch(session, limit=10, now=clock.now) == []  # still on its way (grace period)
    later = clock.now + timedelta(seconds=30)
    assert [r.run_id for r in runs_to_dispatch(session, limit=10, now=later)] == [created.run_id]
    assert mark_queued(session, run_id=created.run_id, now=later)
    assert not mark_queued(session, run_id=created.run_id, now=later)
    assert runs_to_dispatch(session, limit=10, now=later) == []


def test_stuck_runs_are_requeued(session: Session, contest: Contest, clock: Clock) -> None:
    created = _submit(session, contest, clock)
    claim_run(session, run_id=created.run_id, worker="w1", now=clock.now, deadline_s=60)
    assert stuck_runs(session, now=clock.now + timedelta(seconds=30)) == []
    late = clock.now + timedelta(seconds=61)
    stuck = stuck_runs(session, now=late)
    assert [(s.run_id, s.claimed_by) for s in stuck] == [(created.run_id, "w1")]
    dispatch = requeue_run(session, run_id=created.run_id, now=late)
    assert dispatch is not None and dispatch.queue == "judge.cpu"
    assert requeue_run(session, run_id=created.run_id, now=late) is None  # pending now: not stuck
    assert claim_run(session, run_id=created.run_id, worker="w2", now=late) is not None
    # A run past its deadline can also be claimed directly by a redelivered task.
    much_later = late + timedelta(hours=2)
    assert claim_run(session, run_id=created.run_id, worker="w3", now=much_later) is not None


def test_queued_runs_lost_by_the_broker(session: Session, contest: Contest, clock: Clock) -> None:
    created = _submit(session, contest, clock)
    mark_queued(session, run_id=created.run_id, now=clock.now)
    assert stuck_runs(session, now=clock.now) == []
    lost = stuck_runs(session, now=clock.now, queued_before=clock.now + timedelta(seconds=1))
    assert [s.run_id for s in lost] == [created.run_id]


def test_runs_of_a_lost_worker_are_requeued_before_their_deadline(session: Session, contest: Contest,
                                                                   clock: Clock) -> None:  # fmt: skip
    open_quotas(session, contest, clock)
    start = clock.now
    for name in ("dead", "alive"):
        register_worker(session, name=name, queue="judge.cpu", info={}, now=start)
    dead, alive, stranger = (_submit(session, contest, clock, team) for team in ("alpha", "bravo", "charlie"))
    for created, worker in ((dead, "dead"), (alive, "alive"), (stranger, "never-registered")):
        claim_run(session, run_id=created.run_id, worker=worker, now=start)  # deadline: 30 min on
    later = start + timedelta(seconds=40)
    worker_heartbeat(session, name="alive", now=later - timedelta(seconds=5))
    seen_before = later - timedelta(seconds=30)
    lost = runs_of_lost_workers(session, seen_before=seen_before)
    assert [(r.run_id, r.claimed_by, r.attempt) for r in lost] == [(dead.run_id, "dead", 1)]
    assert stuck_runs(session, now=later) == []  # the deadline alone would wait 30 minutes
    assert runs_of_lost_workers(session, seen_before=start) == []  # a heartbeat at `start` is not before it

    # A compare-and-set on the holder: only the lost worker's own run moves, once.
    assert requeue_lost_run(session, run_id=dead.run_id, worker="alive", now=later) is None
    assert requeue_lost_run(session, run_id=alive.run_id, worker="alive", seen_before=seen_before, now=later) is None
    moved = requeue_lost_run(session, run_id=dead.run_id, worker="dead", seen_before=seen_before, now=later)
    assert moved == RunDispatch(dead.run_id, "judge.cpu")
    assert requeue_lost_run(session, run_id=dead.run_id, worker="dead", seen_before=seen_before, now=later) is None
    detail = submission_detail(session, submission_id=dead.submission_id)
    assert detail.runs[0].status is RunStatus.PENDING and detail.submission.status is RunStatus.PENDING
    assert runs_of_lost_workers(session, seen_before=seen_before) == []
    again = claim_run(session, run_id=dead.run_id, worker="alive", now=later)
    assert again is not None and again.attempt == 2  # attempts count, so a host-killing kernel ends as IE


def test_a_lost_workers_run_is_left_alone_once_taken_over_or_the_worker_is_back(
    session: Session, contest: Contest, clock: Clock
) -> None:
    open_quotas(session, contest, clock)
    start = clock.now
    for name in ("flaky", "other"):
        register_worker(session, name=name, queue="judge.cpu", info={}, now=start)
    first, second, third = (_submit(session, contest, clock, team) for team in ("alpha", "bravo", "charlie"))
    claim_run(session, run_id=first.run_id, worker="flaky", now=start)
    claim_run(session, run_id=second.run_id, worker="flaky", now=start)
    claim_run(session, run_id=third.run_id, worker="flaky", now=start + timedelta(seconds=35))
    seen_before = start + timedelta(seconds=30)
    # The third was claimed after `seen_before`: its worker was alive then, whatever its heartbeat says.
    lost = runs_of_lost_workers(session, seen_before=seen_before)
    assert [r.run_id for r in lost] == [first.run_id, second.run_id]

    # Between the listing and the requeue, a redelivered task took the first over...
    claim_run(session, run_id=first.run_id, worker="other", now=start + timedelta(seconds=40), take_over=True)
    assert requeue_lost_run(session, run_id=first.run_id, worker="flaky", seen_before=seen_before) is None
    # ... and the worker came back before its second run was moved.
    worker_heartbeat(session, name="flaky", now=start + timedelta(seconds=41))
    assert requeue_lost_run(session, run_id=second.run_id, worker="flaky", seen_before=seen_before) is None
    assert runs_of_lost_workers(session, seen_before=seen_before) == []
    assert {r.status for r in submission_detail(session, submission_id=second.submission_id).runs} == {
        RunStatus.RUNNING}  # fmt: skip

    # Finished runs are never listed, however silent their worker.
    finish_run(session, run_id=second.run_id, result=result(benchmarks={"b1": 1.0}), worker_info={},
               now=start + timedelta(seconds=50))  # fmt: skip
    much_later = start + timedelta(hours=1)
    assert [r.run_id for r in runs_of_lost_workers(session, seen_before=much_later)] == [first.run_id, third.run_id]


def test_two_reapers_requeue_a_lost_run_once(database: Database, contest: Contest, clock: Clock) -> None:
    with database.session() as session:
        register_worker(session, name="dead", queue="judge.cpu", info={}, now=clock.now)
        run_id = _submit(session, contest, clock).run_id
        claim_run(session, run_id=run_id, worker="dead", now=clock.now)
    seen_before = clock.now + timedelta(seconds=60)
    moved: list[RunDispatch] = []
    barrier = threading.Barrier(4)

    def reap() -> None:
        with database.session() as session:
            barrier.wait()
            dispatch = requeue_lost_run(session, run_id=run_id, worker="dead", seen_before=seen_before,
                                        now=seen_before)  # fmt: skip
            if dispatch is not None:
                moved.append(dispatch)

    threads = [threading.Thread(target=reap) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert moved == [RunDispatch(run_id, "judge.cpu")]


def test_workers_register_and_beat(session: Session, clock: Clock) -> None:
    info = {"host": "box", "device": "Xeon", "toolchain": "g++ 12.2", "driver": ""}
    register_worker(session, name="box:1", queue="judge.cpu", info=info, now=clock.now)
    worker_heartbeat(session, name="box:1", now=clock.now + timedelta(seconds=30))
    (seen,) = list_workers(session)
    assert seen.info == info and seen.last_seen_at == clock.now + timedelta(seconds=30)
    register_worker(session, name="box:1", queue="judge.cpu", info={**info, "toolchain": "g++ 13"}, now=clock.now)
    assert list_workers(session)[0].info["toolchain"] == "g++ 13"
    with pytest.raises(Exception, match="never registered"):
        worker_heartbeat(session, name="ghost")


def test_settings_deadline_default_matches(settings: Settings) -> None:
    assert settings.run_deadline_s == 30 * 60


def test_a_stale_claim_cannot_finish_or_fail_the_run(session: Session, contest: Contest, clock: Clock) -> None:
    """w1 is cut off, its run goes to w2; w1's late result, or its IE retry, must not touch w2's run."""
    created = _submit(session, contest, clock)
    first = claim_run(session, run_id=created.run_id, worker="w1", now=clock.now, deadline_s=60)
    assert first is not None
    clock.advance(120)
    assert requeue_run(session, run_id=created.run_id, now=clock.now) is not None
    second = claim_run(session, run_id=created.run_id, worker="w2", now=clock.now)
    assert second is not None and second.attempt == 2
    stale, current = RunHolder("w1", first.attempt), RunHolder("w2", second.attempt)
    assert not fail_run(session, run_id=created.run_id, reason="w1 broke", retry=True, now=clock.now, holder=stale)
    assert not finish_run(session, run_id=created.run_id, result=result(verdict=Verdict.WA), worker_info={},
                          now=clock.now, holder=stale)  # fmt: skip
    run = submission_detail(session, submission_id=created.submission_id).runs[0]
    assert run.status is RunStatus.RUNNING and run.verdict is None and run.attempt == 2
    assert session.get_one(Run, created.run_id).claimed_by == "w2"
    assert finish_run(session, run_id=created.run_id, result=result(benchmarks={"b1": 0.9}), worker_info={},
                      now=clock.now, holder=current)  # fmt: skip
    assert submission_detail(session, submission_id=created.submission_id).runs[0].verdict is Verdict.AC


def test_a_restarted_worker_releases_what_its_earlier_process_held(
    session: Session, contest: Contest, clock: Clock
) -> None:
    mine = _submit(session, contest, clock)
    theirs = _submit(session, contest, clock, team="bravo")
    held = claim_run(session, run_id=mine.run_id, worker="w1", now=clock.now)
    assert held is not None and claim_run(session, run_id=theirs.run_id, worker="w2", now=clock.now) is not None
    clock.advance(5)
    released = release_runs_of_earlier_process(session, worker="w1", started_before=clock.now, now=clock.now)
    assert released == [RunDispatch(mine.run_id, "judge.cpu")]
    assert submission_detail(session, submission_id=mine.submission_id).runs[0].status is RunStatus.PENDING
    assert submission_detail(session, submission_id=theirs.submission_id).runs[0].status is RunStatus.RUNNING
    again = claim_run(session, run_id=mine.run_id, worker="w1", now=clock.now)  # the new process, same name
    assert again is not None and again.attempt == 2
    # The new process's own run is not released by a second start check, and the old claim is dead.
    assert release_runs_of_earlier_process(session, worker="w1", started_before=clock.now, now=clock.now) == []
    assert not finish_run(session, run_id=mine.run_id, result=result(), worker_info={}, now=clock.now,
                          holder=RunHolder("w1", held.attempt))  # fmt: skip
    assert finish_run(session, run_id=mine.run_id, result=result(), worker_info={}, now=clock.now,
                      holder=RunHolder("w1", again.attempt))  # fmt: skip


def test_an_older_run_finishing_after_its_rejudge_does_not_take_the_submission_back(
    session: Session, contest: Contest, clock: Clock
) -> None:
    from api.store.rejudge import rejudge

    created = _submit(session, contest, clock)
    judge = claim_run(session, run_id=created.run_id, worker="slow", now=clock.now)
    redo = rejudge(session, competition=contest.slug, actor=None, now=clock.now, queue_of=lambda _b: "judge.cpu",
                   submission_id=created.submission_id)  # fmt: skip
    again = claim_run(session, run_id=redo[0].run_id, worker="fast", now=clock.now)
    assert judge is not None and again is not None
    assert finish_run(session, run_id=again.run_id, result=result(verdict=Verdict.WA, failed=("t1",)),
                      worker_info={}, now=clock.now, holder=RunHolder("fast", again.attempt))  # fmt: skip
    # The older run still finishes and keeps its own result, but the rejudge's stands.
    assert finish_run(session, run_id=judge.run_id, result=result(benchmarks={"b1": 1.0}), worker_info={},
                      now=clock.now, holder=RunHolder("slow", judge.attempt))  # fmt: skip
    detail = submission_detail(session, submission_id=created.submission_id)
    assert detail.scored_run_id == again.run_id and detail.submission.verdict is Verdict.WA
    assert {r.id: r.verdict for r in detail.runs}[judge.run_id] is Verdict.AC


def test_a_reproduction_that_ends_ie_is_flagged(session: Session, contest: Contest, clock: Clock) -> None:
    from api.store.enums import RunKind
    from api.store.types import utcnow

    created = _submit(session, contest, clock)
    reproduction = Run(submission_id=created.submission_id, kind=RunKind.REPRODUCTION, status=RunStatus.PENDING,
                       queue="judge.cpu", created_at=utcnow(), pending_since=utcnow(),
                       reproduction_of=created.run_id, seed_salt="00" * 16)  # fmt: skip
    session.add(reproduction)
    session.commit()
    claimed = claim_run(session, run_id=reproduction.id, worker="w", now=clock.now)
    assert claimed is not None
    assert fail_run(session, run_id=reproduction.id, reason="started 3 times and never finished", retry=False,
                    now=clock.now, holder=RunHolder("w", claimed.attempt))  # fmt: skip
    run = session.get_one(Run, reproduction.id, populate_existing=True)
    assert run.verdict is Verdict.IE and run.flagged and run.flag_reason
