"""uvicorn's limits for `opjudge serve`: idle, slow and oversized connections are closed.

uvicorn closes an idle keep-alive connection (`timeout_keep_alive`) but sets no
timer while a request's headers or body are still arriving: a client that sends
half a request holds its connection (and a slot of `limit_concurrency`) for ever.
`DeadlineProtocol` gives each request `request_timeout_s` from its first byte (or
from the connection's opening) to arrive in full, then closes the connection.
Once the request is in, the application's own time is not limited here.

The reverse proxy in front should apply the same limits first (docs/operations.md,
"The reverse proxy"): these are the last line, for a proxy that forwards slowly.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from api.settings import Settings

log = logging.getLogger("opjudge.http")


@dataclass(frozen=True)
class ServerLimits:
    request_timeout_s: float  # headers and body of one request must arrive within this
    keepalive_timeout_s: int  # an idle keep-alive connection is closed after this
    max_header_bytes: int  # a request line plus headers longer than this gets 400 and a close
    limit_concurrency: int  # connections and requests at once; beyond it, 503
    backlog: int  # connections the kernel queues before accept

    @classmethod
    def from_settings(cls, settings: Settings) -> ServerLimits:
        return cls(settings.http_request_timeout_s, settings.http_keepalive_timeout_s,
                   settings.http_max_header_bytes, settings.http_limit_concurrency, settings.http_backlog)  # fmt: skip


class DeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol, with a deadline on each request's arrival (`request_timeout_s`)."""

    request_timeout_s = 60.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._deadline is None and not self._request_in():
            self._arm()  # the next request on a keep-alive connection starts arriving
        super().data_received(data)
        if self._request_in():
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _request_in(self) -> bool:
        return self.conn.their_state in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR)

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.request_timeout_s, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if self.transport.is_closing() or self._request_in():
            return
        client = f"{self.client[0]}:{self.client[1]}" if self.client else "a client"
        log.warning("closing the connection of %s: no complete request within %.1f s", client, self.request_timeout_s)
        self.transport.close()


def protocol_class(request_timeout_s: float) -> type[DeadlineProtocol]:
    """A `DeadlineProtocol` with this deadline (uvicorn instantiates the class it is given)."""
    return type("OpjudgeHttpProtocol", (DeadlineProtocol,), {"request_timeout_s": request_timeout_s})


def uvicorn_options(limits: ServerLimits) -> dict[str, Any]:
    """Keyword arguments for `uvicorn.run` / `uvicorn.Config` that apply `limits`."""
    return {
        "http": protocol_class(limits.request_timeout_s),
        "timeout_keep_alive": limits.keepalive_timeout_s,
        "h11_max_incomplete_event_size": limits.max_header_bytes,
        "limit_concurrency": limits.limit_concurrency,
        "backlog": limits.backlog,
    }
