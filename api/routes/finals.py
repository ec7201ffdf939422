"""A team marks its finals (ranked_by `chosen`, issue 18 item 4): `GET` and `PUT /api/v1/finals`."""

from __future__ import annotations

from fastapi import APIRouter

from api.deps import CurrentTeam, NowDep, SessionDep
from api.schemas.finals import FinalsChoose, FinalsPublic
from api.store.finals import choose_finals, team_finals

router = APIRouter(prefix="/api/v1", tags=["teams"])


@router.get("/finals", response_model=FinalsPublic)
def read_finals(team: CurrentTeam, session: SessionDep) -> FinalsPublic:
    """The team's finals, the submission each problem's final ranking scores now, and what it may mark."""
    assert team.team_id is not None
    return FinalsPublic.model_validate(team_finals(session, team_id=team.team_id))


@router.put("/finals", response_model=FinalsPublic)
def put_finals(body: FinalsChoose, team: CurrentTeam, session: SessionDep, now: NowDep) -> FinalsPublic:
    """Replace the team's finals (up to the competition's `finals_limit` per problem; `[]`: the
    latest counts again). Only while the window is open and the competition ranks `chosen`."""
    assert team.team_id is not None
    return FinalsPublic.model_validate(choose_finals(session, team_id=team.team_id, submission_ids=body.submission_ids,
                                                     now=now))  # fmt: skip
