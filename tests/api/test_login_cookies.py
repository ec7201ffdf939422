"""The login cookies are Secure on HTTPS, and always where TLS ends at a proxy (OPJUDGE_SECURE_COOKIES)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api.settings import Settings
from api.store.db import Database
from api.web.app import create_app
from api.web.pages.auth import LOGIN_CSRF_COOKIE, TOKEN_COOKIE
from tests.api.conftest import Clock, Contest, RecordingDispatcher


def _login(settings: Settings, database: Database, dispatcher: RecordingDispatcher, clock: Clock,
           token: str, base_url: str) -> list[str]:  # fmt: skip
    """The Set-Cookie headers of the login form and of a successful login."""
    app = create_app(settings, dispatcher, database=database, clock=clock)
    with TestClient(app, base_url=base_url) as client:
        form = client.get("/login")
        nonce = form.cookies.get(LOGIN_CSRF_COOKIE) or client.cookies.get(LOGIN_CSRF_COOKIE)
        assert nonce, form.headers.get_list("set-cookie")
        client.cookies.clear()
        client.cookies.set(LOGIN_CSRF_COOKIE, nonce)  # as a browser on HTTPS would send it back
        done = client.post("/login", data={"token": token, "csrf": nonce}, follow_redirects=False)
        assert done.status_code == 303, done.text[:300]
        return form.headers.get_list("set-cookie") + done.headers.get_list("set-cookie")


@pytest.mark.parametrize(("secure_cookies", "base_url", "secure"), [
    (False, "http://testserver", False),  # `make run` on 127.0.0.1: plain HTTP works
    (False, "https://testserver", True),
    (True, "http://testserver", True),  # behind the proxy the app sees http, the browser https
])
def test_login_cookies_are_secure_where_they_must_be(
    settings: Settings, database: Database, dispatcher: RecordingDispatcher, clock: Clock, contest: Contest,
    secure_cookies: bool, base_url: str, secure: bool,
) -> None:
    configured = settings.model_copy(update={"secure_cookies": secure_cookies})
    cookies = _login(configured, database, dispatcher, clock, contest.tokens["alpha"], base_url)
    token_cookie = next(c for c in cookies if c.startswith(f"{TOKEN_COOKIE}="))
    assert ("; secure" in token_cookie.lower()) is secure, token_cookie
    deleted = f'{LOGIN_CSRF_COOKIE}=""'
    form_nonces = [c for c in cookies if c.startswith(f"{LOGIN_CSRF_COOKIE}=") and not c.startswith(deleted)]
    assert form_nonces and all(("; secure" in c.lower()) is secure for c in form_nonces), form_nonces
