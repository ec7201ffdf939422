"""A connection with unfinished headers or body is closed; complete requests still work."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn

from api.web.http_server import ServerLimits, uvicorn_options

DEADLINE_S = 0.5
WAIT_S = 20.0  # far above the deadline: only a connection that is never closed fails


async def _app(scope, receive, send):  # type: ignore[no-untyped-def]
    assert scope["type"] == "http"
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"ok"})


@pytest.fixture
def server() -> Iterator[int]:
    limits = ServerLimits(request_timeout_s=DEADLINE_S, keepalive_timeout_s=5, max_header_bytes=8192,
                          limit_concurrency=64, backlog=64)  # fmt: skip
    config = uvicorn.Config(_app, host="127.0.0.1", port=0, log_level="warning", lifespan="off",
                            **uvicorn_options(limits))  # fmt: skip
    instance = uvicorn.Server(config)
    thread = threading.Thread(target=instance.run, daemon=True)
    thread.start()
    give_up = time.monotonic() + 30
    while not instance.started:
        assert time.monotonic() < give_up, "the server did not start"
        time.sleep(0.05)
    yield instance.servers[0].sockets[0].getsockname()[1]  # port 0: whichever the kernel gave
    instance.should_exit = True
    thread.join(timeout=30)


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """True when the server closes `sock` (EOF or reset) within `seconds`."""
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
        return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


@pytest.mark.parametrize("partial", [
    b"GET / HTTP/1.1\r\nHost: x\r\n",  # headers never finished
    b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly a few bytes",  # body never finished
    b"",  # nothing at all
])  # fmt: skip
def test_unfinished_request_is_closed(server: int, partial: bytes) -> None:
    with socket.create_connection(("127.0.0.1", server)) as sock:
        sock.sendall(partial)
        assert _closed_within(sock, WAIT_S)


def test_complete_requests_on_one_connection_are_answered(server: int) -> None:
    with socket.create_connection(("127.0.0.1", server)) as sock:
        sock.settimeout(WAIT_S)
        for _ in range(2):
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = sock.recv(4096)
            assert answer.startswith(b"HTTP/1.1 200") and b"ok" in answer
            # Idle between requests is keep-alive's to limit (5 s here), not the request deadline's.
            time.sleep(DEADLINE_S * 1.5)
        sock.sendall(b"GET / HTTP/1.1\r\n")  # a third request that never finishes: closed
        assert _closed_within(sock, WAIT_S)


def test_oversized_headers_are_refused(server: int) -> None:
    with socket.create_connection(("127.0.0.1", server)) as sock:
        sock.settimeout(WAIT_S)
        # h11 counts what is buffered between reads: a header larger than one socket read (256 KiB).
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (1024 * 1024) + b"\r\n\r\n")
        assert sock.recv(4096).startswith(b"HTTP/1.1 400")
