"""Teams and reviewers of a competition, each created with its first token (shown once)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from api.store.audit import record_audit
from api.store.competitions import competition_row
from api.store.enums import Role
from api.store.errors import ConflictError, InvalidInputError, NotFoundError
from api.store.models import Review, Reviewer, Team
from api.store.standings_cache import bump_board_version
from api.store.tokens import add_token, revoke_tokens_of
from api.store.views import IssuedToken, Principal, ReviewerView, TeamView


def create_team(
    session: Session, *, competition: str, name: str, pepper: bytes, actor: Principal | None, now: datetime
) -> tuple[TeamView, IssuedToken]:
    """A team and its first token (audited; commits)."""
    comp = competition_row(session, competition)
    name = _clean_name(name)
    if session.scalars(select(Team.id).where(Team.competition_id == comp.id, Team.name == name)).first():
        raise ConflictError(f"competition {competition!r} has a team {name!r} already")
    team = Team(competition_id=comp.id, name=name, finalist=False, created_at=now)
    session.add(team)
    session.flush()
    issued = add_token(session, pepper=pepper, role=Role.TEAM, now=now, team_id=team.id, label=name)
    record_audit(
        session,
        actor=actor,
        action="team.create",
        now=now,
        competition_id=comp.id,
        target=name,
        details={"team_id": team.id, "token": issued.prefix},
    )
    session.commit()
    return _team(team), issued


def list_teams(session: Session, *, competition: str) -> list[TeamView]:
    comp = competition_row(session, competition)
    rows = session.scalars(select(Team).where(Team.competition_id == comp.id).order_by(Team.name))
    return [_team(row) for row in rows]


def get_team(session: Session, *, team_id: int) -> TeamView:
    row = session.get(Team, team_id)
    if row is None:
        raise NotFoundError(f"no team {team_id}")
    return _team(row)


def set_finalists(
    session: Session, *, competition: str, team_ids: list[int], actor: Principal | None, now: datetime
) -> list[TeamView]:
    """Mark exactly these teams as the finalists reviewers mark (audited; commits)."""
    comp = competition_row(session, competition)
    known = set(session.scalars(select(Team.id).where(Team.competition_id == comp.id)))
    strangers = sorted(set(team_ids) - known)
    if strangers:
        raise InvalidInputError(f"teams {strangers} are not in competition {competition!r}")
    session.execute(update(Team).where(Team.competition_id == comp.id).values(finalist=False))
    if team_ids:
        session.execute(update(Team).where(Team.id.in_(team_ids)).values(finalist=True))
    record_audit(
        session,
        actor=actor,
        action="competition.finalists",
        now=now,
        competition_id=comp.id,
        target=competition,
        details={"team_ids": sorted(team_ids)},
    )
    session.flush()
    chosen = [t for t in list_teams(session, competition=competition) if t.finalist]
    session.commit()
    return chosen


def add_reviewer(
    session: Session, *, competition: str, name: str, pepper: bytes, actor: Principal | None, now: datetime
) -> tuple[ReviewerView, IssuedToken]:
    """A reviewer and their token (audited; commits).

    Re-adding a removed reviewer reactivates them with a new token, and their current
    marks count again: removing is undone, and re-adding is how a reviewer who lost
    their token gets a new one without marking every finalist again.
    """
    comp = competition_row(session, competition)
    name = _clean_name(name)
    row = session.scalars(select(Reviewer).where(Reviewer.competition_id == comp.id, Reviewer.name == name)).first()
    if row is not None and row.active:
        raise ConflictError(f"competition {competition!r} has a reviewer {name!r} already")
    restored = 0
    if row is None:
        row = Reviewer(competition_id=comp.id, name=name, active=True, created_at=now)
        session.add(row)
        session.flush()
    else:
        restored = _current_marks(session, row.id)
        # Their marks count again: the final ranking reads reviews at request time, bump the caches.
        bump_board_version(session, competition_id=comp.id)
    row.active = True
    issued = add_token(session, pepper=pepper, role=Role.REVIEWER, now=now, reviewer_id=row.id, label=name)
    details: dict[str, object] = {"reviewer_id": row.id, "token": issued.prefix}
    if restored:
        details["marks_restored"] = restored
    record_audit(
        session,
        actor=actor,
        action="reviewer.add",
        now=now,
        competition_id=comp.id,
        target=name,
        details=details,
    )
    session.commit()
    return _reviewer(row), issued


def _current_marks(session: Session, reviewer_id: int) -> int:
    """How many teams the reviewer has current marks for."""
    query = select(func.count()).select_from(Review).where(Review.reviewer_id == reviewer_id, Review.is_current)
    return int(session.scalar(query) or 0)


def remove_reviewer(session: Session, *, reviewer_id: int, actor: Principal | None, now: datetime) -> ReviewerView:
    """Deactivate a reviewer: tokens revoked, marks not counted until they are re-added (audited; commits)."""
    row = session.get(Reviewer, reviewer_id)
    if row is None:
        raise NotFoundError(f"no reviewer {reviewer_id}")
    row.active = False
    revoke_tokens_of(session, reviewer_id=row.id, now=now)
    record_audit(
        session,
        actor=actor,
        action="reviewer.remove",
        now=now,
        competition_id=row.competition_id,
        target=row.name,
        details={"reviewer_id": row.id},
    )
    # Their marks no longer count: the final ranking reads reviews at request time, bump the caches.
    bump_board_version(session, competition_id=row.competition_id)
    session.commit()
    return _reviewer(row)


def list_reviewers(session: Session, *, competition: str) -> list[ReviewerView]:
    comp = competition_row(session, competition)
    rows = session.scalars(select(Reviewer).where(Reviewer.competition_id == comp.id).order_by(Reviewer.name))
    return [_reviewer(row) for row in rows]


def _clean_name(name: str) -> str:
    name = " ".join(name.split())
    if not 1 <= len(name) <= 100 or not name.isprintable():
        raise InvalidInputError("a name is 1 to 100 printable characters")
    return name


def _team(row: Team) -> TeamView:
    return TeamView(row.id, row.name, row.competition_id, row.finalist, row.created_at)


def _reviewer(row: Reviewer) -> ReviewerView:
    return ReviewerView(row.id, row.name, row.competition_id, row.active, row.created_at)
