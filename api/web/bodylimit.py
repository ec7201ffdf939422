"""An ASGI middleware that refuses request bodies over the limit while they stream in.

A declared Content-Length over the limit is answered 413 before a byte of the
body is read; a body without one (chunked) is counted as it arrives and cut
off with 413 once it passes the limit, whatever the application was doing
with it. Nothing is parsed or stored first.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

_BODYLESS = {"GET", "HEAD", "OPTIONS", "DELETE"}


class _BodyTooLarge(Exception):
    pass


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, *, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in _BODYLESS:
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_body_bytes:
            await self._refuse(send, f"the request body of {declared} bytes is over the limit")
            return
        state = {"received": 0, "exceeded": False, "started": False}

        async def counting_receive() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                state["received"] += len(message.get("body", b""))
                if state["received"] > self.max_body_bytes:
                    state["exceeded"] = True
                    raise _BodyTooLarge
            return message

        async def guarded_send(message: Message) -> None:
            if state["exceeded"]:
                return  # whatever the app answers to the cut-off body, the answer is our 413
            if message["type"] == "http.response.start":
                state["started"] = True
            await send(message)

        try:
            await self.app(scope, counting_receive, guarded_send)
        except Exception:
            if not state["exceeded"]:
                raise
        if state["exceeded"] and not state["started"]:
            await self._refuse(send, "the request body grew over the limit")

    async def _refuse(self, send: Send, why: str) -> None:
        limit = self.max_body_bytes
        body = json.dumps({"detail": f"{why}: at most {limit} bytes ({limit / 1048576:.1f} MiB) per request"})
        headers: list[Any] = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),  # the rest of the body is never read
        ]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body.encode()})


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
