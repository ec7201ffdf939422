"""The HTML board `/c/<slug>` and its fragment: the anonymous view is rendered once per board
version and sent compressed; a team's own view is still rendered for it (bench/load_api.py's target).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

import api.web.pages.board as board_module
from api.settings import Settings
from api.store.competitions import update_competition
from api.store.db import Database, Session
from api.web.app import create_app
from api.web.boardcache import BoardCache
from api.web.pages.auth import TOKEN_COOKIE
from api.web.pages.web import accepts_gzip
from tests.api.conftest import Clock, Contest, RecordingDispatcher
from tests.api.judging import judged, open_quotas

GZIP = {"Accept-Encoding": "gzip"}


@pytest.fixture
def pages(settings: Settings, database: Database, dispatcher: RecordingDispatcher, clock: Clock
          ) -> Iterator[TestClient]:  # fmt: skip
    app = create_app(settings, dispatcher, database=database, clock=clock)
    with TestClient(app) as client:
        yield client


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The shared board templates rendered, in order (to see what came from the cache); a viewer's
    own page goes through `render` and is not counted."""
    seen: list[str] = []

    def counting(real: Callable[..., str], name_at: int) -> Callable[..., str]:
        def wrapper(*args: Any, **kwargs: Any) -> str:
            seen.append(args[name_at])
            return real(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(board_module, "page_html", counting(board_module.page_html, 1))
    monkeypatch.setattr(board_module, "render_fragment", counting(board_module.render_fragment, 0))
    return seen


def _teams(html: str) -> list[str]:
    """The teams' names in board order (the baseline's reference row left out)."""
    return re.findall(r'<tr data-row="team-\d+".*?<span class="name">([^<]+)</span>', html, re.S)


def test_the_anonymous_board_is_rendered_once_per_version_and_sent_gzipped(
    pages: TestClient, session: Session, contest: Contest, clock: Clock, renders: list[str]
) -> None:
    open_quotas(session, contest, clock)
    judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5})
    first = pages.get("/c/cup", headers=GZIP)
    assert first.status_code == 200 and first.headers["content-encoding"] == "gzip"
    assert first.headers["vary"] == "Accept-Encoding, Cookie" and first.headers["cache-control"] == "no-cache"
    assert "script-src 'self'" in first.headers["content-security-policy"]
    assert _teams(first.text) == ["alpha"] and 'tag">you<' not in first.text
    again = pages.get("/c/cup", headers=GZIP)
    plain = pages.get("/c/cup", headers={"Accept-Encoding": "gzip;q=0, identity"})
    assert again.text == first.text == plain.text and "content-encoding" not in plain.headers
    assert renders == ["board.html"]  # the two later answers came from the cache
    assert pages.get("/c/cup", headers={"If-None-Match": first.headers["etag"]}).status_code == 304

    judged(session, contest, clock, "bravo", benchmarks={"b1": 0.25})  # a new board version
    moved = pages.get("/c/cup", headers=GZIP)
    assert _teams(moved.text) == ["bravo", "alpha"] and moved.headers["etag"] != first.headers["etag"]
    assert renders == ["board.html", "board.html"]
    assert pages.get("/c/cup", headers={"If-None-Match": first.headers["etag"]}).status_code == 200


def test_hall_mode_and_views_are_cached_apart(pages: TestClient, session: Session, contest: Contest,
                                             clock: Clock) -> None:  # fmt: skip
    open_quotas(session, contest, clock)
    judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5})
    plain, hall = pages.get("/c/cup"), pages.get("/c/cup?hall=1")
    assert 'class="hall"' in hall.text and 'class="hall"' not in plain.text
    assert "hall=1" in re.search(r'data-rows-url="([^"]+)"', hall.text).group(1)  # type: ignore[union-attr]
    assert pages.get("/c/cup?view=final").status_code == 403  # not published: not for anonymous readers
    assert pages.get("/c/nowhere").status_code == 404


def test_a_team_still_sees_its_own_row_and_a_frozen_board_live(
    pages: TestClient, session: Session, contest: Contest, clock: Clock, renders: list[str]
) -> None:
    open_quotas(session, contest, clock)
    judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5})
    judged(session, contest, clock, "bravo", benchmarks={"b1": 0.8})
    freeze = clock.now + timedelta(minutes=1)
    update_competition(session, slug=contest.slug, changes={"freeze_at": freeze}, actor=None, now=clock.now)
    clock.now = freeze + timedelta(minutes=5)
    judged(session, contest, clock, "bravo", benchmarks={"b1": 0.2})  # after the freeze: bravo would lead
    anonymous = pages.get("/c/cup", headers=GZIP).text
    assert _teams(anonymous) == ["alpha", "bravo"] and "Frozen at" in anonymous and "tag live" not in anonymous

    pages.cookies.set(TOKEN_COOKIE, contest.tokens["bravo"])
    own = pages.get("/c/cup", headers=GZIP)
    assert own.headers["cache-control"] == "no-store" and "etag" not in own.headers
    row = re.search(rf'<tr data-row="team-{contest.team_ids["bravo"]}".*?</tr>', own.text, re.S)
    assert row is not None and 'tag">you<' in row.group(0) and "tag live" in row.group(0)
    assert "your own results still update" in own.text
    pages.cookies.clear()
    assert pages.get("/c/cup").text == anonymous  # the personal view did not leak into the shared one
    assert renders == ["board.html"]  # one shared build; bravo's page was rendered for bravo alone


