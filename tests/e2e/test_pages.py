"""The pages in real headless Chromium against a live `opjudge serve` (docs/user-guide.md).

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
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from api.client.stages import run_steps
from api.store.public_ids import PATTERN
from api.store.teams import create_team
from api.store.types import utcnow
from api.web.pages.charts import HistoryPoint, RooflinePoint, history_svg, rate_bars_svg, roofline_svg
from tests.e2e.conftest_pages import (
    AMR_FIXTURES,
    AppClient,
    LiveSite,
    StoreWriter,
    form_csrf,
    in_process_app,
    launch_chromium,
    log_in,
    log_in_client,
    screenshot,
    start_site,
)

try:
    from playwright.sync_api import expect, sync_playwright
except ImportError:  # the browser tests skip; the others still run
    expect = sync_playwright = None  # type: ignore[assignment]

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
    if sync_playwright is None:
        pytest.skip("needs the playwright package (pip install playwright; no browser download)")
    with sync_playwright() as playwright:
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


@pytest.mark.browser
@pytest.mark.slow
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


@pytest.mark.browser
@pytest.mark.slow
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


@pytest.mark.browser
@pytest.mark.slow
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


@pytest.mark.browser
@pytest.mark.slow
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


@pytest.mark.browser
@pytest.mark.slow
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


@pytest.mark.browser
@pytest.mark.slow
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
    # The demo's window is still open: the page asks to confirm, with a reason for the audit log.
    expect(organiser.locator("#confirm-publish")).to_contain_text("still open")
    assert public.locator("#board th", has_text="Final").count() == 0  # nothing published by the first click
    organiser.fill("#override-reason", "prize ceremony rehearsal")
    organiser.click("#confirm-override")
    expect(organiser.locator(".banner.final")).to_contain_text("Final ranking.")

    public.goto(f"{site.base}/c/demo")
    expect(public.locator("#board th", has_text="Final")).to_be_visible()
    assert board_names(public)[:2] == ["alpha", "bravo"]
    bravo_id = seeded["team_ids"]["bravo"]
    final_before = score_of(public, bravo_id)  # the final score is the one ranked on

    reviewer = new_page()
    log_in(reviewer, site.base, site.tokens.reviewer)
    form = reviewer.locator(f"#team-{bravo_id} form")
    for field, mark in (("design", "40"), ("code_quality", "30"), ("presentation", "30")):
        form.locator(f"input[name='mark_{field}']").fill(mark)
    form.locator("textarea[name='comment']").fill("Clear design, well explained.")
    form.locator("button[type=submit]").click()
    expect(reviewer.locator(".banner.success")).to_contain_text("bravo")
    screenshot(reviewer, tmp_path, "review.png")

    # The published ranking is a snapshot: the marks change it only once the organisers recompute it.
    public.reload()
    assert board_names(public)[:2] == ["alpha", "bravo"] and score_of(public, bravo_id) == final_before
    organiser.goto(f"{site.base}/admin/c/demo/final")
    expect(organiser.locator("#differences")).to_contain_text("reviewer_score")
    screenshot(organiser, tmp_path, "admin-final.png")
    organiser.fill("#recompute-reason", "reviewer marks are in")
    organiser.click("#recompute")
    expect(organiser.locator("#recomputed")).to_contain_text("recorded in the audit log")
    expect(organiser.locator("#differences")).to_contain_text("rank")
    # The open final ranking follows the recompute by itself: bravo gains 0.3 x 100 and overtakes alpha.
    expect(public.locator("#board tbody tr[data-row]").first).to_have_attribute(
        "data-row", f"team-{bravo_id}", timeout=15_000)
    cells = team_row(public, bravo_id).locator("td.num")
    assert cells.nth(2).inner_text() == "100.00"  # reviewer score
    final_after = score_of(public, bravo_id)
    assert final_after == pytest.approx(final_before + 30.0, abs=0.011)
    screenshot(public, tmp_path, "board-final.png", docs=True)


@pytest.mark.browser
@pytest.mark.slow
def test_forms_need_the_sessions_csrf_token(site: LiveSite, seeded: dict[str, Any], new_page: Any,
                                            tmp_path: Path) -> None:
    page = new_page()
    log_in(page, site.base, site.tokens.reviewer)
    screenshot(page, tmp_path, "review-page.png")
    bravo_id = seeded["team_ids"]["bravo"]
    forged = page.request.post(f"{site.base}/review/{bravo_id}", form={
        "csrf": "0" * 40, "mark_design": "0", "mark_code_quality": "0", "mark_presentation": "0"})
    assert forged.status == 403
    cookie = next(c for c in page.context.cookies() if c["name"] == "opjudge_token")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert page.evaluate("document.cookie").find("opjudge_token") == -1  # scripts cannot read it


@pytest.mark.browser
@pytest.mark.slow
def test_a_team_uploads_through_the_page_form(site: LiveSite, seeded: dict[str, Any], new_page: Any) -> None:
    created = site.call("POST", "/api/v1/admin/competitions/demo/teams", site.tokens.admin, json={"name": "delta"})
    assert created.status_code == 201, created.text
    page = new_page()
    log_in(page, site.base, created.json()["token"]["token"])
    page.goto(f"{site.base}/team")
    form = page.locator("#submit-form")
    assert form.get_attribute("action") == "/team/submit"  # no token in a URL: access logs keep URLs
    page.select_option("#problem", "add_mul_relu")
    page.set_input_files("#submit-form input[type=file]", str(AMR_FIXTURES / "ok_simple.cpp"))
    form.locator("button[type=submit]").click()
    page.wait_for_url(re.compile(rf".*/s/{PATTERN.pattern}$"))  # the public id: no count of others' uploads
    submission_id = page.url.rsplit("/", 1)[1]
    stored = site.call("GET", f"/api/v1/submissions/{submission_id}", created.json()["token"]["token"])
    assert stored.status_code == 200 and stored.json()["submission"]["problem"] == "add_mul_relu", stored.text


# ---- without a browser: the pieces the pages are made of ------------------------------------------


def test_the_timeline_says_where_a_run_stopped() -> None:
    start = utcnow()
    times = {stage: (start + timedelta(seconds=i)).isoformat()
             for i, stage in enumerate(("policy", "building", "checking", "done"))}  # fmt: skip
    wrong = run_steps(status="done", stage="done", stage_times=times, verdict="WA", queued_at=start)
    assert [s.state for s in wrong] == ["done", "done", "failed", "skipped", "skipped"]
    built_badly = {k: v for k, v in times.items() if k in ("policy", "building", "done")}
    ce = run_steps(status="done", stage="done", stage_times=built_badly, verdict="CE", queued_at=start)
    assert [s.state for s in ce] == ["done", "failed", "skipped", "skipped", "skipped"]
    running = run_steps(status="running", stage="timing", stage_times=times, verdict=None, queued_at=start)
    assert [s.state for s in running] == ["done", "done", "done", "current", "waiting"]
    waiting = run_steps(status="queued", stage=None, stage_times={}, verdict=None, queued_at=start)
    assert [s.state for s in waiting] == ["current", "waiting", "waiting", "waiting", "waiting"]


def test_charts_escape_names_and_do_without_a_known_peak() -> None:
    hostile = "<script>alert(1)</script>"
    roof = roofline_svg([RooflinePoint(hostile, 0.25, 8.0)], peak_gflops=None, peak_gbps=None, measured_gbps=32.0)
    bars = rate_bars_svg([(hostile, 8.0)], peak_gflops=640.0)
    for svg in (roof, bars):
        assert svg.startswith("<svg") and "<script>" not in svg and "&lt;script&gt;" in svg
    assert "best measured bandwidth" in roof and "of peak" in bars
    history = history_svg([HistoryPoint(1, None, False, False), HistoryPoint(2, 112.0, True, True)])
    assert "#1: 0.00 (failed)" in history and "#2: 112.00" in history
    assert roofline_svg([], peak_gflops=1.0, peak_gbps=None, measured_gbps=None) == ""


@pytest.fixture
def app_client(tmp_path: Path) -> Iterator[AppClient]:
    yield from in_process_app(tmp_path)


def test_pages_escape_what_teams_type_and_send_safe_headers(app_client: AppClient) -> None:
    client, seed, database = app_client
    with database.session() as session:
        create_team(session, competition="demo", name='<img src=x onerror="alert(1)">', pepper=database.settings.pepper,
                    actor=None, now=utcnow())  # fmt: skip
    log_in_client(client, seed.admin_token)
    page = client.get("/admin")
    assert page.status_code == 200
    assert '<img src=x onerror="alert(1)">' not in page.text and "&lt;img src=x" in page.text
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert page.headers["cache-control"] == "no-store"


def test_logging_in_needs_a_working_token_and_the_forms_token(app_client: AppClient) -> None:
    client, seed, _database = app_client
    form = client.get("/login").text
    nonce = re.search(r'name="csrf" value="([^"]+)"', form)
    assert nonce is not None
    refused = client.post("/login", data={"token": "opj_team_wrong", "csrf": nonce.group(1)}, follow_redirects=False)
    assert refused.status_code == 401 and "unknown token" in refused.text
    assert "opjudge_token" not in client.cookies
    stale = client.post("/login", data={"token": seed.team_tokens["alpha"], "csrf": "forged"}, follow_redirects=False)
    assert stale.status_code == 403 and "opjudge_token" not in client.cookies
    log_in_client(client, seed.team_tokens["alpha"])
    assert client.get("/team").status_code == 200
    assert client.post("/logout", data={"csrf": "forged"}, follow_redirects=False).status_code == 403
    assert client.get("/admin").status_code == 403  # a team token is not an organiser's
    assert client.get("/login?next=//evil.example").text.count('value="//evil.example"') == 0


def test_the_team_page_uploads_and_explains_a_refusal(app_client: AppClient) -> None:
    client, seed, database = app_client
    log_in_client(client, seed.team_tokens["alpha"])
    page = client.get("/team")
    assert page.status_code == 200 and "Quota per run mode" in page.text
    token = form_csrf(page.text)
    source = (AMR_FIXTURES / "ok_simple.cpp").read_bytes()
    form = {"problem": "add_mul_relu", "backend": "cpu"}
    files = [("files", ("kernel.cpp", source, "text/x-c++src"))]
    assert "csrf=" not in page.text  # the token is a form field: a URL's query string is logged
    forged = client.post("/team/submit", data={**form, "csrf": "forged"}, files=files, follow_redirects=False)
    assert forged.status_code == 403
    in_url = client.post(f"/team/submit?csrf={token}", data=form, files=files, follow_redirects=False)
    assert in_url.status_code == 403
    form["csrf"] = token
    stored = client.post("/team/submit", data=form, files=files, follow_redirects=False)
    assert stored.status_code == 303 and re.fullmatch(rf"/s/{PATTERN.pattern}", stored.headers["location"])
    report = client.get(stored.headers["location"])
    assert report.status_code == 200 and 'data-live-url="/s/' in report.text  # the timeline follows the run
    # The demo's minimum interval (90 s) refuses the next upload: the team page says why and when.
    again = client.post("/team/submit", data=form, files=files, follow_redirects=False)
    assert again.status_code == 429 and int(again.headers["retry-after"]) > 0
    assert "Not submitted." in again.text and "too soon" in again.text


def test_organisers_disqualify_reinstate_and_rejudge_from_the_report(
    app_client: AppClient,
) -> None:
    client, seed, database = app_client
    log_in_client(client, seed.team_tokens["bravo"])
    page = client.get("/team")
    source = (AMR_FIXTURES / "ok_simple.cpp").read_bytes()
    stored = client.post("/team/submit", data={"problem": "add_mul_relu", "backend": "cpu",
                         "csrf": form_csrf(page.text)}, files=[("files", ("kernel.cpp", source, "text/x-c++src"))],
                         follow_redirects=False)  # fmt: skip
    report_url = stored.headers["location"]
    assert "Organiser actions" not in client.get(report_url).text  # teams get no organiser buttons
    log_in_client(client, seed.admin_token)
    report = client.get(report_url)
    assert "Organiser actions" in report.text and "Rejudge" in report.text
    token = form_csrf(report.text)
    # The team's URL names the submission by its public id; the organisers' forms and lists by its database id.
    found = re.search(r'action="/admin/s/(\d+)/rejudge"', report.text)
    assert found is not None and not report_url.endswith(f"/{found.group(1)}")
    submission_id = found.group(1)
    disqualified = client.post(f"/admin/s/{submission_id}/disqualify", data={"csrf": token, "reason": "copied code"})
    assert disqualified.status_code == 200
    assert "Disqualified" in disqualified.text and "copied code" in disqualified.text
    reinstated = client.post(f"/admin/s/{submission_id}/reinstate", data={"csrf": token})
    assert "Disqualified" not in reinstated.text
    rejudged = client.post(f"/admin/s/{submission_id}/rejudge", data={"csrf": token})
    assert rejudged.status_code == 200 and rejudged.text.count("<td>rejudge</td>") == 1
    admin_page = client.get("/admin")
    assert "judge.cpu" in admin_page.text and "Runs in flight" in admin_page.text
    assert admin_page.text.count(f'href="/s/{submission_id}"') >= 2  # in flight and among the recent ones
