"""What a new team meets in the browser (docs/user-guide.md), in real headless Chromium
against a live `opjudge serve`: the problem and rules pages, run modes on the team page, refused
uploads explained in place, the countdown, /docs without internet, the favicon, a phone's width."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from api.store.public_ids import PATTERN
from tests.e2e.conftest_pages import AMR_BASELINE, LiveSite, launch_chromium, log_in, start_site

try:
    from playwright.sync_api import expect, sync_playwright
except ImportError:  # the browser tests skip
    expect = sync_playwright = None  # type: ignore[assignment]

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveSite]:
    work = tmp_path_factory.mktemp("team-pages")
    live = start_site(work, tmp_path_factory.getbasetemp() / "oracle-cache", work)
    try:
        yield live
    finally:
        live.process.stop()


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
    contexts = []

    def make(width: int = 1280, height: int = 900) -> Any:
        context = chromium.new_context(viewport={"width": width, "height": height}, accept_downloads=True)
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


def new_team(site: LiveSite, name: str) -> str:
    created = site.call("POST", "/api/v1/admin/competitions/demo/teams", site.tokens.admin, json={"name": name})
    assert created.status_code == 201, created.text
    return str(created.json()["token"]["token"])


def test_the_problem_page_shows_statement_cases_rules_and_header(site: LiveSite, new_page: Any) -> None:
    page = new_page()
    page.goto(f"{site.base}/p")
    page.click("#problems a[href='/p/sparse_flash_attention_grad']")
    page.wait_for_url(re.compile(r".*/p/sparse_flash_attention_grad$"))
    expect(page.locator("#statement h1")).to_have_text("Sparse FlashAttention backward")
    expect(page.locator("#statement h2#pass-rule-for-each-output-x")).to_be_visible()
    cases = page.locator("#public-cases tbody tr")
    assert cases.count() >= 10
    names = " ".join(page.locator("#public-cases tbody td.mono:first-child").all_inner_texts())
    assert "t07_ragged_topk" in names and "p01" not in names  # private cases are only counted
    expect(page.locator("#public-cases")).to_contain_text("private case")
    expect(page.locator("#pass-rule")).to_contain_text("float16")
    expect(page.locator("#baseline summary").first).to_have_text("baseline.cpp")
    with page.expect_download() as download:
        page.click("#header-download")
    saved = download.value
    assert saved.suggested_filename == "sparse_flash_attention_grad.h"
    assert "kernel_run" in Path(saved.path()).read_text()
    page.click("#timing a[href='/rules']")
    expect(page.locator("#rules h2#run-modes")).to_be_visible()
    expect(page.locator("#rules")).to_contain_text("200 a day, 10 s apart")


def test_a_test_run_from_the_form_then_the_countdown_and_a_refusal_explained_in_place(
    site: LiveSite, new_page: Any, tmp_path: Path
) -> None:
    page = new_page()
    log_in(page, site.base, new_team(site, "echo"))
    page.goto(f"{site.base}/team")
    expect(page.locator("#quotas tr#quota-test")).to_contain_text("200")
    expect(page.locator("#limits")).to_contain_text("512.0 KiB")
    page.select_option("#problem", "add_mul_relu")
    page.select_option("#mode", "test")
    page.set_input_files("#submit-form input[type=file]", str(AMR_BASELINE))
    page.click("#submit-form button[type=submit]")
    page.wait_for_url(re.compile(rf".*/s/{PATTERN.pattern}$"))
    expect(page.locator("#run-mode")).to_have_text("test run")
    expect(page.locator("#mode-note")).to_contain_text("does not count on the board")
    page.goto(f"{site.base}/team")
    submit = page.locator("#submit-form button[type=submit]")
    page.select_option("#mode", "test")  # 10 s between two test runs: Submit waits, counting down
    expect(submit).to_be_disabled()
    expect(submit).to_have_text(re.compile(r"Wait \d+ s"))
    page.select_option("#mode", "benchmark")  # another mode, its own interval
    expect(submit).to_be_enabled()
    # A binary file named .cpp: refused (422) in words above the form, the choices and file kept.
    binary = tmp_path / "kernel.cpp"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(256))
    page.select_option("#problem", "add_mul_relu")
    page.set_input_files("#submit-form input[type=file]", str(binary))
    page.click("#submit-form button[type=submit]")
    banner = page.locator("#upload-error")
    expect(banner).to_contain_text("is binary")
    expect(banner).to_contain_text("HTTP 422")
    assert "{" not in banner.inner_text()  # words, not raw JSON
    assert page.url.endswith("/team")
    assert page.locator("#problem").input_value() == "add_mul_relu"
    assert page.locator("#mode").input_value() == "benchmark"
    assert page.evaluate("document.querySelector('#submit-form input[type=file]').files.length") == 1
    # Over the whole body limit (2 MiB): the server's JSON 413 is shown in words too.
    huge = tmp_path / "huge.cpp"
    huge.write_text("// padding\n" * 250_000)
    page.set_input_files("#submit-form input[type=file]", str(huge))
    page.click("#submit-form button[type=submit]")
    expect(banner).to_contain_text("HTTP 413")
    assert "{" not in banner.inner_text()


def test_docs_work_without_internet_and_the_site_has_an_icon(site: LiveSite, new_page: Any) -> None:
    page = new_page()
    outside: list[str] = []

    def only_local(route: Any) -> None:
        if route.request.url.startswith(site.base):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", only_local)
    page.goto(f"{site.base}/docs")
    expect(page.locator("#swagger-ui .info .title")).to_contain_text("opjudge")
    expect(page.locator("#swagger-ui")).to_contain_text("/api/v1/problems/{slug}")
    assert outside == []
    icon = site.call("GET", "/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"] == "image/x-icon" and icon.content[:4] == bytes(
        [0, 0, 1, 0])  # fmt: skip


def test_the_team_pages_score_column_fits_a_phone(site: LiveSite, new_page: Any) -> None:
    page = new_page(width=375, height=740)
    log_in(page, site.base, new_team(site, "foxtrot"))
    page.goto(f"{site.base}/team")
    header = page.locator("#submissions thead th.num")
    box = header.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 375, box


def test_links_headers_form_and_a_disqualified_teams_row_read_right(site: LiveSite, new_page: Any) -> None:
    """Rough edges a new user met, each as they met it."""
    from tests.e2e.conftest_pages import StoreWriter

    page = new_page()
    for path in ("/rules", "/p"):  # logged out: the board is one click away from every page
        page.goto(f"{site.base}{path}")
        expect(page.locator("nav[aria-label=main] a", has_text="Leaderboard")).to_have_count(1)
    page.goto(f"{site.base}/rules")
    header = page.locator("#rules th", has_text=re.compile("^Verdict$", re.I)).first
    lines = header.evaluate("th => { const r = document.createRange(); r.selectNodeContents(th);"
                            " return r.getClientRects().length; }")
    assert lines == 1, "the verdict table's header wrapped"

    log_in(page, site.base, new_team(site, "golf"))
    page.goto(f"{site.base}/team")
    expect(page.locator("#mode")).to_have_value("test")  # a first upload checks, it does not rank
    page.select_option("#problem", "sparse_flash_attention_grad")
    text_width, box_width = page.locator("#problem").evaluate(
        "s => { const c = document.createElement('canvas').getContext('2d'); c.font = getComputedStyle(s).font;"
        " return [c.measureText(s.options[s.selectedIndex].text).width, s.clientWidth]; }")
    assert text_width + 24 <= box_width, (text_width, box_width)  # the chosen problem's name is not cut off
    bottoms = {name: page.locator(f"#{name}").bounding_box() for name in ("problem", "backend", "mode")}
    assert len({round(b["y"] + b["height"]) for b in bottoms.values() if b}) == 1, bottoms  # one line of controls
    hint = page.locator("#terminal-hint")
    expect(hint).to_contain_text("--problem sparse_flash_attention_grad")
    page.select_option("#problem", "add_mul_relu")
    page.select_option("#mode", "benchmark")
    expect(hint).to_contain_text("--problem add_mul_relu --backend cpu --mode benchmark")

    store = StoreWriter(site.database_url)
    try:
        only = store.accepted("golf", "add_mul_relu", bench_ratio=0.95, private_ratio=0.95)
    finally:
        store.close()
    refused = site.call("POST", f"/api/v1/admin/submissions/{only}/disqualify", site.tokens.admin,
                        json={"reason": "copied"})
    assert refused.status_code == 200, refused.text
    page.goto(f"{site.base}/c/demo")
    row = page.locator("#board tr", has_text="golf")
    expect(row).to_have_class(re.compile("disqualified"))
    expect(row.locator(".tag.dq")).to_have_text("entries disqualified")
    decoration = row.locator(".name").evaluate("n => getComputedStyle(n).textDecorationLine")
    assert decoration == "none", "the team's name is struck through as if the team were disqualified"


def test_the_team_page_names_submissions_by_public_ids_only(site: LiveSite, new_page: Any) -> None:
    """A team's ids must not count other teams' uploads (docs/security.md, "Submission ids"): the page
    links the public id, the report shows it, and the database id of the team's own submission is refused."""
    hotel, india = new_team(site, "hotel"), new_team(site, "india")
    mine = site.upload(hotel, AMR_BASELINE)
    site.upload(india, AMR_BASELINE)
    listed = site.call("GET", "/api/v1/admin/competitions/demo/submissions", site.tokens.admin).json()
    number = next(s["id"] for s in listed if s["public_id"] == mine)
    page = new_page()
    log_in(page, site.base, hotel)
    page.goto(f"{site.base}/team")
    link = page.locator("#submissions tbody a")
    expect(link).to_have_count(1)
    expect(link).to_have_text(mine)
    assert PATTERN.fullmatch(mine) and link.get_attribute("href") == f"/s/{mine}"
    assert not re.search(r"#\d+", page.locator("#submissions").inner_text())
    link.click()
    page.wait_for_url(f"{site.base}/s/{mine}")
    expect(page.locator("#submission-id")).to_have_text(mine)
    assert not re.search(r"#\d+", page.locator("h1").inner_text())
    refused = page.goto(f"{site.base}/s/{number}")
    assert refused is not None and refused.status == 404
    expect(page.locator("body")).to_contain_text("not by a number")
