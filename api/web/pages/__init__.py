"""Server-rendered pages: leaderboard, submission reports, team, organiser and reviewer pages.

`install(app)` is the hook api/web/app.py calls; the pages use the same store
functions and dependencies as the JSON API, and add no state of their own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import APIRouter, FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import Response
from starlette.exceptions import HTTPException

from api.web.pages import admin, auth, board, finals, organisers, problem, report, review, similarity, static, team
from api.web.pages.auth import TOKEN_COOKIE
from api.web.pages.web import render

pages_router = APIRouter(include_in_schema=False)
for _module in (static, auth, board, problem, report, team, finals, admin, organisers, similarity, review):
    pages_router.include_router(_module.router)


_TITLES = {404: "Not found", 405: "Not allowed", 413: "Too large"}


async def _no_such_page(request: Request, error: Exception) -> Response:
    """A path no route has (404), or a page path asked with the wrong method (405, e.g. opening a
    form's target in the browser), as a page; the JSON API keeps its `{"detail": ...}`."""
    assert isinstance(error, HTTPException)
    if request.url.path.startswith("/api/"):
        return await http_exception_handler(request, error)
    status = error.status_code
    if status == 405:
        message = f"{request.url.path} takes a form, not a {request.method}; go back and send the form again"
    elif status == 404:
        message = f"there is no page at {request.url.path}"
    elif status == 400 and "Too many fields" in str(error.detail):  # Starlette's form parser: 1,000 at most
        status, message = 413, ("the form sent more fields than a page takes (at most 1,000); "
                                "choose fewer items and send it again")
    else:
        message = str(error.detail)
    response = render(request, "error.html", status_code=status, title=_TITLES.get(status, "Error"),
                      message=message)
    response.headers.update(error.headers or {})
    return response


def install(app: FastAPI) -> None:
    """Add the pages and their assets to the application, and pages for paths that name none."""
    app.include_router(pages_router)
    app.add_exception_handler(HTTPException, _no_such_page)
    app.middleware("http")(_clear_stale_session_cookie)


async def _clear_stale_session_cookie(request: Request,
                                      call_next: Callable[[Request], Awaitable[Response]]) -> Response:
    """A page whose session cookie no longer works (revoked, expired) says so to the browser: the cookie
    is deleted, so a board left open does not send it again on every poll (auth.page_viewer)."""
    response = await call_next(request)
    if getattr(request.state, "clear_session_cookie", False):
        response.delete_cookie(TOKEN_COOKIE, path="/")
    return response
