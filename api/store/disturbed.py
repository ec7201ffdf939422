"""Runs whose timing stayed disturbed through re-timing (judge/retime.py), for the organisers to re-time.

A ranked run among them is left out of the final ranking (standings.py) until a rejudge replaces it;
the board marks it. Listed newest first, the runs that count for their submission first.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from api.store.models import Problem, Run, Submission, Team
from judge.modes import RunMode


@dataclass(frozen=True)
class DisturbedRunView:
    run_id: int
    submission_id: int
    team_id: int
    team_name: str
    problem: str
    mode: RunMode
    # The run that ranks (or would rank) for its submission: marked on the board, left out of a final ranking.
    counts: bool
    reason: str
    finished_at: datetime | None


def list_disturbed(session: Session, *, competition_id: int) -> list[DisturbedRunView]:
    rows = session.execute(
        select(Run, Submission.scored_run_id, Submission.mode, Team.id, Team.name, Problem.slug)
        .join(Submission, Submission.id == Run.submission_id)
        .join(Team, Team.id == Submission.team_id)
        .join(Problem, Problem.id == Submission.problem_id)
        .where(Submission.competition_id == competition_id, Run.disturbed != "")
        .order_by(Run.id.desc())
    )
    views = [DisturbedRunView(run.id, run.submission_id, team_id, team_name, problem, RunMode(mode),
                              run.id == scored, run.disturbed, run.finished_at)
             for run, scored, mode, team_id, team_name, problem in rows]  # fmt: skip
    return sorted(views, key=lambda v: not v.counts)
