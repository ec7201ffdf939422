"""Logging in on the pages: the team's token in an HttpOnly, SameSite=Strict cookie, and CSRF checks.

The cookie holds a page session's secret (api/store/page_sessions.py): the
session stands for the token the team logged in with, so a revoked token stops
working at once, and logging out revokes the session on the server, so a copy of
the cookie is worthless afterwards. A cookie that holds an API token itself (set
by hand, or by a server from before sessions) is still read as that token.
Failed checks count towards the address's limit (api/web/ratelimit.py).
Forms carry a CSRF token that is an HMAC of the session token under the server's
pepper: a page rendered for this session is the only place to learn it. The
login form, which has no session yet, uses a double-submit cookie instead.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from api.settings import Settings
from api.store.db import Session
from api.store.enums import Role
from api.store.errors import AuthError, PermissionDeniedError
from api.store.page_sessions import close_page_session, is_session_secret, open_page_session, session_principal
from api.store.tokens import authenticate
from api.store.views import Principal
from api.web.deps import NowDep, SessionDep, SettingsDep
from api.web.pages.routing import PageRoute
from api.web.pages.web import render
from api.web.ratelimit import client_address, throttle_of

TOKEN_COOKIE = "opjudge_token"
LOGIN_CSRF_COOKIE = "opjudge_login_csrf"
COOKIE_MAX_AGE_S = 7 * 24 * 3600  # a contest week; logging out or revoking the token ends it sooner

router = APIRouter(include_in_schema=False, route_class=PageRoute)


class CsrfError(PermissionDeniedError):
    """A form without the right CSRF token (403)."""

    MESSAGE = "the form's security token is missing or stale; reload the page and try again"


def csrf_token(settings: Settings, token: str) -> str:
    """The CSRF token of a session: HMAC(pepper, token), never the token itself."""
    return hmac.new(settings.pepper, b"opjudge-csrf\0" + token.encode(), hashlib.sha256).hexdigest()[:40]


async def page_viewer(request: Request, session: SessionDep, settings: SettingsDep, now: NowDep) -> Principal | None:
    """The logged-in caller of a page, or None; also sets `request.state` for the templates.

    `async`: a reader without a cookie costs no thread (the anonymous board is served
    from the event loop); the token lookup, which queries the database, runs in the pool.
    """
    request.state.viewer = None
    request.state.csrf = ""
    token = request.cookies.get(TOKEN_COOKIE)
    if not token:
        return None

    def lookup() -> Principal | None:
        try:
            return _cookie_principal(session, settings, token, now)
        except AuthError:
            # A revoked or stale cookie reads as logged out, and is cleared (api/web/app.py, on the way
            # out). It is not counted as a failed check: a page session's secret is 256 random bits,
            # nobody guesses one, and a board left open polls every 3 s.
            request.state.clear_session_cookie = True
            return None
        finally:
            session.rollback()  # end the lookup's transaction, as api/web/deps.py does

    principal = await run_in_threadpool(lookup)
    if principal is None:
        return None
    request.state.viewer = principal
    request.state.csrf = csrf_token(settings, token)
    return principal


PageViewer = Annotated[Principal | None, Depends(page_viewer)]


def require_viewer(request: Request, viewer: PageViewer) -> Principal:
    """The logged-in caller; AuthError (rendered as a login prompt) when there is none."""
    if viewer is None:
        raise AuthError("log in with your team's token to see this page")
    return viewer


LoggedIn = Annotated[Principal, Depends(require_viewer)]


def check_csrf(request: Request, settings: Settings, submitted: str) -> None:
    """Refuse a form whose CSRF token is not this session's."""
    token = request.cookies.get(TOKEN_COOKIE, "")
    if not token or not submitted or not hmac.compare_digest(csrf_token(settings, token), submitted):
        raise CsrfError(CsrfError.MESSAGE)


def home_of(principal: Principal) -> str:
    if principal.role is Role.ADMIN:
        return "/admin"
    if principal.role is Role.REVIEWER:
        return "/review"
    return "/team"


