"""Logout revokes the page session; failed token checks are rate-limited per address."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from api.settings import Settings
from api.store.db import Database
from api.web.app import create_app
from api.web.pages.auth import LOGIN_CSRF_COOKIE, TOKEN_COOKIE, csrf_token
from tests.api.conftest import Clock, Contest, RecordingDispatcher

pytestmark = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
LIMIT = 5  # failed checks a minute in these tests (production: 30)


@pytest.fixture
def limited(settings: Settings) -> Settings:
    return settings.model_copy(update={"auth_failures_per_minute": LIMIT})


@pytest.fixture
def pages(limited: Settings, database: Database, dispatcher: RecordingDispatcher, clock: Clock) -> Iterator[TestClient]:
    app = create_app(limited, dispatcher, database=database, clock=clock)
    with TestClient(app) as client:
        yield client


def _login(client: TestClient, token: str) -> str:
    """Log in through the form; the session cookie's value."""
    nonce = client.get("/login").cookies.get(LOGIN_CSRF_COOKIE) or client.cookies.get(LOGIN_CSRF_COOKIE)
    done = client.post("/login", data={"token": token, "csrf": nonce}, follow_redirects=False)
    assert done.status_code == 303, done.text[:300]
    return done.cookies[TOKEN_COOKIE]


def _logged_in(client: TestClient, cookie: str) -> bool:
    client.cookies.clear()
    client.cookies.set(TOKEN_COOKIE, cookie)
    return client.get("/team", follow_redirects=False).status_code == 200


def test_logout_revokes_the_session_on_the_server(pages: TestClient, contest: Contest, limited: Settings) -> None:
    cookie = _login(pages, contest.tokens["alpha"])
    assert cookie.startswith("opjs_") and contest.tokens["alpha"] not in cookie  # the token is not in the cookie
    copy = cookie  # another browser holding the same cookie
    assert _logged_in(pages, cookie)
    out = pages.post("/logout", data={"csrf": csrf_token(limited, cookie)}, follow_redirects=False)
    assert out.status_code == 303
    assert not _logged_in(pages, copy)  # the copy is worthless now
    # The team's token itself still works on the API: logging out ends the page session only.
    assert pages.get("/api/v1/me", headers=contest.auth("alpha")).status_code == 200


def test_revoking_the_token_ends_its_sessions(pages: TestClient, contest: Contest) -> None:
    cookie = _login(pages, contest.tokens["bravo"])
    assert _logged_in(pages, cookie)
    pages.cookies.clear()
    tokens = pages.get(f"/api/v1/admin/teams/{contest.team_ids['bravo']}/tokens", headers=contest.auth("admin")).json()
    assert pages.delete(f"/api/v1/admin/tokens/{tokens[0]['token_id']}", headers=contest.auth("admin")).is_success
    assert not _logged_in(pages, cookie)


def test_wrong_tokens_are_refused_after_the_limit(pages: TestClient, contest: Contest) -> None:
    wrong = {"Authorization": "Bearer opj_team_guessguessguessguess"}
    for _ in range(LIMIT):
        assert pages.get("/api/v1/me", headers=wrong).status_code == 401
    refused = pages.get("/api/v1/me", headers=wrong)
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
    assert "too many failed token checks" in refused.json()["detail"]
    # A right token is never refused for what failed from its address (a lab behind one NAT, a
    # forged forwarded-for): the API and the login form both take it.
    assert pages.get("/api/v1/me", headers=contest.auth("alpha")).status_code == 200
    assert pages.get("/api/v1/admin/competitions", headers=contest.auth("admin")).status_code == 200
    nonce = pages.get("/login").cookies.get(LOGIN_CSRF_COOKIE) or pages.cookies.get(LOGIN_CSRF_COOKIE)
    assert pages.post("/login", data={"token": contest.tokens["alpha"], "csrf": nonce},
                      follow_redirects=False).status_code == 303


def test_a_stale_page_cookie_is_cleared_and_never_counted(pages: TestClient, contest: Contest) -> None:
    cookie = _login(pages, contest.tokens["alpha"])
    out = pages.post("/logout", data={"csrf": csrf_token(pages.app.state.settings, cookie)}, follow_redirects=False)
    assert out.status_code == 303
    pages.cookies.clear()
    for _ in range(3 * LIMIT):  # a board left open polls with the revoked cookie
        pages.cookies.set(TOKEN_COOKIE, cookie)
        answer = pages.get(f"/c/{contest.slug}", follow_redirects=False)
        assert answer.status_code == 200
        assert f'{TOKEN_COOKIE}=""' in answer.headers.get("set-cookie", "")  # deleted on the way out
    wrong = {"Authorization": "Bearer opj_team_guessguessguessguess"}
    assert pages.get("/api/v1/me", headers=wrong).status_code == 401  # the stale cookie counted nothing


