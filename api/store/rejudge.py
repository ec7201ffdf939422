"""Organiser actions that create runs: rejudges and reproduction runs (audited)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from api.store.audit import record_audit
from api.store.competitions import competition_row
from api.store.enums import RunKind, RunStatus
from api.store.errors import InvalidInputError, NotFoundError
from api.store.models import Problem, Run, Submission
from api.store.modes import QueuePriority
from api.store.standings_cache import read_standings
from api.store.submissions import new_seed_salt
from api.store.views import Principal, RunDispatch
from judge.backends import Backend, CaseSet

QueueOf = Callable[[Backend], str]


def rejudge(
    session: Session,
    *,
    competition: str,
    actor: Principal | None,
    now: datetime,
    queue_of: QueueOf,
    submission_id: int | None = None,
    team_id: int | None = None,
    problem: str | None = None,
) -> list[RunDispatch]:
    """New rejudge runs for one submission, a team's, or a problem's (exactly one selector; commits).

    The earlier result keeps counting until the rejudge finishes.
    """
    if sum(x is not None for x in (submission_id, team_id, problem)) != 1:
        raise InvalidInputError("rejudge one submission, one team or one problem")
    comp = competition_row(session, competition)
    query = select(Submission).where(Submission.competition_id == comp.id).order_by(Submission.id)
    if submission_id is not None:
        query = query.where(Submission.id == submission_id)
    elif team_id is not None:
        query = query.where(Submission.team_id == team_id)
    else:
        query = query.join(Problem, Problem.id == Submission.problem_id).where(Problem.slug == problem)
    submissions = list(session.scalars(query))
    if not submissions:
        raise NotFoundError(f"nothing to rejudge in competition {competition!r} for that selection")
    runs = []
    for submission in submissions:
        run = Run(submission_id=submission.id, kind=RunKind.REJUDGE, status=RunStatus.PENDING,
                  queue=queue_of(submission.backend), priority=int(QueuePriority.ORGANISER), created_at=now,
                  pending_since=now, seed_salt=new_seed_salt())  # fmt: skip
        session.add(run)
        submission.status = RunStatus.PENDING
        runs.append(run)
    session.flush()
    record_audit(session, actor=actor, action="rejudge", now=now, competition_id=comp.id,
                 target=_target(submission_id, team_id, problem),
                 details={"runs": [r.id for r in runs]})  # fmt: skip
    session.commit()
    return [RunDispatch(r.id, r.queue, r.priority) for r in runs]


def start_reproductions(
    session: Session, *, competition: str, top_n: int, actor: Principal | None, now: datetime, queue_of: QueueOf
) -> list[RunDispatch]:
    """Reproduction runs for the ranked entries of the top `top_n` teams on the private set (commits)."""
    if top_n < 1:
        raise InvalidInputError("top_n must be at least 1")
    comp = competition_row(session, competition)
    standings = [s for s in read_standings(session, competition_id=comp.id, case_set=CaseSet.PRIVATE) if s.rank]
    runs = []
    for standing in standings[:top_n]:
        for entry in standing.entries.values():
            run = Run(submission_id=entry.submission_id, kind=RunKind.REPRODUCTION, status=RunStatus.PENDING,
                      queue=queue_of(entry.backend), priority=int(QueuePriority.ORGANISER), created_at=now,
                      pending_since=now, reproduction_of=entry.run_id, seed_salt=new_seed_salt())  # fmt: skip
            session.add(run)
            runs.append(run)
    if not runs:
        raise NotFoundError(f"competition {competition!r} has no ranked private results to reproduce")
    session.flush()
    record_audit(session, actor=actor, action="reproduction.start", now=now, competition_id=comp.id,
                 target=f"top {top_n}", details={"runs": [r.id for r in runs]})  # fmt: skip
    session.commit()
    return [RunDispatch(r.id, r.queue, r.priority) for r in runs]


def _target(submission_id: int | None, team_id: int | None, problem: str | None) -> str:
    if submission_id is not None:
        return f"submission {submission_id}"
    if team_id is not None:
        return f"team {team_id}"
    return f"problem {problem}"
