"""Reads only the HTML pages need: runs in flight, a run's worker record, a submission's competition.

Everything else the pages show comes from the same store functions as the JSON
API; these two have no API counterpart.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from api.store.enums import IN_FLIGHT, RunKind, RunStatus
from api.store.errors import NotFoundError
from api.store.models import Competition, Problem, Run, Submission, Team
from judge.backends import Backend


@dataclass(frozen=True)
class FlightRun:
    """A run waiting for or held by a worker, for the organisers' page."""

    run_id: int
    submission_id: int
    team_name: str
    problem: str
    backend: Backend
    kind: RunKind
    status: RunStatus
    queue: str
    stage: str | None  # the stage now running (judge.backends.Stage), None before a worker has it
    attempt: int
    claimed_by: str | None
    created_at: datetime
    started_at: datetime | None
    deadline: datetime | None


def runs_in_flight(session: Session, *, competition_id: int | None = None, limit: int = 200) -> list[FlightRun]:
    """Pending, queued and running runs, oldest first."""
    query = (
        select(Run, Team.name, Problem.slug, Submission.backend)
        .join(Submission, Submission.id == Run.submission_id)
        .join(Team, Team.id == Submission.team_id)
        .join(Problem, Problem.id == Submission.problem_id)
        .where(Run.status.in_(IN_FLIGHT))
        .order_by(Run.created_at, Run.id)
        .limit(limit)
    )
    if competition_id is not None:
        query = query.where(Submission.competition_id == competition_id)
    return [
        FlightRun(run.id, run.submission_id, team, problem, backend, run.kind, run.status, run.queue, run.stage,
                  run.attempt, run.claimed_by, run.created_at, run.started_at, run.deadline)
        for run, team, problem, backend in session.execute(query)
    ]  # fmt: skip


def run_host_info(session: Session, *, run_id: int) -> dict[str, Any]:
    """What the worker recorded about its host for a run (device, versions, peak rates when known)."""
    info = session.scalar(select(Run.worker_info).where(Run.id == run_id))
    return dict(info or {})


def submission_competition(session: Session, *, submission_id: int) -> str:
    """The slug of the competition a submission belongs to; NotFoundError when there is no such submission."""
    slug = session.scalar(
        select(Competition.slug)
        .join(Submission, Submission.competition_id == Competition.id)
        .where(Submission.id == submission_id)
    )
    if slug is None:
        raise NotFoundError(f"no submission {submission_id}")
    return slug