def test_a_frozen_board_does_not_count_the_runs_judged_after_the_freeze(
    pages: TestClient, session: Session, contest: Contest, clock: Clock
) -> None:
    """Its version and ETag stay put while others' runs finish after the freeze; a team's own view
    moves on with its own results."""
    open_quotas(session, contest, clock)
    judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5})
    freeze = clock.now + timedelta(minutes=1)
    update_competition(session, slug=contest.slug, changes={"freeze_at": freeze}, actor=None, now=clock.now)
    clock.now = freeze + timedelta(minutes=5)
    board_url = f"/api/v1/competitions/{contest.slug}/leaderboard"
    before = pages.get(board_url)
    judged(session, contest, clock, "bravo", benchmarks={"b1": 0.2})
    judged(session, contest, clock, "bravo", benchmarks={"b1": 0.3})
    after = pages.get(board_url)
    assert after.json()["frozen"] is True
    assert after.json()["version"] == before.json()["version"] and after.headers["etag"] == before.headers["etag"]
    assert after.json()["generated_at"] == before.json()["generated_at"]
    assert pages.get(board_url, headers={"If-None-Match": before.headers["etag"]}).status_code == 304

    bravo = {"Authorization": f"Bearer {contest.tokens['bravo']}"}
    seen = pages.get(board_url, headers=bravo).json()["version"]
    judged(session, contest, clock, "bravo", benchmarks={"b1": 0.25})
    assert pages.get(board_url, headers=bravo).json()["version"] != seen  # its own live row moved
    assert pages.get(board_url).json()["version"] == before.json()["version"]


def test_the_fragment_answers_204_while_current_and_is_shared(
    pages: TestClient, session: Session, contest: Contest, clock: Clock, renders: list[str]
) -> None:
    open_quotas(session, contest, clock)
    judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5})
    version = re.search(r'data-version="([^"]+)"', pages.get("/c/cup").text).group(1)  # type: ignore[union-attr]
    assert pages.get(f"/c/cup/board.frag?v={version}").status_code == 204
    fragment = pages.get("/c/cup/board.frag", headers=GZIP)
    assert fragment.headers["content-encoding"] == "gzip" and fragment.text.startswith('<section id="board"')
    assert pages.get("/c/cup/board.frag").text == fragment.text
    assert renders.count("_board.html") == 1

    judged(session, contest, clock, "bravo", benchmarks={"b1": 0.25})
    changed = pages.get(f"/c/cup/board.frag?v={version}")
    assert changed.status_code == 200 and _teams(changed.text) == ["bravo", "alpha"]

    pages.cookies.set(TOKEN_COOKIE, contest.tokens["alpha"])  # a team's fragment marks its row
    own = pages.get("/c/cup/board.frag")
    assert own.headers["cache-control"] == "no-store" and 'tag">you<' in own.text


def test_what_is_rendered_from_a_version_lives_and_goes_with_it(session: Session, contest: Contest,
                                                                  clock: Clock) -> None:  # fmt: skip
    open_quotas(session, contest, clock)
    judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5})
    boards = BoardCache(ttl_s=0)
    old = boards.get(session, competition="cup", now=clock.now)
    assert BoardCache.rendered(old, "page", lambda: "first") == "first"
    assert BoardCache.rendered(old, "page", lambda: "again") == "first"  # built once per version
    judged(session, contest, clock, "bravo", benchmarks={"b1": 0.25})
    new = boards.get(session, competition="cup", now=clock.now)
    assert new.board.version > old.board.version and new.renders == {}
    assert old.renders == {}  # never served again: dropped at once, not when the board leaves the cache


@pytest.mark.parametrize(("header", "gzip"), [
    ("gzip", True), ("gzip, deflate, br", True), ("br;q=1.0, gzip;q=0.8", True), ("*", True),
    ("", False), ("identity", False), ("gzip;q=0", False), ("*, gzip;q=0", False), ("x-gzip", True),
    ("gzip;q=zero", False),
])  # fmt: skip
def test_accept_encoding_is_read_with_its_qualities(header: str, gzip: bool) -> None:
    assert accepts_gzip(header) is gzip
