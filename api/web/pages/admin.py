"""Organiser pages (admin token): runs in flight and per queue, workers, recent submissions, and actions.

Every action goes through the same store functions as the admin API (and so
is audited the same way): rejudge, disqualify or reinstate a submission, and
publish or hide the final ranking (api/web/pages/organisers.py).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request, Response
from fastapi.responses import RedirectResponse

from api.dispatch import dispatch_runs, queue_for
from api.store.audit import list_audit
from api.store.competitions import list_competitions
from api.store.enums import Role
from api.store.errors import PermissionDeniedError
from api.store.page_queries import runs_in_flight, submission_competition
from api.store.rejudge import rejudge
from api.store.submissions import disqualify_submission, list_submissions
from api.store.views import Principal
from api.store.workers import list_workers, queue_load
from api.web.deps import DispatcherDep, NowDep, SessionDep, SettingsDep
from api.web.pages.auth import LoggedIn, check_csrf
from api.web.pages.routing import PageRoute
from api.web.pages.web import render
from api.web.schemas.bounds import PlainText, SubmissionId

router = APIRouter(include_in_schema=False, route_class=PageRoute)

WORKER_STALE_AFTER = timedelta(minutes=5)  # no heartbeat for this long: shown as not seen recently


def admin_viewer(viewer: LoggedIn) -> Principal:
    if viewer.role is not Role.ADMIN:
        raise PermissionDeniedError("the organisers' pages need an admin token")
    return viewer


AdminViewer = Annotated[Principal, Depends(admin_viewer)]
Csrf = Annotated[str, Form()]


@router.get("/admin")
def admin_page(request: Request, session: SessionDep, viewer: AdminViewer, now: NowDep) -> Response:
    """Runs in flight, queues, workers, recent submissions and the audit log."""
    workers = list_workers(session)
    competitions = list_competitions(session)
    return render(
        request, "admin.html",
        competitions=competitions,
        competition_slugs={c.id: c.slug for c in competitions},  # the recent list names each one's contest
        flights=runs_in_flight(session),
        queues=queue_load(session),
        workers=workers,
        stale={w.name for w in workers if now - w.last_seen_at > WORKER_STALE_AFTER},
        recent=list_submissions(session, limit=30),
        audit=list_audit(session, limit=15),
        now=now,
    )  # fmt: skip


@router.post("/admin/s/{submission_id}/rejudge")
def rejudge_submission(
    submission_id: SubmissionId, request: Request, csrf: Csrf, session: SessionDep, settings: SettingsDep,
    dispatcher: DispatcherDep, viewer: AdminViewer, now: NowDep,
) -> Response:
    """A new rejudge run for the submission, queued at once."""
    check_csrf(request, settings, csrf)
    slug = submission_competition(session, submission_id=submission_id)
    runs = rejudge(session, competition=slug, actor=viewer, now=now, queue_of=lambda b: queue_for(b, settings),
                   submission_id=submission_id)  # fmt: skip
    dispatch_runs(session, dispatcher, runs, now=now)
    return RedirectResponse(f"/s/{submission_id}", status_code=303)


@router.post("/admin/s/{submission_id}/disqualify")
def disqualify(
    submission_id: SubmissionId, request: Request, csrf: Csrf, reason: Annotated[PlainText, Form()],
    session: SessionDep, settings: SettingsDep, viewer: AdminViewer, now: NowDep,
) -> Response:
    """Keep the submission, stop ranking it, record why."""
    check_csrf(request, settings, csrf)
    disqualify_submission(session, submission_id=submission_id, reason=reason, actor=viewer, now=now)
    return RedirectResponse(f"/s/{submission_id}", status_code=303)


@router.post("/admin/s/{submission_id}/reinstate")
def reinstate(
    submission_id: SubmissionId, request: Request, csrf: Csrf, session: SessionDep, settings: SettingsDep,
    viewer: AdminViewer, now: NowDep,
) -> Response:
    """Undo a disqualification."""
    check_csrf(request, settings, csrf)
    disqualify_submission(session, submission_id=submission_id, reason=None, actor=viewer, now=now)
    return RedirectResponse(f"/s/{submission_id}", status_code=303)
