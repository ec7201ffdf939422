"""The leaderboard page `/c/<competition>` and the fragment its script polls.

The page and the fragment render the same `Leaderboard` the JSON API serves
(api/boardcache.py caches it per board version). The fragment answers 204 while
the version the browser shows is still current, so polling costs one small
query per client and interval.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import RedirectResponse

from api.boardcache import BoardCache
from api.deps import BoardsDep, NowDep, SessionDep
from api.pages.auth import PageViewer
from api.pages.boardrows import RowCache
from api.pages.routing import PageRoute
from api.pages.web import html_response, render, render_fragment
from api.store import (
    Leaderboard,
    LeaderboardRow,
    PermissionDeniedError,
    Principal,
    Role,
    Session,
    for_viewer,
    get_competition,
    list_competitions,
)

router = APIRouter(include_in_schema=False, route_class=PageRoute)

POLL_MS = 3000
HALL_POLL_MS = 5000


def row_cache(request: Request) -> RowCache:
    """The app's cache of rendered rows (api.pages.install puts one on the app)."""
    cache: RowCache | None = getattr(request.app.state, "board_rows", None)
    if cache is None:
        cache = request.app.state.board_rows = RowCache()
    return cache


@dataclass(frozen=True)
class HeatGroup:
    problem: str
    indices: tuple[int, ...]  # positions in the board's columns


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
def board_page(
    slug: str,
    request: Request,
    session: SessionDep,
    boards: BoardsDep,
    now: NowDep,
    viewer: PageViewer,
    hall: Annotated[bool, Query(description="large mode for a projector")] = False,
    view: Annotated[str | None, Query(pattern="^(public|final)$")] = None,
    unfrozen: bool = False,
) -> Response:
    """The leaderboard: live, frozen with a banner, or the final ranking once published."""
    context = board_context(session, boards, row_cache(request), slug=slug, now=now, viewer=viewer, view=view,
                            unfrozen=unfrozen, hall=hall)  # fmt: skip
    return render(request, "board.html", **context)


@router.get("/c/{slug}/board.frag")
def board_fragment(
    slug: str,
    request: Request,
    session: SessionDep,
    boards: BoardsDep,
    now: NowDep,
    viewer: PageViewer,
    v: str = "",
    hall: bool = False,
    view: Annotated[str | None, Query(pattern="^(public|final)$")] = None,
    unfrozen: bool = False,
) -> Response:
    """The board's live part; 204 while the browser's version `v` is current."""
    context = board_context(session, boards, row_cache(request), slug=slug, now=now, viewer=viewer, view=view,
                            unfrozen=unfrozen, hall=hall)  # fmt: skip
    if v and v == context["version_key"]:
        return Response(status_code=204, headers={"Cache-Control": "no-store"})
    return html_response(render_fragment("_board.html", **context))


def board_context(
    session: Session, boards: BoardCache, row_cache: RowCache, *, slug: str, now: datetime,
    viewer: Principal | None, view: str | None, unfrozen: bool, hall: bool,
) -> dict[str, Any]:
    """Everything board.html and _board.html need for this viewer."""
    competition = get_competition(session, slug=slug)
    admin = viewer is not None and viewer.role is Role.ADMIN
    final = view == "final" or (view is None and competition.final_published)
    if final and not competition.final_published and not admin:
        raise PermissionDeniedError("the final ranking is not published yet")
    ignore_freeze = unfrozen and admin and not final
    team_id = viewer.team_id if viewer is not None and viewer.competition_id == competition.id else None
    cached = boards.get(session, competition=slug, now=now, final=final, ignore_freeze=ignore_freeze)
    board: Leaderboard = for_viewer(session, cached.board, viewer_team=team_id)
    rows = _with_baseline(board)
    groups = _groups(board)
    version_key = f"{board.version}-{int(board.frozen)}-{int(board.final)}-{int(ignore_freeze)}"
    query = "&".join(p for p in (f"view={view}" if view else "", "unfrozen=1" if ignore_freeze else "",
                                 "hall=1" if hall else "") if p)  # fmt: skip
    return {
        "competition": competition,
        "board": board,
        "rows": rows,
        "groups": groups,
        "row_html": row_cache.rows(board, rows, groups, version_key),
        "version_key": version_key,
        "rows_url": f"/c/{slug}/board.frag" + (f"?{query}" if query else ""),
        "poll_ms": HALL_POLL_MS if hall else POLL_MS,
        "viewer_team": team_id,
        "is_admin": admin,
        "final_preview": final and not competition.final_published,
        "ignore_freeze": ignore_freeze,
        "ranked": sum(1 for r in board.rows if r.rank is not None),
        "now": now,
        "hall": hall,
    }


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
