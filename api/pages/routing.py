"""The route class of every page: typed errors become HTML pages, a missing login a redirect.

The JSON API answers the store's errors with `{"detail": ...}` (api/errors.py);
a person in a browser should see a page instead, with the same status code. A
custom route class catches the errors of dependencies too, which a try/except
inside each page function could not.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import quote

from fastapi import Request, Response
from fastapi.responses import RedirectResponse
from fastapi.routing import APIRoute

from api.pages.web import error_page
from api.store import AuthError
from judge.errors import UserFacingError


def login_redirect(request: Request) -> RedirectResponse:
    """To the login page, coming back here afterwards."""
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/login?next={quote(target, safe='')}", status_code=303)


class PageRoute(APIRoute):
    """An APIRoute whose user-facing errors render as HTML."""

    def get_route_handler(self) -> Callable[[Request], Awaitable[Response]]:
        handler = super().get_route_handler()

        async def page_handler(request: Request) -> Response:
            try:
                return await handler(request)
            except AuthError as error:
                if request.method == "GET" and not request.url.path.endswith(".frag"):
                    return login_redirect(request)
                return error_page(request, error)
            except UserFacingError as error:
                return error_page(request, error)

        return page_handler
