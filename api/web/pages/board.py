"""The leaderboard page `/c/<competition>` and the fragment its script polls.

The page and the fragment render the same `Leaderboard` the JSON API serves,
cached per board version by api/web/boardcache.py. What an anonymous reader gets
is the same for everyone, so it is rendered once per version, kept with the
cached board, compressed once and answered from the event loop without a query
(the target: board p99 < 100 ms at 50 clients, bench/load_api.py). A logged-in viewer's page carries
their name and CSRF token, and a team's board its own marked (and, while
frozen, live) row: those are rendered per request from the cached rows.
The fragment answers 204 while the version the browser shows is still current.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import RedirectResponse
from starlette.concurrency import run_in_threadpool

from api.store.competitions import get_competition, list_competitions
from api.store.db import Session
from api.store.enums import Role
from api.store.errors import PermissionDeniedError
from api.store.ranking import Leaderboard, LeaderboardRow, for_viewer
from api.store.views import CompetitionView, Principal
from api.web.boardcache import BoardCache, CachedBoard, Encoded, encode
from api.web.deps import BoardsDep, NowDep, SessionDep
from api.web.pages.auth import PageViewer
from api.web.pages.boardrows import row_html
from api.web.pages.routing import PageRoute
from api.web.pages.web import html_response, page_html, render, render_fragment, shared_html_response

router = APIRouter(include_in_schema=False, route_class=PageRoute)

POLL_MS = 3000
HALL_POLL_MS = 5000
NOT_PUBLISHED = "the final ranking is not published yet"

Part = Literal["page", "frag"]


@dataclass(frozen=True)
class HeatGroup:
    problem: str
    indices: tuple[int, ...]  # positions in the board's columns


@dataclass(frozen=True)
class BoardQuery:
    """What a board request asks for, apart from who asks."""

    slug: str
    view: str | None  # "public", "final" or None (the final ranking once published, else the public board)
    unfrozen: bool  # organisers only
    hall: bool


ViewParam = Annotated[str | None, Query(pattern="^(public|final)$")]
HallParam = Annotated[bool, Query(description="large mode for a projector")]


@router.get("/")
def index(request: Request, session: SessionDep, viewer: PageViewer) -> Response:
    """The viewer's competition board, the only competition's, or a list to choose from."""
    if viewer is not None and viewer.competition_slug:
        return RedirectResponse(f"/c/{viewer.competition_slug}", status_code=303)
    competitions = list_competitions(session)
    if len(competitions) == 1:
        return RedirectResponse(f"/c/{competitions[0].slug}", status_code=303)
    return render(request, "index.html", competitions=competitions)


@router.get("/c/{slug}")
async def board_page(slug: str, request: Request, session: SessionDep, boards: BoardsDep, now: NowDep,
                     viewer: PageViewer, hall: HallParam = False, view: ViewParam = None,
                     unfrozen: bool = False) -> Response:  # fmt: skip
    """The leaderboard: live, frozen with a banner, or the final ranking once published.

    `async`: an anonymous reader's page, current in the cache, is answered on the
    event loop; whatever reads the database or renders runs in the thread pool.
    """
    query = BoardQuery(slug, view, unfrozen, hall)
    if viewer is None:
        return shared_html_response(request, await _shared(request, session, boards, query, now, "page"))

    def personal() -> Response:
        context = board_context(session, boards, query, now=now, viewer=viewer)
        return render(request, "board.html", **context)

    return await run_in_threadpool(personal)


@router.get("/c/{slug}/board.frag")
async def board_fragment(slug: str, request: Request, session: SessionDep, boards: BoardsDep, now: NowDep,
                         viewer: PageViewer, v: str = "", hall: bool = False, view: ViewParam = None,
                         unfrozen: bool = False) -> Response:  # fmt: skip
    """The board's live part; 204 while the browser's version `v` is current."""
    query = BoardQuery(slug, view, unfrozen, hall)
    if viewer is None or viewer.role is Role.REVIEWER:  # the fragment has no name or form: a reviewer's is shared
        cached = _peek(boards, query, now) or await run_in_threadpool(_shared_board, session, boards, query, now)
        if v and v == version_key(cached.board, ignore_freeze=False):
            return Response(status_code=204, headers={"Cache-Control": "no-store"})
        return shared_html_response(request, await _shared(request, session, boards, query, now, "frag", cached))

    def personal() -> Response:
        context = board_context(session, boards, query, now=now, viewer=viewer)
        if v and v == context["version_key"]:
            return Response(status_code=204, headers={"Cache-Control": "no-store"})
        return html_response(render_fragment("_board.html", **context))

    return await run_in_threadpool(personal)


def version_key(board: Leaderboard, *, ignore_freeze: bool) -> str:
    """What the page's script sends back as `v`: the board's version and kind."""
    return f"{board.version}-{int(board.frozen)}-{int(board.final)}-{int(ignore_freeze)}"


def board_context(session: Session, boards: BoardCache, query: BoardQuery, *, now: datetime,
                  viewer: Principal | None) -> dict[str, Any]:  # fmt: skip
    """Everything board.html and _board.html need for this viewer."""
    competition = get_competition(session, slug=query.slug)
    admin = viewer is not None and viewer.role is Role.ADMIN
    final = query.view == "final" or (query.view is None and competition.final_published)
    if final and not competition.final_published and not admin:
        raise PermissionDeniedError(NOT_PUBLISHED)
    ignore_freeze = query.unfrozen and admin and not final
    team_id = viewer.team_id if viewer is not None and viewer.competition_id == competition.id else None
    cached = boards.get(session, competition=query.slug, now=now, final=final, ignore_freeze=ignore_freeze)
    return _context(session, cached, query, competition, team_id=team_id, admin=admin, ignore_freeze=ignore_freeze)


def _context(session: Session, cached: CachedBoard, query: BoardQuery, competition: CompetitionView, *,
             team_id: int | None, admin: bool, ignore_freeze: bool) -> dict[str, Any]:  # fmt: skip
    board: Leaderboard = for_viewer(session, cached.board, viewer_team=team_id)
    rows = _with_baseline(board)
    groups = _groups(board)
    params = (f"view={query.view}" if query.view else "", "unfrozen=1" if ignore_freeze else "",
              "hall=1" if query.hall else "")  # fmt: skip
    url_query = "&".join(p for p in params if p)
    return {
        "competition": competition,
        "board": board,
        "rows": rows,
        "groups": groups,
        "row_html": row_html(cached, board, rows, groups),
        "version_key": version_key(board, ignore_freeze=ignore_freeze),
        "rows_url": f"/c/{query.slug}/board.frag" + (f"?{url_query}" if url_query else ""),
        "poll_ms": HALL_POLL_MS if query.hall else POLL_MS,
        "viewer_team": team_id,
        "is_admin": admin,
        "final_preview": board.final and not competition.final_published,
        "ignore_freeze": ignore_freeze,
        "ranked": sum(1 for r in board.rows if r.rank is not None),
        "hall": query.hall,
    }


# ---- the shared (anonymous) board ----------------------------------------------------------------


def _final_for(query: BoardQuery, final_published: bool) -> bool:
    """Which board a reader who is not an organiser asked for (PermissionDeniedError for an unpublished final)."""
    if query.view == "final" and not final_published:
        raise PermissionDeniedError(NOT_PUBLISHED)
    return query.view == "final" or (query.view is None and final_published)


def _peek(boards: BoardCache, query: BoardQuery, now: datetime) -> CachedBoard | None:
    """The shared board when the cache knows it is current (no database), else None."""
    state = boards.peek_state(competition=query.slug)
    if state is None:
        return None
    return boards.peek(competition=query.slug, now=now, final=_final_for(query, state.final_published))


def _shared_board(session: Session, boards: BoardCache, query: BoardQuery, now: datetime) -> CachedBoard:
    """The shared board, from the database when the cache cannot say (runs in the thread pool)."""
    final = _final_for(query, boards.state(session, competition=query.slug).final_published)
    return boards.get(session, competition=query.slug, now=now, final=final)


async def _shared(request: Request, session: Session, boards: BoardCache, query: BoardQuery, now: datetime,
                  part: Part, cached: CachedBoard | None = None) -> Encoded:  # fmt: skip
    """The anonymous page or fragment of the current version (`cached` when the caller has it),
    built in the thread pool on first use."""
    name = f"{part}:{query.view or ''}:{int(query.hall)}"
    cached = cached or _peek(boards, query, now)
    page = cached.renders.get(name) if cached is not None else None
    if isinstance(page, Encoded):
        return page

    def build() -> Encoded:
        board = cached if cached is not None else _shared_board(session, boards, query, now)

        def make() -> Encoded:
            competition = get_competition(session, slug=query.slug)
            context = _context(session, board, query, competition, team_id=None, admin=False, ignore_freeze=False)
            html = page_html(request, "board.html", **context) if part == "page" else render_fragment(
                "_board.html", **context)  # fmt: skip
            return encode(html.encode(), board.etag[:-1] + f"-{name}" + '"')

        return BoardCache.rendered(board, name, make)

    return await run_in_threadpool(build)


def _with_baseline(board: Leaderboard) -> list[LeaderboardRow]:
    """The rows with the baseline's reference row where its online score falls (last on the final board)."""
    rows = list(board.rows)
    baseline = board.baseline
    if baseline is None or not board.columns:
        return rows
    if board.final:
        return rows + [baseline]
    for i, row in enumerate(rows):
        if row.rank is None or row.online_score < baseline.online_score:
            return rows[:i] + [baseline] + rows[i:]
    return rows + [baseline]


def _groups(board: Leaderboard) -> list[HeatGroup]:
    groups: dict[str, list[int]] = {}
    for i, column in enumerate(board.columns):
        groups.setdefault(column.problem, []).append(i)
    return [HeatGroup(problem, tuple(indices)) for problem, indices in groups.items()]
