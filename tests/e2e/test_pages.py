"""The pages in real headless Chromium against a live `opjudge serve` (issue 5, "What it must show").

One server for the module, seeded with the demo: alpha and bravo get results
written by a "worker elsewhere" with known ratios (so the order is known),
charlie's wrong kernel and later its correct one are judged for real by the
server's in-process worker. The tests run in file order and build on each
other's state, like a contest day: board, reports, a live update, the freeze,
the final ranking.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest_pages import (
    AMR_FIXTURES,
    LiveSite,
    StoreWriter,
    launch_chromium,
    log_in,
    screenshot,
    start_site,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect

JUDGE_TIMEOUT_MS = 240_000  # one real judge run on a busy 2-core machine
PROBLEMS = ("add_mul_relu", "sparse_flash_attention_grad")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveSite]:
    work = tmp_path_factory.mktemp("pages-site")
    cache = tmp_path_factory.getbasetemp() / "oracle-cache"
    live = start_site(work, cache, work)
    try:
        yield live
    finally:
        live.process.stop()


@pytest.fixture(scope="module")
def writer(site: LiveSite) -> Iterator[StoreWriter]:
    store = StoreWriter(site.database_url)
    yield store
    store.close()


@pytest.fixture(scope="module")
def seeded(site: LiveSite, writer: StoreWriter) -> dict[str, Any]:
    """alpha best everywhere (ratio 0.8), bravo behind (0.95), charlie's wrong kernel judged for real."""
    for problem in PROBLEMS:
        writer.accepted("alpha", problem, bench_ratio=0.8, private_ratio=0.8)
        writer.accepted("bravo", problem, bench_ratio=0.95, private_ratio=0.95)
    charlie = site.tokens.teams["charlie"]
    wa_id = site.upload(charlie, AMR_FIXTURES / "wrong_no_relu.cpp")
    detail = site.wait_judged(charlie, wa_id)
    assert detail["submission"]["verdict"] == "WA", detail
    return {"wa": wa_id, "team_ids": {name: writer.team_id(name) for name in ("alpha", "bravo", "charlie")}}


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with playwright_api.sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        yield browser
        browser.close()


@pytest.fixture
def new_page(chromium: Any) -> Iterator[Any]:
    """A fresh browser context (no cookies) per call, 1280x900 unless told otherwise."""
    contexts = []

    def make(width: int = 1280, height: int = 900) -> Any:
        context = chromium.new_context(viewport={"width": width, "height": height}, locale="en-GB",
                                       timezone_id="UTC")  # fmt: skip
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


def board_names(page: Any) -> list[str]:
    return [n.strip() for n in page.locator("#board tbody tr[data-row] .col-team .name").all_inner_texts()]


def team_row(page: Any, team_id: int) -> Any:
    return page.locator(f"#board tr[data-row='team-{team_id}']")


def score_of(page: Any, team_id: int) -> float:
    return float(team_row(page, team_id).locator("td.col-score").first.inner_text())


def test_board_renders_the_seeded_demo_in_order(site: LiveSite, seeded: dict[str, Any], new_page: Any,
                                                tmp_path: Path) -> None:
    page = new_page()
    page.goto(f"{site.base}/c/demo")
    assert board_names(page) == ["alpha", "bravo", "baseline", "charlie"]
    ranks = page.locator("#board tbody tr[data-row] .col-rank").all_inner_texts()
    assert [r.strip() for r in ranks] == ["1", "2", "–", "3"]
    scores = [float(s) for s in page.locator("#board tbody tr[data-row] td.col-score").all_inner_texts()]
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[-1] == 0.0
    # The page shows the board the JSON API serves, in the same order.
    api = site.call("GET", "/api/v1/competitions/demo/leaderboard").json()
    assert [r["team_name"] for r in api["rows"]] == ["alpha", "bravo", "charlie"]
    expect(team_row(page, seeded["team_ids"]["charlie"]).locator(".verdict")).to_have_text("WA")
    # Two problems: two groups of heat cells per row, one cell per benchmark case.
    alpha = team_row(page, seeded["team_ids"]["alpha"])
    assert alpha.locator(".heat .group").count() == 2 and alpha.locator(".heat .cell.fail").count() == 0
    screenshot(page, tmp_path, "board.png", docs=True)

    hall = new_page(1920, 1080)
    hall.goto(f"{site.base}/c/demo?hall=1")
    assert "hall" in (hall.locator("body").get_attribute("class") or "")
    expect(hall.locator("header.topbar")).to_be_hidden()
    team_px = hall.locator("#board tbody tr[data-row] .col-team").first.evaluate(
        "el => parseFloat(getComputedStyle(el).fontSize)")
    assert team_px >= 24, f"hall mode should be readable from the back of the room, got {team_px}px"
    screenshot(hall, tmp_path, "board-hall.png", docs=True, full_page=False)

    phone = new_page(390, 844)
    phone.goto(f"{site.base}/c/demo")
    expect(phone.locator("#board th.col-heat")).to_be_hidden()
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the board overflows a phone's width ({width}px)"
    screenshot(phone, tmp_path, "board-phone.png", docs=True)


