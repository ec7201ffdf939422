"""The route class of every page: typed errors become HTML pages, a missing login a redirect.

The JSON API answers the store's errors with `{"detail": ...}` (api/web/errors.py);
a person in a browser should see a page instead, with the same status code. A
custom route class catches the errors of dependencies too, which a try/except
inside each page function could not. Bad input (a form without a field, `?hall=abc`,
`/s/abc`) gets a page too, not the API's JSON list of validation errors.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import quote

from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.routing import APIRoute

from api.store.errors import AuthError
from api.web.errors import validation_errors, validation_reason, validation_status, value_error_reason
from api.web.pages.web import error_page, render
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
            except RequestValidationError as error:
                return invalid_input_page(request, error)
            except Exception as error:
                reason = value_error_reason(error)
                if reason is None:
                    raise
                return render(request, "error.html", status_code=422, title="Cannot use that", message=reason)

        return page_handler


def invalid_input_page(request: Request, error: RequestValidationError) -> HTMLResponse:
    """Bad input as a page: a form without its security token is refused like a forged one (403);
    a path that cannot name anything is not found (404); other bad fields are a bad request (400)."""
    from api.web.pages.auth import CsrfError  # noqa: PLC0415 - auth.py imports this module

    errors = validation_errors(error)
    if any(e["loc"] == ["body", "csrf"] and e["type"] == "missing" for e in errors):
        return error_page(request, CsrfError(CsrfError.MESSAGE))
    if validation_status(errors) == 404 or any(e["loc"][:1] == ["path"] for e in errors):
        message = f"there is no page at {request.url.path} ({validation_reason(errors)})"
        return render(request, "error.html", status_code=404, title="Not found", message=message)
    return render(request, "error.html", status_code=400, title="Cannot use that",
                  message=f"the request cannot be used: {validation_reason(errors)}")  # fmt: skip
