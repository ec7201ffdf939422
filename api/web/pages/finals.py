"""The team's finals page `/team/finals` (ranked_by `chosen`, docs/organisers.md): tick up to the
competition's limit of judged submissions per problem; the final ranking takes the best of them."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request, Response
from fastapi.responses import RedirectResponse

from api.store.errors import StoreError
from api.store.finals import choose_finals, team_finals
from api.store.submission_refs import submission_ids_of
from api.web.deps import NowDep, SessionDep, SettingsDep
from api.web.pages.auth import check_csrf
from api.web.pages.routing import PageRoute
from api.web.pages.team import TeamViewer
from api.web.pages.web import error_page, render

router = APIRouter(include_in_schema=False, route_class=PageRoute)


@router.get("/team/finals")
def finals_page(request: Request, session: SessionDep, viewer: TeamViewer, now: NowDep,
                saved: bool = False) -> Response:  # fmt: skip
    assert viewer.team_id is not None
    finals = team_finals(session, team_id=viewer.team_id)
    return render(request, "finals.html", finals=finals, open=now < finals.open_until, saved=saved, error=None)


@router.post("/team/finals")
def save_finals(
    request: Request, csrf: Annotated[str, Form()], session: SessionDep, settings: SettingsDep,
    viewer: TeamViewer, now: NowDep, submission_ids: Annotated[list[str], Form()] = [],  # noqa: B006 - FastAPI's form default
) -> Response:
    """Replace the team's finals by the ticked submissions (their public ids); a refusal is shown on the page."""
    check_csrf(request, settings, csrf)
    assert viewer.team_id is not None
    try:
        wanted = submission_ids_of(session, submission_ids, team_id=viewer.team_id)
        choose_finals(session, team_id=viewer.team_id, submission_ids=wanted, now=now)
    except StoreError as refused:
        session.rollback()
        finals = team_finals(session, team_id=viewer.team_id)
        return render(request, "finals.html", status_code=error_page(request, refused).status_code, finals=finals,
                      open=now < finals.open_until, saved=False, error=str(refused))  # fmt: skip
    return RedirectResponse("/team/finals?saved=1", status_code=303)
