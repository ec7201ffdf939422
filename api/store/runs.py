"""The workers' side of the store: claim, progress, finish or fail a run; dispatch and reap
(runs past their deadline, and runs of workers that stopped heartbeating).

Every function commits and is safe to call twice: claims are compare-and-set
updates, a finished run ignores later results, and the dispatch helpers only
move runs that are still in the state the caller saw.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from api.store.enums import RunKind, RunStatus
from api.store.errors import NotFoundError
from api.store.judge_settings import run_settings
from api.store.models import Competition, Problem, Run, Submission, SubmissionFile, Worker
from api.store.reproduction import compare_reproduction
from api.store.results import write_cases
from api.store.standings_cache import recompute_standings
from api.store.types import utcnow
from api.store.views import ClaimedRun, RunDispatch, RunHolder, StuckRun
from judge.backends import Stage
from judge.conditions import CONDITIONS_KEY
from judge.results import JudgeResult
from judge.verdict import Verdict

DEFAULT_DEADLINE_S = 30 * 60


def claim_run(
    session: Session,
    *,
    run_id: int,
    worker: str,
    deadline_s: float = DEFAULT_DEADLINE_S,
    take_over: bool = False,
    now: datetime | None = None,
) -> ClaimedRun | None:
    """Compare-and-set the run to running for `worker`; None when another worker has it or it is done.

    A run still pending or queued can be claimed, and so can a running one past its
    deadline. `take_over=True` also claims a running one before its deadline: pass it
    when the broker redelivered the task because the worker holding it was lost.
    """
    now = now or utcnow()
    claimable = [Run.status.in_([RunStatus.PENDING, RunStatus.QUEUED]),
                 (Run.status == RunStatus.RUNNING) & (Run.deadline < now)]  # fmt: skip
    if take_over:
        claimable.append(Run.status == RunStatus.RUNNING)
    claimed = session.execute(
        update(Run)
        .where(Run.id == run_id, or_(*claimable))
        .values(status=RunStatus.RUNNING, claimed_by=worker, started_at=now, stage=None,
                deadline=now + timedelta(seconds=deadline_s), attempt=Run.attempt + 1)
        .execution_options(synchronize_session=False)
    )  # fmt: skip
    if claimed.rowcount != 1:
        session.rollback()
        return None
    run = session.get_one(Run, run_id, populate_existing=True)
    problem = session.get_one(Problem, run.submission.problem_id)
    sources = session.execute(
        select(SubmissionFile.name, SubmissionFile.content)
        .where(SubmissionFile.submission_id == run.submission_id)
        .order_by(SubmissionFile.position)
    ).all()
    competition = session.get(Competition, run.submission.competition_id)
    _sync_submission(session, run.submission)
    session.commit()
    return ClaimedRun(
        run_id=run.id, submission_id=run.submission_id, kind=run.kind, problem=problem.slug,
        problem_version=problem.version, definition_hash=problem.definition_hash, backend=run.submission.backend,
        sources=[(name, bytes(content)) for name, content in sources], case_sets=run.kind.case_sets,
        attempt=run.attempt, deadline=run.deadline or now, seed_salt=bytes.fromhex(run.seed_salt),
        mode=run.submission.mode, judge_settings=run_settings(competition.judge_settings if competition else None),
    )  # fmt: skip


def record_stage(session: Session, *, run_id: int, stage: Stage | str, at: datetime) -> None:
    """Note that a stage of the run started (for the report's timeline); ignored once the run is over."""
    run = _locked(session, run_id)
    if run.status in (RunStatus.DONE, RunStatus.FAILED):
        session.rollback()
        return
    name = Stage(stage).value
    run.stage = name
    run.stage_times = {**run.stage_times, name: at.isoformat()}
    session.commit()


def finish_run(
    session: Session,
    *,
    run_id: int,
    result: JudgeResult,
    worker_info: dict[str, str],
    now: datetime | None = None,
    update_standings: bool = True,
    holder: RunHolder | None = None,
) -> bool:
    """Store the verdict, case results and versions, update the standings (commits).

    Returns False, changing nothing, when the run was finished already (a
    redelivered task) or, with `holder`, when the run is no longer held under that
    claim. An IE result ends the run as failed and is not charged.
    `update_standings=False` is for bulk loads that call `recompute_standings` once at the end.
    """
    run = _locked(session, run_id)
    if run.status in (RunStatus.DONE, RunStatus.FAILED) or not _held(run, holder):
        session.rollback()
        return False
    now = now or utcnow()
    host = {**result.host, **worker_info}
    run.status = RunStatus.FAILED if result.verdict is Verdict.IE else RunStatus.DONE
    run.verdict = result.verdict
    run.message = result.message
    run.compile_log = result.compile_log
    run.kernel_output = result.kernel_output
    run.findings = [dataclasses.asdict(f) for f in result.findings]
    run.score = result.score
    run.isolation = result.isolation
    run.finished_at = now
    run.stage = Stage.DONE.value
    run.stage_times = {**run.stage_times, Stage.DONE.value: now.isoformat()}
    run.worker_host = host.get("host") or run.claimed_by
    run.device, run.driver, run.toolchain = host.get("device"), host.get("driver"), result.conditions.toolchain
    # The run's conditions (judge/conditions.py) and the profiles of the public timed cases
    # (judge/profiling/) ride in the same JSON column, beside the host's description.
    run.worker_info = {**host, CONDITIONS_KEY: result.conditions.to_dict(),
                       **({"profiles": result.profiles} if result.profiles else {})}
    run.disturbed = (result.conditions.disturbed or "")[:1000]
    write_cases(session, run_id=run.id, result=result)
    submission = run.submission
    if run.kind is RunKind.JUDGE:
        submission.charged = result.verdict.charged  # docs/rules.md: IE is never charged
    if run.kind.scored and result.verdict is not Verdict.IE and _newest_result(session, submission, run):
        submission.scored_run_id = run.id
        submission.verdict = result.verdict
        submission.score = result.score
        session.flush()
        if update_standings:
            recompute_standings(session, competition_id=submission.competition_id)
    elif run.kind is RunKind.REPRODUCTION:
        session.flush()
        compare_reproduction(session, run=run)
    _sync_submission(session, submission)
    session.commit()
    return True


def _newest_result(session: Session, submission: Submission, run: Run) -> bool:
    """Whether `run` is newer than the run whose result the submission shows now.

    A rejudge's run is newer than the run it replaces; should the older one finish last (a slow
    worker), its result is kept on the run but must not take the submission back.
    """
    session.refresh(submission, with_for_update=True)  # two finishing runs of one submission queue here
    return submission.scored_run_id is None or run.id > submission.scored_run_id


def fail_run(
    session: Session, *, run_id: int, reason: str, retry: bool, now: datetime | None = None,
    holder: RunHolder | None = None,
) -> bool:
    """An internal error: `retry` puts the run back to pending; a final one gives the quota back (commits).

    Returns False when the run had finished already or, with `holder`, is no longer held under
    that claim (a stale worker must not put back a run that another worker is judging).
    """
    run = _locked(session, run_id)
    if run.status in (RunStatus.DONE, RunStatus.FAILED) or not _held(run, holder):
        session.rollback()
        return False
    now = now or utcnow()
    run.claimed_by, run.deadline, run.stage = None, None, None
    if retry:
        # Still charged while it is retried: the team could otherwise submit past its quota
        # and its minimum interval in the meantime. A final IE gives the quota back.
        run.status, run.pending_since = RunStatus.PENDING, now
        run.message = f"retrying after an internal error: {reason}"
    else:
        run.status, run.verdict, run.finished_at = RunStatus.FAILED, Verdict.IE, now
        run.message = f"internal error: {reason}"
        if run.kind is RunKind.JUDGE:
            run.submission.charged = False
        elif run.kind is RunKind.REPRODUCTION:
            session.flush()
            compare_reproduction(session, run=run)  # an IE reproduction is flagged, as in finish_run
    _sync_submission(session, run.submission)
    session.commit()
    return True


def mark_queued(session: Session, *, run_id: int, now: datetime | None = None) -> bool:
    """Pending -> queued once the broker took the run; False if a worker got there first."""
    moved = session.execute(
        update(Run)
        .where(Run.id == run_id, Run.status == RunStatus.PENDING)
        .values(status=RunStatus.QUEUED, queued_at=now or utcnow())
        .returning(Run.submission_id)
        .execution_options(synchronize_session=False)
    ).first()
    if moved is not None:
        # Every upload comes through here: one statement instead of loading the submission.
        newer = select(Run.id).where(
            Run.submission_id == moved.submission_id, Run.kind != RunKind.REPRODUCTION, Run.id > run_id
        )
        session.execute(
            update(Submission)
            .where(Submission.id == moved.submission_id, ~newer.exists())
            .values(status=RunStatus.QUEUED)
            .execution_options(synchronize_session=False)
        )
    session.commit()
    return moved is not None


def runs_to_dispatch(
    session: Session, *, limit: int, now: datetime | None = None, min_age_s: float = 5.0
) -> list[RunDispatch]:
    """Pending runs the broker never took (it was down), oldest first.

    Runs younger than `min_age_s` are skipped: their upload is still enqueueing them.
    """
    cutoff = (now or utcnow()) - timedelta(seconds=min_age_s)
    rows = session.execute(
        select(Run.id, Run.queue, Run.priority)
        .where(Run.status == RunStatus.PENDING, Run.pending_since <= cutoff)
        .order_by(Run.priority, Run.pending_since, Run.id)
        .limit(limit)
    )
    return [RunDispatch(run_id, queue, priority) for run_id, queue, priority in rows]


def stuck_runs(session: Session, *, now: datetime, queued_before: datetime | None = None) -> list[StuckRun]:
    """Runs past their deadline; with `queued_before`, also runs queued before then (a lost broker)."""
    stuck = (Run.status == RunStatus.RUNNING) & (Run.deadline < now)
    if queued_before is not None:
        stuck = stuck | ((Run.status == RunStatus.QUEUED) & (Run.queued_at < queued_before))
    rows = session.scalars(select(Run).where(stuck).order_by(Run.id))
    return [StuckRun(r.id, r.queue, r.claimed_by, r.deadline, r.attempt, r.priority) for r in rows]


def requeue_run(session: Session, *, run_id: int, now: datetime | None = None) -> RunDispatch | None:
    """Put a stuck run back to pending and return where to enqueue it; None if it is no longer stuck."""
    now = now or utcnow()
    stuck = ((Run.status == RunStatus.RUNNING) & (Run.deadline < now)) | (Run.status == RunStatus.QUEUED)
    return _back_to_pending(session, run_id, [stuck], now)


def runs_of_lost_workers(session: Session, *, seen_before: datetime) -> list[StuckRun]:
    """Running runs whose worker has not heartbeated since `seen_before`: its host died or was cut off.

    Without this a run held by a killed host waits for its deadline (30 min). Only
    runs claimed by a registered worker count (a claimer that never heartbeats is
    left to the deadline), and only runs claimed before `seen_before`: a worker that
    claimed a run since then was alive whatever its heartbeat says.
    """
    rows = session.execute(
        select(Run.id, Run.queue, Run.claimed_by, Run.deadline, Run.attempt)
        .join(Worker, Worker.name == Run.claimed_by)
        .where(Run.status == RunStatus.RUNNING, Worker.last_seen_at < seen_before, Run.started_at < seen_before)
        .order_by(Run.id)
    )
    return [StuckRun(run_id, queue, claimed_by, deadline, attempt) for run_id, queue, claimed_by, deadline, attempt
            in rows]  # fmt: skip


def requeue_lost_run(
    session: Session, *, run_id: int, worker: str, seen_before: datetime | None = None, now: datetime | None = None
) -> RunDispatch | None:
    """Put back to pending a run that lost `worker` still holds; None when it does not (commits).

    A compare-and-set on the run's holder: if the run finished, failed or was taken
    over by another worker since it was listed, nothing changes. With `seen_before`,
    also only while `worker` has still not heartbeated since then (it may have come back).
    """
    now = now or utcnow()
    held: list[Any] = [Run.status == RunStatus.RUNNING, Run.claimed_by == worker]
    if seen_before is not None:
        held.append(select(Worker.id).where(Worker.name == worker, Worker.last_seen_at < seen_before).exists())
    return _back_to_pending(session, run_id, held, now)


def _back_to_pending(session: Session, run_id: int, conditions: list[Any], now: datetime) -> RunDispatch | None:
    """Compare-and-set the run back to pending while `conditions` hold; where to enqueue it, else None (commits)."""
    moved = session.execute(
        update(Run)
        .where(Run.id == run_id, *conditions)
        .values(status=RunStatus.PENDING, pending_since=now, claimed_by=None, deadline=None, stage=None)
        .execution_options(synchronize_session=False)
    )
    if moved.rowcount != 1:
        session.rollback()
        return None
    run = session.get_one(Run, run_id, populate_existing=True)
    _sync_submission(session, run.submission)
    session.commit()
    return RunDispatch(run.id, run.queue, run.priority)


def release_runs_of_earlier_process(
    session: Session, *, worker: str, started_before: datetime, now: datetime | None = None
) -> list[RunDispatch]:
    """Put back to pending the runs `worker` claimed before `started_before` (commits).

    For a worker starting under a name an earlier process used (a restart with a fixed
    `--name`): that process is gone, yet its runs look held by a worker that heartbeats
    again, so the reaper would leave them to their deadline. Results the earlier process
    might still send are refused by the holder check of `finish_run` and `fail_run`.
    """
    now = now or utcnow()
    ids = list(session.scalars(
        select(Run.id).where(Run.status == RunStatus.RUNNING, Run.claimed_by == worker, Run.started_at < started_before)
    ))  # fmt: skip
    released = []
    for run_id in ids:
        dispatch = requeue_lost_run(session, run_id=run_id, worker=worker, now=now)
        if dispatch is not None:
            released.append(dispatch)
    return released


def _held(run: Run, holder: RunHolder | None) -> bool:
    """Whether the run is still running under `holder`'s claim (always, without a holder)."""
    if holder is None:
        return True
    return run.status == RunStatus.RUNNING and run.claimed_by == holder.worker and run.attempt == holder.attempt


def _locked(session: Session, run_id: int) -> Run:
    query = select(Run).where(Run.id == run_id).execution_options(populate_existing=True)
    if session.get_bind().dialect.name != "sqlite":
        query = query.with_for_update(of=Run)
    run = session.scalars(query).first()
    if run is None:
        raise NotFoundError(f"no run {run_id}")
    return run


def _sync_submission(session: Session, submission: Submission) -> None:
    """The submission's status mirrors its newest judge or rejudge run."""
    status = session.scalar(
        select(Run.status)
        .where(Run.submission_id == submission.id, Run.kind != RunKind.REPRODUCTION)
        .order_by(Run.id.desc())
        .limit(1)
    )
    if status is not None:
        submission.status = status
