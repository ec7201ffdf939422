"""Failed token checks are rate-limited per client address, so tokens cannot be guessed at speed
(docs/operations.md, "Logins and rate limits").

Only failures count: a wrong, unknown or revoked token, on the API (bearer), at
the login form, or in a page's cookie. An honest team makes none, or a few while
pasting its token; a client that makes `auth_failures_per_minute` in a moving
minute is refused (429 with Retry-After) before its next token is even looked up,
so guessing tokens costs a minute per few dozen guesses. The counts live in the
`limits` library's storage (the engine behind slowapi): memory by default, which
is right for one API process; `OPJUDGE_RATE_LIMIT_STORAGE_URL=redis://...` shares
them between several.

The client address is the socket's peer, or the proxy's X-Forwarded-For where the
proxy is trusted (OPJUDGE_FORWARDED_ALLOW_IPS, applied by uvicorn before this).
"""

from __future__ import annotations

import logging
import math
import time

from limits import RateLimitItemPerMinute
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter
from starlette.requests import Request

from api.settings import Settings
from api.store.errors import QuotaExceededError

log = logging.getLogger("opjudge.ratelimit")

NAMESPACE = "opjudge-auth-failures"


class TooManyAuthFailuresError(QuotaExceededError):
    """This address failed too many token checks in the last minute (429)."""


class AuthThrottle:
    """`check(client)` before a token is looked up; `failed(client)` after one did not work."""

    def __init__(self, failures_per_minute: int, storage_url: str = "memory://") -> None:
        self.item = RateLimitItemPerMinute(failures_per_minute)
        self.limiter = MovingWindowRateLimiter(storage_from_string(storage_url))

    @classmethod
    def from_settings(cls, settings: Settings) -> AuthThrottle:
        return cls(settings.auth_failures_per_minute, settings.rate_limit_storage_url)

    def blocked_for_s(self, client: str) -> int:
        """0 when `client` may try a token now, else the seconds until it may."""
        if self.limiter.test(self.item, NAMESPACE, client):
            return 0
        reset = self.limiter.get_window_stats(self.item, NAMESPACE, client).reset_time
        return max(1, math.ceil(reset - time.time()))

    def check(self, client: str) -> None:
        """TooManyAuthFailuresError when `client` spent its failed checks for this minute."""
        wait_s = self.blocked_for_s(client)
        if wait_s:
            raise TooManyAuthFailuresError(
                f"too many failed token checks from your address; try again in {wait_s} s "
                "(check that you paste the whole token, starting with 'opj_')", retry_after_s=wait_s)

    def failed(self, client: str) -> None:
        if not self.limiter.hit(self.item, NAMESPACE, client):
            log.warning("client %s: over %s failed token checks a minute; refusing it for now", client, self.item)


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def throttle_of(request: Request) -> AuthThrottle:
    """The app's throttle (built with the app; api/web/app.py)."""
    return request.app.state.auth_throttle