def _safe_next(target: str | None) -> str | None:
    # Only local paths: an open redirect would let a link send a fresh login elsewhere.
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return None


@router.get("/login")
def login_form(request: Request, viewer: Annotated[Principal | None, Depends(page_viewer)],
               next: str | None = None) -> Response:  # noqa: A002 - the query parameter's name
    """The login page: paste the token you were given."""
    nonce = secrets.token_urlsafe(24)
    response = render(request, "login.html", next=_safe_next(next) or "", login_csrf=nonce, error=None)
    response.set_cookie(LOGIN_CSRF_COOKIE, nonce, httponly=True, samesite="strict", path="/login",
                        secure=_secure(request))  # fmt: skip
    return response


@router.post("/login")
def login_submit(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    now: NowDep,
    token: Annotated[str, Form()],
    csrf: Annotated[str, Form()] = "",
    next: Annotated[str, Form()] = "",  # noqa: A002
) -> Response:
    """Check the token; on success keep it in the session cookie and go on."""
    request.state.viewer, request.state.csrf = None, ""
    expected = request.cookies.get(LOGIN_CSRF_COOKIE, "")
    if not expected or not hmac.compare_digest(expected, csrf):
        return _login_again(request, next, "The login form expired; please try again.", 403)
    token = token.strip()
    throttle, client = throttle_of(request), client_address(request)
    try:
        principal = _check(session, settings, token)
    except AuthError as error:  # a right token always logs in, whatever failed from this address
        throttle.check(client)
        throttle.failed(client)
        return _login_again(request, next, f"That token does not work: {error}.", 401)
    secret = open_page_session(session, token_id=principal.token_id, pepper=settings.pepper, now=now,
                               max_age_s=COOKIE_MAX_AGE_S)  # fmt: skip
    response = RedirectResponse(_safe_next(next) or home_of(principal), status_code=303)
    response.set_cookie(TOKEN_COOKIE, secret, max_age=COOKIE_MAX_AGE_S, httponly=True, samesite="strict",
                        path="/", secure=_secure(request))  # fmt: skip
    response.delete_cookie(LOGIN_CSRF_COOKIE, path="/login")
    return response


@router.post("/logout")
def logout(request: Request, session: SessionDep, settings: SettingsDep, now: NowDep,
           csrf: Annotated[str, Form()] = "") -> Response:
    """End the page session on the server and forget its cookie (CSRF-checked, so another
    site cannot log you out). A cookie holding a token itself is only forgotten: revoking
    the token would end the team's API access too (organisers do that: DELETE .../tokens/<id>)."""
    check_csrf(request, settings, csrf)
    secret = request.cookies.get(TOKEN_COOKIE, "")
    if is_session_secret(secret):
        close_page_session(session, secret=secret, pepper=settings.pepper, now=now)
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(TOKEN_COOKIE, path="/")
    return response


def _secure(request: Request) -> bool:
    """Mark the cookies Secure on HTTPS, or always where TLS ends at a proxy (OPJUDGE_SECURE_COOKIES):
    the token cookie is the API token itself, and must never travel over plain HTTP."""
    settings: Settings = request.app.state.settings
    return settings.secure_cookies or request.url.scheme == "https"


def _cookie_principal(session: Session, settings: Settings, cookie: str, now: datetime) -> Principal:
    if is_session_secret(cookie):
        return session_principal(session, secret=cookie, pepper=settings.pepper, now=now)
    return authenticate(session, token=cookie, pepper=settings.pepper)


def _check(session: Session, settings: Settings, token: str) -> Principal:
    try:
        return authenticate(session, token=token, pepper=settings.pepper)
    finally:
        session.rollback()


def _login_again(request: Request, next_path: str, message: str, status: int) -> Response:
    nonce = secrets.token_urlsafe(24)
    response = render(request, "login.html", status_code=status, next=_safe_next(next_path) or "",
                      login_csrf=nonce, error=message)  # fmt: skip
    response.set_cookie(LOGIN_CSRF_COOKIE, nonce, httponly=True, samesite="strict", path="/login",
                        secure=_secure(request))  # fmt: skip
    return response
