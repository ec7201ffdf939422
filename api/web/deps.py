"""Typed dependencies for routes: the session, the caller by role, the dispatcher, the clock.

Reads (GET, HEAD) get a read-only session; anything else a write session,
which on SQLite takes the write lock up front (see api/store/db.py).
Dependencies that do no I/O are `async def`, so FastAPI runs them on the event
loop instead of handing each to the thread pool (it shows in the leaderboard's
latency); the token lookup, which queries the database, runs in the pool.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.concurrency import run_in_threadpool

from api.dispatch import RunDispatcher
from api.settings import Settings
from api.store.db import Database, Session
from api.store.enums import Role
from api.store.errors import AuthError, PermissionDeniedError
from api.store.tokens import authenticate
from api.store.views import Principal
from api.web.boardcache import BoardCache
from api.web.ratelimit import client_address, throttle_of

_READ_METHODS = {"GET", "HEAD", "OPTIONS"}
_bearer = HTTPBearer(auto_error=False, description="An opjudge token: `Authorization: Bearer opj_...`")


async def get_settings(request: Request) -> Settings:
    return request.app.state.settings


async def get_database(request: Request) -> Database:
    return request.app.state.database


async def _session(request: Request, *, write: bool) -> AsyncIterator[Session]:
    database: Database = request.app.state.database
    session = database.new_session(write=write)  # connects only when first used
    try:
        yield session
    finally:
        if session.in_transaction():
            await run_in_threadpool(session.close)  # a rollback may wait on the database
        else:
            session.close()


async def get_session(request: Request) -> AsyncIterator[Session]:
    async for session in _session(request, write=request.method not in _READ_METHODS):
        yield session


async def get_write_session(request: Request) -> AsyncIterator[Session]:
    """A write session whatever the method (a GET that records an audit entry)."""
    async for session in _session(request, write=True):
        yield session


async def get_dispatcher(request: Request) -> RunDispatcher:
    return request.app.state.dispatcher


async def get_boards(request: Request) -> BoardCache:
    return request.app.state.boards


async def get_now(request: Request) -> datetime:
    clock: Callable[[], datetime] = request.app.state.clock
    return clock()


SettingsDep = Annotated[Settings, Depends(get_settings)]
DatabaseDep = Annotated[Database, Depends(get_database)]
SessionDep = Annotated[Session, Depends(get_session)]
WriteSessionDep = Annotated[Session, Depends(get_write_session)]
DispatcherDep = Annotated[RunDispatcher, Depends(get_dispatcher)]
BoardsDep = Annotated[BoardCache, Depends(get_boards)]
NowDep = Annotated[datetime, Depends(get_now)]


async def optional_principal(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal | None:
    """The caller when a bearer token is given (401 when it is bad), else None."""
    if credentials is None:
        return None
    token = credentials.credentials
    throttle, client = throttle_of(request), client_address(request)

    def lookup() -> Principal:
        # A valid token is never refused for what others did from its address (a lab behind one NAT,
        # a forged forwarded-for): tokens are 240 random bits, so the limit cannot be what stops
        # guessing them; it bounds the failed lookups an address makes (api/web/ratelimit.py).
        try:
            return authenticate(session, token=token, pepper=settings.pepper)
        except AuthError:
            throttle.check(client)  # over the limit: 429 instead of 401, and the failure is not counted
            throttle.failed(client)
            raise
        finally:
            # End the lookup's transaction: the route's own work starts a fresh one (and, on
            # SQLite, a write route takes the lock only when it writes).
            session.rollback()

    return await run_in_threadpool(lookup)


OptionalPrincipal = Annotated[Principal | None, Depends(optional_principal)]


async def current_principal(principal: OptionalPrincipal) -> Principal:
    if principal is None:
        raise AuthError("missing token: send `Authorization: Bearer <your opjudge token>`")
    return principal


def _a(word: str) -> str:
    """The word with its article: "an admin", "a team"."""
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


def _role(*roles: Role) -> Callable[[Principal], Awaitable[Principal]]:
    async def check(principal: Annotated[Principal, Depends(current_principal)]) -> Principal:
        if principal.role not in roles:
            wanted = " or ".join(r.value for r in roles)
            raise PermissionDeniedError(f"this needs {_a(wanted)} token; yours is {_a(principal.role.value)} token")
        return principal

    return check


CurrentPrincipal = Annotated[Principal, Depends(current_principal)]
CurrentTeam = Annotated[Principal, Depends(_role(Role.TEAM))]
ReviewerDep = Annotated[Principal, Depends(_role(Role.REVIEWER))]
AdminDep = Annotated[Principal, Depends(_role(Role.ADMIN))]
TeamOrAdmin = Annotated[Principal, Depends(_role(Role.TEAM, Role.ADMIN))]