def test_report_of_a_wrong_answer_shows_the_failing_case_and_output(
    site: LiveSite, seeded: dict[str, Any], new_page: Any, tmp_path: Path
) -> None:
    page = new_page()
    log_in(page, site.base, site.tokens.teams["charlie"])
    page.goto(f"{site.base}/s/{seeded['wa']}")
    expect(page.locator(".verdict-big")).to_have_text("WA")
    failing = page.locator("#failing")
    expect(failing).to_contain_text("output y")
    failing_case = failing.locator(".where").first.inner_text()
    assert re.fullmatch(r"t\d\d_\w+", failing_case), failing_case
    row = page.locator(f"#cases tr[data-case='{failing_case}']")
    assert "failing" in (row.get_attribute("class") or "")
    expect(row.locator(".over").first).to_be_visible()  # the error over its allowance, in red
    assert page.locator("#timeline li[data-step='checking']").get_attribute("data-state") == "failed"
    screenshot(page, tmp_path, "report-wa.png", docs=True)


def test_a_team_cannot_open_another_teams_report(site: LiveSite, seeded: dict[str, Any], new_page: Any,
                                                 tmp_path: Path) -> None:
    page = new_page()
    response = page.goto(f"{site.base}/s/{seeded['wa']}")
    assert "/login" in page.url  # not logged in: asked to log in first
    log_in(page, site.base, site.tokens.teams["alpha"])
    response = page.goto(f"{site.base}/s/{seeded['wa']}")
    assert response is not None and response.status == 404
    expect(page.locator("h1")).to_have_text("Not found")
    assert "wrong_no_relu" not in page.content() and page.locator(".verdict-big").count() == 0
    fragment = page.request.get(f"{site.base}/s/{seeded['wa']}/timeline.frag")
    assert fragment.status == 404
    screenshot(page, tmp_path, "report-other-team.png")


def test_a_run_finishing_elsewhere_updates_the_board_and_report_without_a_reload(
    site: LiveSite, seeded: dict[str, Any], new_page: Any, tmp_path: Path
) -> None:
    board = new_page()
    board.goto(f"{site.base}/c/demo")
    board.evaluate("window.__notReloaded = true")
    charlie_id = seeded["team_ids"]["charlie"]
    row = team_row(board, charlie_id)
    expect(row.locator(".verdict")).to_have_text("WA")

    submission_id = site.upload(site.tokens.teams["charlie"], AMR_FIXTURES / "ok_simple.cpp")
    seeded["ac"] = submission_id
    report = new_page()
    log_in(report, site.base, site.tokens.teams["charlie"])
    report.goto(f"{site.base}/s/{submission_id}")
    assert report.locator("#timeline[data-live-url]").count() == 1  # following the run

    expect(row.locator(".verdict")).to_have_text("AC", timeout=JUDGE_TIMEOUT_MS)
    assert "changed" in (row.get_attribute("class") or "")  # highlighted
    assert board.evaluate("window.__notReloaded === true")  # updated in place
    assert score_of(board, charlie_id) > 0
    screenshot(board, tmp_path, "board-live-update.png")

    # The report page reloads itself once the run is over and shows the results.
    expect(report.locator(".verdict-big")).to_have_text("AC", timeout=30_000)
    steps = report.locator("#timeline li").evaluate_all("els => els.map(e => e.dataset.state)")
    assert steps == ["done"] * 5
    assert report.locator("#cases tbody tr").count() >= 7  # tests and benchmarks
    expect(report.locator("#roofline svg")).to_contain_text("of peak")  # achieved rate against the device
    expect(report.locator("#history svg")).to_be_visible()
    screenshot(report, tmp_path, "report.png", docs=True)


