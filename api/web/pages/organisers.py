"""Organiser pages (docs/organisers.md): the final ranking (publish with confirmation, recompute with the
differences listed) and the re-audit under today's policy. Every action goes through the same
store functions as the admin API (and so is audited the same way)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Form, Request, Response
from fastapi.responses import RedirectResponse

from api.store.db import Session
from api.store.final_ranking import FinalChange, final_state, recompute_final, set_final_published
from api.store.jobs import JobKind, list_jobs, start_job
from api.web.deps import DispatcherDep, NowDep, SessionDep, SettingsDep
from api.web.job_dispatch import dispatch_job
from api.web.pages.admin import AdminViewer, Csrf
from api.web.pages.auth import check_csrf
from api.web.pages.routing import PageRoute
from api.web.pages.web import render
from api.web.schemas.bounds import PlainText

router = APIRouter(include_in_schema=False, route_class=PageRoute)

Reason = Annotated[PlainText, Form(max_length=2000)]


def _page(request: Request, session: Session, slug: str, now: datetime, *, confirm: bool = False,
          changes: tuple[FinalChange, ...] | None = None, recomputed: bool = False) -> Response:  # fmt: skip
    state = final_state(session, competition=slug, now=now)
    preview = None
    if state.snapshot is not None and changes is None:
        preview = recompute_final(session, competition=slug, actor=None, now=now, dry_run=True).changes
    return render(request, "admin_final.html", state=state, confirm=confirm, preview=preview,
                  changes=changes, recomputed=recomputed)  # fmt: skip


@router.get("/admin/c/{slug}/final")
def final_page(slug: str, request: Request, session: SessionDep, _viewer: AdminViewer, now: NowDep) -> Response:
    """The final ranking's state, its snapshots, and what a recompute would change."""
    return _page(request, session, slug, now)


@router.post("/admin/c/{slug}/final")
def publish_final(
    slug: str, request: Request, csrf: Csrf, published: Annotated[bool, Form()], session: SessionDep,
    settings: SettingsDep, viewer: AdminViewer, now: NowDep, override: Annotated[bool, Form()] = False,
    reason: Reason = "",
) -> Response:
    """Show the final ranking to everyone, or hide it again; before the window ends, ask to confirm first."""
    check_csrf(request, settings, csrf)
    state = final_state(session, competition=slug, now=now)
    if published and state.window_open and not override:
        return _page(request, session, slug, now, confirm=True)
    set_final_published(session, competition=slug, published=published, actor=viewer, now=now,
                        override=override, reason=reason)  # fmt: skip
    return RedirectResponse(f"/c/{slug}?view={'final' if published else 'public'}", status_code=303)


@router.post("/admin/c/{slug}/final/recompute")
def recompute(
    slug: str, request: Request, csrf: Csrf, session: SessionDep, settings: SettingsDep, viewer: AdminViewer,
    now: NowDep, reason: Reason = "", override: Annotated[bool, Form()] = False,
) -> Response:
    """Replace the snapshot by the live ranking; the page lists what changed (audited)."""
    check_csrf(request, settings, csrf)
    done = recompute_final(session, competition=slug, actor=viewer, now=now, reason=reason, override=override)
    return _page(request, session, slug, now, changes=done.changes, recomputed=True)


@router.get("/admin/c/{slug}/reaudit")
def reaudit_page(slug: str, request: Request, session: SessionDep, _viewer: AdminViewer,
                 note: str = "") -> Response:  # fmt: skip
    """The re-audit jobs of the competition and what the latest finished one found."""
    jobs = list_jobs(session, competition=slug, kind=JobKind.REAUDIT)
    latest = next((j for j in jobs if j.finished_at is not None), None)
    return render(request, "admin_reaudit.html", slug=slug, jobs=jobs, latest=latest, note=note[:300])


@router.post("/admin/c/{slug}/reaudit")
def start_reaudit(
    slug: str, request: Request, csrf: Csrf, session: SessionDep, settings: SettingsDep, viewer: AdminViewer,
    dispatcher: DispatcherDep, now: NowDep, rebuild: Annotated[bool, Form()] = False,
) -> Response:
    """Start a re-audit in the background (audited); the page then shows its progress."""
    check_csrf(request, settings, csrf)
    job = start_job(session, competition=slug, kind=JobKind.REAUDIT, params={"rebuild": rebuild, "queue": "judge.cpu"},
                    actor=viewer, now=now)  # fmt: skip
    note = dispatch_job(dispatcher, job, "judge.cpu")
    return RedirectResponse(f"/admin/c/{slug}/reaudit" + (f"?note={quote(note)}" if note else ""), status_code=303)
