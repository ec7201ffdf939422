"""The organisers' pages without a browser: the team's finals page, and the organisers' final-ranking page."""

from __future__ import annotations

import html
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.settings import Settings
from api.store.db import Database, Session
from api.store.ranking import leaderboard
from api.web.app import create_app
from api.web.pages.auth import TOKEN_COOKIE, csrf_token
from tests.api.conftest import START, Clock, Contest, RecordingDispatcher
from tests.api.helpers import public_id, stored_id, upload
from tests.api.judging import judged, open_quotas
from tests.api.test_organiser_jobs_api import SYSTEM, worker_context
from workers.organiser_jobs import run_organiser_job


@pytest.fixture
def pages(settings: Settings, database: Database, dispatcher: RecordingDispatcher, clock: Clock
          ) -> Iterator[TestClient]:  # fmt: skip
    with TestClient(create_app(settings, dispatcher, database=database, clock=clock)) as client:
        yield client


def _as(pages: TestClient, settings: Settings, contest: Contest, who: str) -> str:
    pages.cookies.set(TOKEN_COOKIE, contest.tokens[who])
    return csrf_token(settings, contest.tokens[who])


def test_a_team_ticks_its_finals_on_the_page(
    pages: TestClient, settings: Settings, session: Session, contest: Contest, clock: Clock
) -> None:
    open_quotas(session, contest, clock, ranked_by="chosen", finals_limit=1)
    good = judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5}, private={"p1": 0.5})
    latest = judged(session, contest, clock, "alpha", benchmarks={"b1": 0.8}, private={"p1": 0.8})
    csrf = _as(pages, settings, contest, "alpha")
    good_id, latest_id = public_id(session, good), public_id(session, latest)  # what the team sees
    assert 'href="/team/finals"' in pages.get("/team").text
    page = pages.get("/team/finals")
    assert page.status_code == 200 and f'id="final-{good_id}"' in page.text
    assert "your latest submission counts" in page.text
    saved = pages.post("/team/finals", data={"csrf": csrf, "submission_ids": [good_id]})
    assert saved.status_code == 200 and 'id="finals-saved"' in saved.text
    board = leaderboard(session, competition=contest.slug, final=True)
    session.rollback()
    assert next(r for r in board.rows if r.team_name == "alpha").submission_ids["add_mul_relu"] == good
    refused = pages.post("/team/finals", data={"csrf": csrf, "submission_ids": [good_id, latest_id]})
    assert refused.status_code == 422 and "at most 1 finals per problem" in refused.text
    assert pages.post("/team/finals", data={"csrf": "forged", "submission_ids": [latest_id]}).status_code == 403
    numbered = pages.post("/team/finals", data={"csrf": csrf, "submission_ids": [str(good)]})
    assert numbered.status_code == 404 and "not by a number" in html.unescape(numbered.text)


def test_the_organisers_page_confirms_an_early_publish_and_recomputes(
    pages: TestClient, settings: Settings, session: Session, contest: Contest, clock: Clock
) -> None:
    open_quotas(session, contest, clock)
    judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5}, private={"p1": 0.5})
    csrf = _as(pages, settings, contest, "admin")
    ask = pages.post("/admin/c/cup/final", data={"csrf": csrf, "published": "true"})
    assert ask.status_code == 200 and 'id="confirm-publish"' in ask.text and "still open" in ask.text
    # The confirmation says what an early publication gives away while teams can submit.
    assert 'id="private-warning"' in ask.text and "tune its kernel to the private cases" in ask.text
    # The first click published nothing (the API reads no cookie: this is an anonymous reader).
    assert pages.get("/api/v1/competitions/cup/leaderboard?final=true").status_code == 403
    no_reason = pages.post("/admin/c/cup/final", data={"csrf": csrf, "published": "true", "override": "true"})
    assert no_reason.status_code == 422 and "say why" in no_reason.text
    done = pages.post("/admin/c/cup/final", data={"csrf": csrf, "published": "true", "override": "true",
                                                  "reason": "rehearsal"}, follow_redirects=False)  # fmt: skip
    assert done.status_code == 303
    judged(session, contest, clock, "bravo", benchmarks={"b1": 0.4}, private={"p1": 0.4})
    clock.now = START + timedelta(days=1, hours=1)
    page = pages.get("/admin/c/cup/final")
    assert page.status_code == 200 and "rehearsal" in page.text and "bravo" in page.text  # bravo would enter
    again = pages.post("/admin/c/cup/final/recompute", data={"csrf": csrf, "reason": "after the window"})
    assert again.status_code == 200 and 'id="recomputed"' in again.text
    pages.cookies.clear()
    board = pages.get("/api/v1/competitions/cup/leaderboard?final=true").json()
    assert [r["team_name"] for r in board["rows"] if r["rank"]] == ["bravo", "alpha"]


def test_the_reaudit_page_starts_a_job_and_lists_its_refusals(
    pages: TestClient, settings: Settings, contest: Contest, tmp_path: Path, session: Session
) -> None:
    bad = stored_id(session, upload(pages, contest.auth("bravo"), files=[("kernel.cpp", SYSTEM)]).json()["id"])
    csrf = _as(pages, settings, contest, "admin")
    started = pages.post("/admin/c/cup/reaudit", data={"csrf": csrf}, follow_redirects=False)
    assert started.status_code == 303 and "note=" in started.headers["location"]  # the test dispatcher keeps it
    page = pages.get(started.headers["location"])
    assert 'id="dispatch-note"' in page.text and "pending" in page.text
    ctx = worker_context(settings, tmp_path)
    try:
        job_id = pages.get("/api/v1/admin/competitions/cup/jobs", headers=contest.auth("admin")).json()[0]["id"]
        assert run_organiser_job(ctx, job_id) == "done"
    finally:
        ctx.close()
    done = pages.get("/admin/c/cup/reaudit")
    assert f'href="/s/{bad}"' in done.text and "bravo" in done.text and "kernel.cpp:3" in done.text


def test_the_team_pages_file_picker_offers_each_backends_own_file_types(
    pages: TestClient, settings: Settings, session: Session, contest: Contest, clock: Clock
) -> None:
    """The picker's types are the upload's and the policy's one list: no `.inc`."""
    from judge.backends import Backend
    from judge.submission import source_suffixes

    open_quotas(session, contest, clock)
    _as(pages, settings, contest, "alpha")
    page = pages.get("/team").text
    assert f'data-accept="{",".join(source_suffixes(Backend.CPU))}"' in page
    assert f'accept="{",".join(source_suffixes())}"' in page and ".inc" not in page