def test_the_frozen_board_keeps_its_order_and_says_so(site: LiveSite, seeded: dict[str, Any], writer: StoreWriter,
                                                      new_page: Any, tmp_path: Path) -> None:
    admin = site.tokens.admin
    bravo_id = seeded["team_ids"]["bravo"]
    before = new_page()
    before.goto(f"{site.base}/c/demo")
    order, bravo_score = board_names(before), score_of(before, bravo_id)
    frozen_at = datetime.now(UTC).replace(microsecond=0)
    freeze = "/api/v1/admin/competitions/demo/freeze"
    response = site.call("PUT", freeze, admin, json={"freeze_at": frozen_at.isoformat()})
    assert response.status_code == 200, response.text
    try:
        # After the freeze bravo's kernel gets twice as fast as the baseline: first place, live.
        writer.accepted("bravo", "add_mul_relu", bench_ratio=0.5, private_ratio=0.95)
        public = new_page()
        public.goto(f"{site.base}/c/demo")
        expect(public.locator(".banner.frozen")).to_contain_text(f"Frozen at {frozen_at:%H:%M}")
        assert board_names(public) == order and score_of(public, bravo_id) == bravo_score
        screenshot(public, tmp_path, "board-frozen.png", docs=True)

        own = new_page()
        log_in(own, site.base, site.tokens.teams["bravo"])
        own.goto(f"{site.base}/c/demo")
        expect(own.locator(".banner.frozen")).to_contain_text("your own results still update")
        expect(team_row(own, bravo_id).locator(".tag.live")).to_be_visible()
        assert score_of(own, bravo_id) > bravo_score
        assert [n for n in board_names(own) if n != "bravo"] == [n for n in order if n != "bravo"]
        screenshot(own, tmp_path, "board-frozen-own.png")
    finally:
        site.call("PUT", freeze, admin, json={"freeze_at": None})


def test_reviewer_marks_change_the_final_ranking(site: LiveSite, seeded: dict[str, Any], new_page: Any,
                                                 tmp_path: Path) -> None:
    public = new_page()
    public.goto(f"{site.base}/c/demo")
    assert public.locator("#board th", has_text="Final").count() == 0  # not published yet

    organiser = new_page()
    log_in(organiser, site.base, site.tokens.admin)
    organiser.goto(f"{site.base}/admin")
    expect(organiser.locator("#workers")).to_contain_text("judge.cpu")  # the in-process worker, with versions
    organiser.locator("#competitions button", has_text="Publish final ranking").click()
    expect(organiser.locator(".banner.final")).to_contain_text("Final ranking.")

    public.goto(f"{site.base}/c/demo")
    expect(public.locator("#board th", has_text="Final")).to_be_visible()
    assert board_names(public)[:2] == ["alpha", "bravo"]
    bravo_id = seeded["team_ids"]["bravo"]
    final_before = float(team_row(public, bravo_id).locator("td.col-score").nth(1).inner_text())

    reviewer = new_page()
    log_in(reviewer, site.base, site.tokens.reviewer)
    form = reviewer.locator(f"#team-{bravo_id} form")
    for field, mark in (("design", "40"), ("code_quality", "30"), ("presentation", "30")):
        form.locator(f"input[name='mark_{field}']").fill(mark)
    form.locator("textarea[name='comment']").fill("Clear design, well explained.")
    form.locator("button[type=submit]").click()
    expect(reviewer.locator(".banner.success")).to_contain_text("bravo")
    screenshot(reviewer, tmp_path, "review.png")

    # The open final ranking updates by itself: bravo gains 0.3 x 100 and overtakes alpha.
    expect(public.locator("#board tbody tr[data-row]").first).to_have_attribute(
        "data-row", f"team-{bravo_id}", timeout=15_000)
    cells = team_row(public, bravo_id).locator("td.num")
    assert cells.nth(2).inner_text() == "100.00"  # reviewer score
    final_after = float(team_row(public, bravo_id).locator("td.col-score").nth(1).inner_text())
    assert final_after == pytest.approx(final_before + 30.0, abs=0.011)
    screenshot(public, tmp_path, "board-final.png", docs=True)


def test_forms_need_the_sessions_csrf_token(site: LiveSite, seeded: dict[str, Any], new_page: Any) -> None:
    page = new_page()
    log_in(page, site.base, site.tokens.reviewer)
    bravo_id = seeded["team_ids"]["bravo"]
    forged = page.request.post(f"{site.base}/review/{bravo_id}", form={
        "csrf": "0" * 40, "mark_design": "0", "mark_code_quality": "0", "mark_presentation": "0"})
    assert forged.status == 403
    cookie = next(c for c in page.context.cookies() if c["name"] == "opjudge_token")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert page.evaluate("document.cookie").find("opjudge_token") == -1  # scripts cannot read it
