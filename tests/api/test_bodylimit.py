"""The body limit acts before the application reads anything, and cuts a streaming body off."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from api.web.bodylimit import BodyLimitMiddleware


class _App:
    def __init__(self) -> None:
        self.called = False
        self.read = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.called = True
        while True:
            message = await receive()
            self.read += len(message.get("body", b""))
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def _run(headers: list[tuple[bytes, bytes]], chunks: list[bytes]) -> tuple[_App, list[dict[str, Any]], int]:
    app, sent, pulled = _App(), [], 0

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        pulled += 1
        body = chunks[pulled - 1] if pulled <= len(chunks) else b""
        return {"type": "http.request", "body": body, "more_body": pulled < len(chunks)}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/api/v1/submissions", "headers": headers}
    asyncio.run(BodyLimitMiddleware(app, max_body_bytes=1000)(scope, receive, send))
    return app, sent, pulled


def test_declared_length_over_the_limit_is_refused_unread() -> None:
    app, sent, pulled = _run([(b"content-length", b"100000000")], [b"x" * 10])
    assert not app.called and pulled == 0
    assert sent[0]["status"] == 413 and (b"connection", b"close") in sent[0]["headers"]
    assert "100000000 bytes is over the limit" in json.loads(sent[1]["body"])["detail"]


def test_streamed_body_is_cut_off_at_the_limit() -> None:
    app, sent, pulled = _run([], [b"x" * 400] * 10)
    assert app.called and pulled == 3  # stopped at the chunk that crossed 1000 bytes
    assert [m["status"] for m in sent if m["type"] == "http.response.start"] == [413]


def test_small_bodies_pass() -> None:
    app, sent, _ = _run([(b"content-length", b"800")], [b"x" * 400, b"x" * 400])
    assert app.read == 800 and sent[0]["status"] == 200
