"""Headers every answer carries: `nosniff` always, `Cache-Control: no-store` on JSON by default.

JSON answers hold team data (submissions, tokens, reports); no shared cache or
browser history should keep them. A route that chose its own caching (the
public leaderboard's `no-cache` with an ETag, the static files) keeps it: this
only adds a header that is missing. A pure ASGI middleware, so streamed bodies
pass through untouched.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

NOSNIFF = "nosniff"
NO_STORE = "no-store"


class SecurityHeadersMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("X-Content-Type-Options", NOSNIFF)
                if headers.get("content-type", "").startswith("application/json"):
                    headers.setdefault("Cache-Control", NO_STORE)
            await send(message)

        await self.app(scope, receive, send_with_headers)
