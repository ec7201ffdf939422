"""Public reads: a competition and its leaderboard (a token, when given, personalises the board)."""

from __future__ import annotations

from functools import partial
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from starlette.concurrency import run_in_threadpool

from api.store.competitions import get_competition
from api.store.enums import Role
from api.store.errors import PermissionDeniedError
from api.store.ranking import leaderboard
from api.web.boardcache import serialise
from api.web.deps import BoardsDep, NowDep, OptionalPrincipal, SessionDep
from api.web.schemas.bounds import Moment
from api.web.schemas.competitions import CompetitionPublic
from api.web.schemas.leaderboard import LeaderboardPublic

router = APIRouter(prefix="/api/v1/competitions", tags=["boards"])


@router.get("/{slug}", response_model=CompetitionPublic)
def read_competition(slug: str, session: SessionDep) -> CompetitionPublic:
    """A competition's window, freeze, quotas, scoring settings and problems."""
    return CompetitionPublic.model_validate(get_competition(session, slug=slug))


@router.get("/{slug}/leaderboard", response_model=LeaderboardPublic)
async def read_leaderboard(
    slug: str,
    request: Request,
    session: SessionDep,
    boards: BoardsDep,
    now: NowDep,
    viewer: OptionalPrincipal,
    final: Annotated[bool, Query(description="the final ranking (private cases + reviewers), once published")] = False,
    unfrozen: Annotated[bool, Query(description="organisers only: ignore the freeze")] = False,
    as_of: Annotated[
        Moment | None, Query(description="organisers only: the board at an earlier moment, with its zone")
    ] = None,
) -> Response:
    """The leaderboard as JSON; frozen boards still show the calling team its own results.

    `async`, unlike the other routes: a board current in the cache is answered on the
    event loop without a thread or a query (the hot path under load); anything that
    reads the database runs in the thread pool.
    """
    admin = viewer is not None and viewer.role is Role.ADMIN
    if (unfrozen or as_of is not None) and not admin:
        raise PermissionDeniedError("only organisers can see the board unfrozen or at an earlier moment")
    team_id = viewer.team_id if viewer is not None else None
    if as_of is not None:
        board = await run_in_threadpool(
            leaderboard, session, competition=slug, as_of=as_of, final=final, ignore_freeze=unfrozen, now=now
        )
        return Response(serialise(board), media_type="application/json")
    cached = boards.peek(competition=slug, now=now, final=final, ignore_freeze=unfrozen) or await run_in_threadpool(
        partial(boards.get, session, competition=slug, now=now, final=final, ignore_freeze=unfrozen)
    )
    if final and not cached.final_published and not admin:
        raise PermissionDeniedError("the final ranking is not published yet")
    if team_id is None:
        headers = {"Cache-Control": "no-cache", "ETag": cached.etag, "Vary": "Accept-Encoding"}
        if request.headers.get("if-none-match") == cached.etag:
            return Response(status_code=304, headers=headers)
        if "gzip" in request.headers.get("accept-encoding", ""):
            return Response(cached.gzip, media_type="application/json", headers={**headers, "Content-Encoding": "gzip"})
        return Response(cached.json, media_type="application/json", headers=headers)
    _board, body = await run_in_threadpool(partial(boards.for_viewer, session, cached, viewer_team=team_id))
    return Response(body, media_type="application/json", headers={"Cache-Control": "no-cache"})
