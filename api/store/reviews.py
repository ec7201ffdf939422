"""Reviewer marks (docs/rules.md, "Scoring": reviewers): one current review per reviewer and team, history kept."""

from __future__ import annotations

import math
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from api.store.errors import InvalidInputError, NotFoundError, PermissionDeniedError
from api.store.models import Competition, Review, Reviewer, Team
from api.store.standings_cache import bump_board_version, read_standings
from api.store.views import FinalistView, ReviewView
from judge.backends import CaseSet
from judge.scoring import reviewer_score


def put_review(
    session: Session, *, reviewer_id: int, team_id: int, marks: dict[str, float], comment: str, now: datetime
) -> ReviewView:
    """Replace the reviewer's current marks for a finalist team; the old ones stay as history (commits)."""
    reviewer = session.get(Reviewer, reviewer_id)
    team = session.get(Team, team_id)
    if reviewer is None or not reviewer.active:
        raise PermissionDeniedError("this reviewer was removed from the competition")
    if team is None or team.competition_id != reviewer.competition_id:
        raise NotFoundError(f"no team {team_id} in your competition")
    if not team.finalist:
        raise InvalidInputError(f"team {team.name!r} is not a finalist; only finalists are reviewed")
    rubric = session.get_one(Competition, team.competition_id).rubric
    total = _check_marks(marks, rubric)
    session.execute(
        update(Review)
        .where(Review.reviewer_id == reviewer_id, Review.team_id == team_id, Review.is_current)
        .values(is_current=False)
    )
    row = Review(competition_id=team.competition_id, reviewer_id=reviewer_id, team_id=team_id,
                 marks={k: float(v) for k, v in marks.items()}, total=total, comment=comment.strip(),
                 created_at=now, is_current=True)  # fmt: skip
    session.add(row)
    bump_board_version(session, competition_id=team.competition_id)  # the final ranking changed
    session.commit()
    return _view(row, reviewer.name, team.name)


def reviewer_marks(session: Session, *, reviewer_id: int) -> list[ReviewView]:
    """The reviewer's current marks, one per team."""
    return list_reviews(session, reviewer_id=reviewer_id)


def list_reviews(
    session: Session,
    *,
    competition_id: int | None = None,
    reviewer_id: int | None = None,
    history: bool = False,
) -> list[ReviewView]:
    """Reviews (current only unless `history`), oldest first."""
    query = (
        select(Review, Reviewer.name, Team.name)
        .join(Reviewer, Reviewer.id == Review.reviewer_id)
        .join(Team, Team.id == Review.team_id)
        .order_by(Review.id)
    )
    if competition_id is not None:
        query = query.where(Review.competition_id == competition_id)
    if reviewer_id is not None:
        query = query.where(Review.reviewer_id == reviewer_id)
    if not history:
        query = query.where(Review.is_current)
    return [_view(row, reviewer, team) for row, reviewer, team in session.execute(query)]


def list_finalists(session: Session, *, competition_id: int) -> list[FinalistView]:
    """Finalist teams with the submissions that rank on the private set, for reviewers to read."""
    teams = session.execute(
        select(Team.id, Team.name).where(Team.competition_id == competition_id, Team.finalist).order_by(Team.name)
    ).all()
    standings = {s.team_id: s for s in read_standings(session, competition_id=competition_id,
                                                        case_set=CaseSet.PRIVATE)}  # fmt: skip
    found = []
    for team_id, name in teams:
        standing = standings.get(team_id)
        found.append(FinalistView(
            team_id, name,
            {slug: e.submission_id for slug, e in standing.entries.items()} if standing else {},
            standing.score if standing else None,
        ))  # fmt: skip
    return found


def reviewer_scores(session: Session, *, competition_id: int) -> dict[int, tuple[float | None, int]]:
    """Team -> (reviewer score, number of reviewers), from active reviewers' current marks."""
    totals: dict[int, list[float]] = {}
    rows = session.execute(
        select(Review.team_id, Review.total)
        .join(Reviewer, Reviewer.id == Review.reviewer_id)
        .where(Review.competition_id == competition_id, Review.is_current, Reviewer.active)
    )
    for team_id, total in rows:
        totals.setdefault(team_id, []).append(total)
    return {team_id: (reviewer_score(values), len(values)) for team_id, values in totals.items()}


def _check_marks(marks: dict[str, float], rubric: dict[str, float]) -> float:
    missing = sorted(set(rubric) - set(marks))
    extra = sorted(set(marks) - set(rubric))
    if missing or extra:
        raise InvalidInputError(
            f"marks must cover exactly the rubric ({', '.join(f'{k} 0-{v:g}' for k, v in rubric.items())}); "
            + "; ".join(p for p in (f"missing {', '.join(missing)}" if missing else "",
                                    f"unknown {', '.join(extra)}" if extra else "") if p)
        )  # fmt: skip
    for key, value in marks.items():
        if not isinstance(value, int | float) or not math.isfinite(value) or not 0 <= value <= rubric[key]:
            raise InvalidInputError(f"mark {key!r} must be between 0 and {rubric[key]:g}, got {value!r}")
    return float(sum(marks.values()))


def _view(row: Review, reviewer: str, team: str) -> ReviewView:
    return ReviewView(row.id, row.reviewer_id, reviewer, row.team_id, team, dict(row.marks), row.total,
                      row.comment, row.created_at, row.is_current)  # fmt: skip
