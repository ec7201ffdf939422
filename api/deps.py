"""Typed dependencies for routes: the session, the caller by role, the dispatcher, the clock.

Reads (GET, HEAD) get a read-only session; anything else a write session,
which on SQLite takes the write lock up front (see api/store/db.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from api.boardcache import BoardCache
from api.dispatch import RunDispatcher
from api.settings import Settings
from api.store import AuthError, Database, PermissionDeniedError, Principal, Role, Session, authenticate

_READ_METHODS = {"GET", "HEAD", "OPTIONS"}
_bearer = HTTPBearer(auto_error=False, description="An opjudge token: `Authorization: Bearer opj_...`")


def get_settings(request: Request) -> Settings:
    return request.app.state.settings


def get_database(request: Request) -> Database:
    return request.app.state.database


def get_session(request: Request) -> Iterator[Session]:
    database: Database = request.app.state.database
    with database.session(write=request.method not in _READ_METHODS) as session:
        yield session


def get_write_session(request: Request) -> Iterator[Session]:
    """A write session whatever the method (a GET that records an audit entry)."""
    database: Database = request.app.state.database
    with database.session(write=True) as session:
        yield session


def get_dispatcher(request: Request) -> RunDispatcher:
    return request.app.state.dispatcher


def get_boards(request: Request) -> BoardCache:
    return request.app.state.boards


def get_now(request: Request) -> datetime:
    clock: Callable[[], datetime] = request.app.state.clock
    return clock()


SettingsDep = Annotated[Settings, Depends(get_settings)]
DatabaseDep = Annotated[Database, Depends(get_database)]
SessionDep = Annotated[Session, Depends(get_session)]
WriteSessionDep = Annotated[Session, Depends(get_write_session)]
DispatcherDep = Annotated[RunDispatcher, Depends(get_dispatcher)]
BoardsDep = Annotated[BoardCache, Depends(get_boards)]
NowDep = Annotated[datetime, Depends(get_now)]


def optional_principal(
    session: SessionDep,
    settings: SettingsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal | None:
    """The caller when a bearer token is given (401 when it is bad), else None."""
    if credentials is None:
        return None
    principal = authenticate(session, token=credentials.credentials, pepper=settings.pepper)
    # End the lookup's transaction: the route's own work starts a fresh one (and, on
    # SQLite, a write route takes the lock only when it writes).
    session.rollback()
    return principal


OptionalPrincipal = Annotated[Principal | None, Depends(optional_principal)]


def current_principal(principal: OptionalPrincipal) -> Principal:
    if principal is None:
        raise AuthError("missing token: send `Authorization: Bearer <your opjudge token>`")
    return principal


def _role(*roles: Role) -> Callable[[Principal], Principal]:
    def check(principal: Annotated[Principal, Depends(current_principal)]) -> Principal:
        if principal.role not in roles:
            wanted = " or ".join(r.value for r in roles)
            raise PermissionDeniedError(f"this needs a {wanted} token; yours is a {principal.role.value} token")
        return principal

    return check


CurrentPrincipal = Annotated[Principal, Depends(current_principal)]
CurrentTeam = Annotated[Principal, Depends(_role(Role.TEAM))]
ReviewerDep = Annotated[Principal, Depends(_role(Role.REVIEWER))]
AdminDep = Annotated[Principal, Depends(_role(Role.ADMIN))]
TeamOrAdmin = Annotated[Principal, Depends(_role(Role.TEAM, Role.ADMIN))]
