"""The reviewers' page `/review`: each finalist's ranked submissions and a rubric form.

Marks are written with `put_review`, the store function behind
`PUT /api/v1/review/teams/<id>`: a later form replaces the reviewer's earlier
marks (kept as history) and bumps the board version, so an open final
ranking updates by itself.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import RedirectResponse

from api.store.competitions import get_competition
from api.store.db import Session
from api.store.enums import Role
from api.store.errors import InvalidInputError, PermissionDeniedError, StoreError
from api.store.reviews import list_finalists, put_review, reviewer_marks
from api.store.views import Principal
from api.web.deps import NowDep, SessionDep, SettingsDep
from api.web.pages.auth import LoggedIn, check_csrf
from api.web.pages.routing import PageRoute
from api.web.pages.web import render, status_of
from api.web.schemas.bounds import IdFilter, TeamId, text_problem
from api.web.schemas.reviews import COMMENT_MAX_CHARS

router = APIRouter(include_in_schema=False, route_class=PageRoute)


def reviewer_viewer(viewer: LoggedIn) -> Principal:
    if viewer.role is not Role.REVIEWER:
        raise PermissionDeniedError("the review page needs a reviewer token")
    return viewer


ReviewerViewer = Annotated[Principal, Depends(reviewer_viewer)]


async def form_fields(request: Request) -> dict[str, str]:
    """The posted form's text fields (read here so the page function itself can stay synchronous)."""
    form = await request.form(max_files=0, max_fields=64)
    return {key: value for key, value in form.items() if isinstance(value, str)}


@router.get("/review")
def review_page(
    request: Request, session: SessionDep, viewer: ReviewerViewer, saved: IdFilter | None = None
) -> Response:
    """The finalists with their submissions and this reviewer's marks."""
    return render(request, "review.html", **review_context(session, viewer, saved=saved, error=None, error_team=None))


@router.post("/review/{team_id}")
def save_marks(
    team_id: TeamId,
    request: Request,
    fields: Annotated[dict[str, str], Depends(form_fields)],
    session: SessionDep,
    settings: SettingsDep,
    viewer: ReviewerViewer,
    now: NowDep,
) -> Response:
    """Write the rubric marks for one finalist team and come back to the list."""
    check_csrf(request, settings, fields.get("csrf", ""))
    assert viewer.reviewer_id is not None and viewer.competition_slug is not None
    rubric = get_competition(session, slug=viewer.competition_slug).rubric
    try:
        marks = {key: _mark(fields.get(f"mark_{key}", ""), key) for key in rubric}
        put_review(session, reviewer_id=viewer.reviewer_id, team_id=team_id, marks=marks,
                   comment=_comment(fields.get("comment", "")), now=now)  # fmt: skip
    except StoreError as error:
        session.rollback()
        context = review_context(session, viewer, saved=None, error=str(error), error_team=team_id)
        # The form comes back as the reviewer filled it: a refusal loses nothing they typed.
        context["typed"] = {"marks": {key: fields.get(f"mark_{key}", "") for key in rubric},
                            "comment": fields.get("comment", "")}
        return render(request, "review.html", status_code=status_of(error), **context)
    return RedirectResponse(f"/review?saved={team_id}#team-{team_id}", status_code=303)


def review_context(session: Session, viewer: Principal, *, saved: int | None, error: str | None,
                   error_team: int | None) -> dict[str, Any]:
    assert viewer.reviewer_id is not None and viewer.competition_id is not None
    assert viewer.competition_slug is not None
    competition = get_competition(session, slug=viewer.competition_slug)
    finalists = list_finalists(session, competition_id=viewer.competition_id)
    return {
        "competition": competition,
        "rubric": competition.rubric,
        "finalists": finalists,
        "marks": {r.team_id: r for r in reviewer_marks(session, reviewer_id=viewer.reviewer_id)},
        "saved": saved,
        "saved_name": next((f.team_name for f in finalists if f.team_id == saved), None),
        "error": error,
        "error_team": error_team,
        "typed": None,  # what was typed in the refused form (error_team's), to fill it in again
        "comment_max_chars": COMMENT_MAX_CHARS,
    }


def _comment(raw: str) -> str:
    """The comment as typed, or InvalidInputError: the API's limit, refused rather than cut short."""
    if len(raw) > COMMENT_MAX_CHARS:
        raise InvalidInputError(
            f"the comment has {len(raw)} characters; the limit is {COMMENT_MAX_CHARS}: shorten it and save again"
        )
    problem = text_problem(raw)
    if problem is not None:
        raise InvalidInputError(f"the comment cannot be saved: {problem}")
    return raw


def _mark(raw: str, key: str) -> float:
    try:
        value = float(raw.strip())
    except ValueError:
        raise InvalidInputError(f"give a number for {key.replace('_', ' ')}") from None
    if not math.isfinite(value):
        raise InvalidInputError(f"give a number for {key.replace('_', ' ')}")
    return value
