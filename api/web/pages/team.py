"""The team page `/team`: its submissions, quota left, when the next is allowed, and an upload form.

The upload goes through the same parser (api/web/uploads.py), store function and
dispatcher as `POST /api/v1/submissions`. Its CSRF token travels in the form's
action URL: the body is a multipart stream the parser reads once, and the
token must be checked before any of it is read.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import RedirectResponse

from api.dispatch import dispatch_runs, queue_for
from api.settings import Settings
from api.store.competitions import get_competition
from api.store.db import Session
from api.store.enums import Role
from api.store.errors import PermissionDeniedError, StoreError
from api.store.submissions import create_submission, list_submissions, team_quotas
from api.store.views import Principal
from api.web.deps import DispatcherDep, NowDep, SessionDep, SettingsDep
from api.web.pages.auth import LoggedIn, check_csrf
from api.web.pages.routing import PageRoute
from api.web.pages.web import error_page, render
from api.web.uploads import UploadForm, read_upload
from judge.errors import UserFacingError
from judge.modes import RunMode
from judge.submission import source_suffixes

router = APIRouter(include_in_schema=False, route_class=PageRoute)


def team_viewer(viewer: LoggedIn) -> Principal:
    if viewer.role is not Role.TEAM:
        raise PermissionDeniedError("the team page is for team tokens; organisers and reviewers have their own")
    return viewer


TeamViewer = Annotated[Principal, Depends(team_viewer)]


@router.get("/team")
def team_page(request: Request, session: SessionDep, settings: SettingsDep, viewer: TeamViewer,
              now: NowDep) -> Response:  # fmt: skip
    """The team's submissions and quota, and the upload form."""
    return render(request, "team.html", **team_context(session, viewer, now=now, error=None, limits=settings))


async def page_upload(request: Request, settings: SettingsDep, viewer: TeamViewer) -> UploadForm | UserFacingError:
    """The parsed upload, or the reason it cannot be used (shown on the team page, not as an error page).

    The CSRF token travels in the form, not the URL: a URL's query string lands in access logs.
    It is checked once the body is read, before anything is stored.
    """
    try:
        upload = await read_upload(request, settings)
    except UserFacingError as error:
        return error
    check_csrf(request, settings, upload.csrf)
    return upload


@router.post("/team/submit")
def submit(
    request: Request,
    upload: Annotated[UploadForm | UserFacingError, Depends(page_upload)],
    session: SessionDep,
    settings: SettingsDep,
    dispatcher: DispatcherDep,
    viewer: TeamViewer,
    now: NowDep,
) -> Response:
    """Store the submission, queue it, and go to its report."""
    assert viewer.team_id is not None
    error: UserFacingError | None = upload if isinstance(upload, UserFacingError) else None
    if isinstance(upload, UploadForm):
        try:
            created = create_submission(
                session, team_id=viewer.team_id, problem=upload.problem, backend=upload.backend, files=upload.files,
                queue=queue_for(upload.backend, settings), now=now, mode=upload.mode,
            )  # fmt: skip
        except StoreError as refused:
            error = refused
        else:
            dispatch_runs(session, dispatcher, [created.dispatch], now=now)
            return RedirectResponse(f"/s/{created.public_id}", status_code=303)
    assert error is not None
    session.rollback()
    failed = error_page(request, error)  # for its status code and Retry-After
    page = render(request, "team.html", status_code=failed.status_code,
                  **team_context(session, viewer, now=now, error=str(error), limits=settings,
                                 chosen=upload if isinstance(upload, UploadForm) else None))  # fmt: skip
    if "Retry-After" in failed.headers:
        page.headers["Retry-After"] = failed.headers["Retry-After"]
    return page


def team_context(session: Session, viewer: Principal, *, now: datetime, error: str | None,
                 limits: Settings, chosen: UploadForm | None = None) -> dict[str, Any]:
    """What team.html shows; `chosen` keeps the form's choices after a refused upload."""
    assert viewer.team_id is not None and viewer.competition_slug is not None
    competition = get_competition(session, slug=viewer.competition_slug)
    quotas = team_quotas(session, team_id=viewer.team_id, now=now)
    submissions = list_submissions(session, team_id=viewer.team_id, limit=100)
    waits = {mode.value: _wait_s(q.next_allowed_at, now) for mode, q in quotas.items()}
    return {
        "competition": competition,
        "backends": sorted({b.value for p in competition.problems for b in p.backends}),
        # The file picker offers the chosen backend's file types (opjudge.js), the ones the upload and
        # the policy accept (judge.submission.source_suffixes).
        "suffixes": {b.value: ",".join(source_suffixes(b))
                     for b in sorted({b for p in competition.problems for b in p.backends}, key=lambda b: b.value)},
        "all_suffixes": ",".join(source_suffixes()),
        "quota": quotas[RunMode.RANKED],
        "quotas": quotas,
        "waits": waits,
        "wait_s": waits[RunMode.RANKED.value],
        "chosen": chosen,
        "limits": limits,
        "open": competition.starts_at <= now < competition.ends_at,
        "submissions": submissions,
        "error": error,
        "now": now,
    }


def _wait_s(next_allowed_at: datetime | None, now: datetime) -> int:
    return max(0, math.ceil((next_allowed_at - now).total_seconds())) if next_allowed_at else 0
