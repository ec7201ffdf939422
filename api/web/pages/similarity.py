"""Machine review pages (docs/organisers.md): the pairs above a threshold, most similar first; a pair
side by side with the matching regions highlighted; a decision per pair (cleared / flagged), audited."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Form, Query, Request, Response
from fastapi.responses import RedirectResponse

from api.store.jobs import JobKind, list_jobs, start_job
from api.store.similarity import Decision, decide_pair, get_pair, list_pairs, pair_sources
from api.web.deps import DispatcherDep, NowDep, SessionDep, SettingsDep
from api.web.job_dispatch import dispatch_job
from api.web.pages.admin import AdminViewer, Csrf
from api.web.pages.auth import check_csrf
from api.web.pages.routing import PageRoute
from api.web.pages.web import render
from api.web.schemas.bounds import PairId, PlainText

router = APIRouter(include_in_schema=False, route_class=PageRoute)

Minimum = Annotated[float, Query(ge=0, le=1)]


@dataclass(frozen=True)
class Segment:
    text: str
    matched: bool


@dataclass(frozen=True)
class ShownFile:
    name: str
    segments: tuple[Segment, ...]


def highlighted(text: str, ranges: list[tuple[int, int]]) -> tuple[Segment, ...]:
    """`text` cut into plain and matched pieces; overlapping ranges are merged."""
    merged: list[list[int]] = []
    for start, end in sorted((max(0, s), min(len(text), e)) for s, e in ranges if s < e):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    pieces, at = [], 0
    for start, end in merged:
        if start > at:
            pieces.append(Segment(text[at:start], False))
        pieces.append(Segment(text[start:end], True))
        at = end
    if at < len(text):
        pieces.append(Segment(text[at:], False))
    return tuple(pieces)


def _shown(files: list[tuple[str, str]], regions: list[Any]) -> list[ShownFile]:
    return [ShownFile(name, highlighted(text, [(s, e) for f, s, e in regions if f == name])) for name, text in files]


@router.get("/admin/c/{slug}/similarity")
def pairs_page(slug: str, request: Request, session: SessionDep, _viewer: AdminViewer, minimum: Minimum = 0.5,
               note: str = "") -> Response:  # fmt: skip
    """Machine review's jobs and the pairs at or above `minimum`."""
    return render(request, "admin_similarity.html", slug=slug, minimum=minimum, note=note[:300],
                  jobs=list_jobs(session, competition=slug, kind=JobKind.SIMILARITY, limit=5),
                  pairs=list_pairs(session, competition=slug, minimum=minimum))  # fmt: skip


@router.post("/admin/c/{slug}/similarity")
def start_review(
    slug: str, request: Request, csrf: Csrf, session: SessionDep, settings: SettingsDep, viewer: AdminViewer,
    dispatcher: DispatcherDep, now: NowDep, threshold: Annotated[float, Form(gt=0, le=1)] = 0.5,
) -> Response:
    """Start machine review in the background (audited)."""
    check_csrf(request, settings, csrf)
    job = start_job(session, competition=slug, kind=JobKind.SIMILARITY, actor=viewer, now=now,
                    params={"threshold": threshold, "queue": "judge.cpu"})  # fmt: skip
    note = dispatch_job(dispatcher, job, "judge.cpu")
    query = f"?minimum={threshold}" + (f"&note={quote(note)}" if note else "")
    return RedirectResponse(f"/admin/c/{slug}/similarity{query}", status_code=303)


@router.get("/admin/similarity/{pair_id}")
def pair_page(pair_id: PairId, request: Request, session: SessionDep, _viewer: AdminViewer) -> Response:
    """Two submissions side by side, the matching regions highlighted, and the decision form."""
    pair = get_pair(session, pair_id=pair_id)
    files = pair_sources(session, pair=pair)
    return render(request, "admin_pair.html", pair=pair, error=None,
                  left=_shown(files[pair.submission_a], pair.regions.get("a", [])),
                  right=_shown(files[pair.submission_b], pair.regions.get("b", [])))  # fmt: skip


@router.post("/admin/similarity/{pair_id}")
def decide(
    pair_id: PairId, request: Request, csrf: Csrf, session: SessionDep, settings: SettingsDep, viewer: AdminViewer,
    now: NowDep, decision: Annotated[str, Form(pattern="^(cleared|flagged|undecided)$")],
    note: Annotated[PlainText, Form(max_length=2000)] = "",
) -> Response:
    """Record cleared / flagged (flagged needs a note) or undecided again; audited."""
    check_csrf(request, settings, csrf)
    chosen = None if decision == "undecided" else Decision(decision)
    decide_pair(session, pair_id=pair_id, decision=chosen, note=note, actor=viewer, now=now)
    return RedirectResponse(f"/admin/similarity/{pair_id}", status_code=303)