def test_other_addresses_and_honest_teams_never_meet_it(
    limited: Settings, database: Database, dispatcher: RecordingDispatcher, clock: Clock, contest: Contest
) -> None:
    app = create_app(limited, dispatcher, database=database, clock=clock)
    with TestClient(app, client=("192.0.2.1", 40000)) as guesser, TestClient(app, client=("192.0.2.2", 40000)) as team:
        for _ in range(LIMIT + 1):
            guesser.get("/api/v1/me", headers={"Authorization": "Bearer opj_team_nope"})
        assert guesser.get("/api/v1/me", headers={"Authorization": "Bearer opj_team_nope"}).status_code == 429
        assert guesser.get("/api/v1/me", headers=contest.auth("alpha")).status_code == 200
        for _ in range(10 * LIMIT):  # right tokens, as often as a busy team asks: never counted
            assert team.get("/api/v1/me", headers=contest.auth("alpha")).status_code == 200


def test_failed_logins_count_too(pages: TestClient, contest: Contest) -> None:
    for _ in range(LIMIT):
        nonce = pages.get("/login").cookies.get(LOGIN_CSRF_COOKIE) or pages.cookies.get(LOGIN_CSRF_COOKIE)
        assert pages.post("/login", data={"token": "opj_team_wrong", "csrf": nonce}).status_code == 401
    nonce = pages.get("/login").cookies.get(LOGIN_CSRF_COOKIE) or pages.cookies.get(LOGIN_CSRF_COOKIE)
    assert pages.post("/login", data={"token": "opj_team_wrong", "csrf": nonce}).status_code == 429
    assert pages.get("/api/v1/me", headers={"Authorization": "Bearer opj_team_wrong"}).status_code == 429


def test_the_client_is_the_rightmost_hop_the_proxy_did_not_write(
    limited: Settings, database: Database, dispatcher: RecordingDispatcher, clock: Clock, contest: Contest
) -> None:
    """Behind a proxy that appends: a forged leftmost entry names nobody (uvicorn's proxy middleware with
    the proxy's own address trusted, as `opjudge serve` runs it)."""
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    app = ProxyHeadersMiddleware(create_app(limited, dispatcher, database=database, clock=clock),
                                 trusted_hosts=limited.forwarded_allow_ips)
    wrong = {"Authorization": "Bearer opj_team_nope"}
    with TestClient(app, client=("127.0.0.1", 40000)) as proxy:  # the proxy itself is the peer
        for _ in range(LIMIT):  # the attacker at 198.51.100.7 writes the victim's address first
            forged = {**wrong, "X-Forwarded-For": "203.0.113.5, 198.51.100.7"}
            assert proxy.get("/api/v1/me", headers=forged).status_code == 401
        assert proxy.get("/api/v1/me", headers={**wrong, "X-Forwarded-For": "198.51.100.7"}).status_code == 429
        # The victim's own failures are its own: its count is untouched.
        assert proxy.get("/api/v1/me", headers={**wrong, "X-Forwarded-For": "203.0.113.5"}).status_code == 401


def test_a_star_for_the_trusted_proxies_is_refused(settings: Settings) -> None:
    with pytest.raises(ValueError, match="not '\\*'"):
        Settings.model_validate({**settings.model_dump(), "forwarded_allow_ips": "*"})


def test_a_form_with_too_many_fields_is_a_413_that_says_so(
    pages: TestClient, contest: Contest, limited: Settings
) -> None:
    cookie = _login(pages, contest.tokens["alpha"])
    pages.cookies.set(TOKEN_COOKIE, cookie)
    fields = {"csrf": csrf_token(limited, cookie), "submission_ids": [str(i) for i in range(1001)]}
    answer = pages.post("/team/finals", data=fields, follow_redirects=False)
    assert answer.status_code == 413 and "more fields than a page takes" in answer.text, answer.text[-1500:]
    assert "there is no page" not in answer.text
