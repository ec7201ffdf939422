"""A team marks its finals (ranked_by `chosen`): `GET` and `PUT /api/v1/finals`, by public ids."""

from __future__ import annotations

from fastapi import APIRouter

from api.store.db import Session
from api.store.finals import TeamFinals, choose_finals, team_finals
from api.store.submission_refs import public_ids_of, submission_ids_of
from api.web.deps import CurrentTeam, NowDep, SessionDep
from api.web.schemas.finals import FinalsChoose, FinalsPublic

router = APIRouter(prefix="/api/v1", tags=["teams"])


@router.get("/finals", response_model=FinalsPublic)
def read_finals(team: CurrentTeam, session: SessionDep) -> FinalsPublic:
    """The team's finals, the submission each problem's final ranking scores now, and what it may mark."""
    assert team.team_id is not None
    return public_finals(session, team_finals(session, team_id=team.team_id))


@router.put("/finals", response_model=FinalsPublic)
def put_finals(body: FinalsChoose, team: CurrentTeam, session: SessionDep, now: NowDep) -> FinalsPublic:
    """Replace the team's finals by the submissions of these ids (up to the competition's `finals_limit`
    per problem; `[]`: the latest counts again). Only while the window is open and the competition ranks
    `chosen`."""
    assert team.team_id is not None
    wanted = submission_ids_of(session, body.submission_ids, team_id=team.team_id)
    return public_finals(session, choose_finals(session, team_id=team.team_id, submission_ids=wanted, now=now))


def public_finals(session: Session, finals: TeamFinals) -> FinalsPublic:
    """The finals as a team sees them: every submission named by its public id."""
    known = {s.id: s.public_id for s in finals.choosable}
    others = {*finals.chosen, *finals.counting.values()} - known.keys()
    return FinalsPublic.of(finals, {**known, **public_ids_of(session, others)})
