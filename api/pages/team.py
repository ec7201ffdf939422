"""The team page `/team`: its submissions, quota left, when the next is allowed, and an upload form.

The upload goes through the same parser (api/uploads.py), store function and
dispatcher as `POST /api/v1/submissions`. Its CSRF token travels in the form's
action URL: the body is a multipart stream the parser reads once, and the
token must be checked before any of it is read.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import RedirectResponse

from api.deps import DispatcherDep, NowDep, SessionDep, SettingsDep
from api.dispatch import dispatch_runs, queue_for
from api.pages.auth import LoggedIn, check_csrf
from api.pages.routing import PageRoute
from api.pages.web import error_page, render
from api.store import (
    PermissionDeniedError,
    Principal,
    Role,
    RunDispatch,
    Session,
    StoreError,
    create_submission,
    get_competition,
    list_submissions,
    team_quota,
)
from api.uploads import UploadForm, read_upload
from judge.errors import UserFacingError

router = APIRouter(include_in_schema=False, route_class=PageRoute)


def team_viewer(viewer: LoggedIn) -> Principal:
    if viewer.role is not Role.TEAM:
        raise PermissionDeniedError("the team page is for team tokens; organisers and reviewers have their own")
    return viewer


TeamViewer = Annotated[Principal, Depends(team_viewer)]


@router.get("/team")
def team_page(request: Request, session: SessionDep, viewer: TeamViewer, now: NowDep) -> Response:
    """The team's submissions and quota, and the upload form."""
    return render(request, "team.html", **team_context(session, viewer, now=now, error=None))


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
                queue=queue_for(upload.backend, settings), now=now,
            )  # fmt: skip
        except StoreError as refused:
            error = refused
        else:
            dispatch_runs(session, dispatcher, [RunDispatch(created.run_id, created.queue)], now=now)
            return RedirectResponse(f"/s/{created.submission_id}", status_code=303)
    assert error is not None
    session.rollback()
    failed = error_page(request, error)  # for its status code and Retry-After
    page = render(request, "team.html", status_code=failed.status_code,
                  **team_context(session, viewer, now=now, error=str(error)))  # fmt: skip
    if "Retry-After" in failed.headers:
        page.headers["Retry-After"] = failed.headers["Retry-After"]
    return page


def team_context(session: Session, viewer: Principal, *, now: datetime, error: str | None) -> dict[str, Any]:
    assert viewer.team_id is not None and viewer.competition_slug is not None
    competition = get_competition(session, slug=viewer.competition_slug)
    quota = team_quota(session, team_id=viewer.team_id, now=now)
    submissions = list_submissions(session, team_id=viewer.team_id, limit=100)
    wait_s = max(0, int((quota.next_allowed_at - now).total_seconds())) if quota.next_allowed_at else 0
    return {
        "competition": competition,
        "backends": sorted({b.value for p in competition.problems for b in p.backends}),
        "quota": quota,
        "wait_s": wait_s,
        "open": competition.starts_at <= now < competition.ends_at,
        "submissions": submissions,
        "error": error,
        "now": now,
    }
