"""The organisers' pages in real headless Chromium against a live `opjudge serve` (embedded worker):
a team marks its finals, organisers run machine review and decide a pair side by side, and
re-audit under today's policy. Results are written into the server's database as a worker
elsewhere would (tests/e2e/conftest_pages.py), with the sources each test needs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from api.store.runs import claim_run, finish_run
from api.store.submissions import create_submission
from api.store.types import utcnow
from judge.backends import Backend
from judge.verdict import Verdict
from tests.e2e.conftest_pages import (
    AMR_FIXTURES,
    LiveSite,
    StoreWriter,
    launch_chromium,
    log_in,
    screenshot,
    start_site,
    synthetic_result,
)
from tests.workers.test_similarity import INDEPENDENT, ORIGINAL, RENAMED

try:
    from playwright.sync_api import expect, sync_playwright
except ImportError:
    expect = sync_playwright = None  # type: ignore[assignment]

pytestmark = [pytest.mark.browser, pytest.mark.slow]
BASELINE = Path(__file__).resolve().parents[2] / "reference_kernels" / "add_mul_relu" / "cpu" / "baseline.cpp"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveSite]:
    work = tmp_path_factory.mktemp("organiser-site")
    live = start_site(work, tmp_path_factory.getbasetemp() / "oracle-cache", work)
    try:
        yield live
    finally:
        live.process.stop()


@pytest.fixture(scope="module")
def written(site: LiveSite) -> dict[str, int]:
    """alpha's kernel, charlie's renamed copy of it, bravo's own kernel and a policy breach, judged."""
    store = StoreWriter(site.database_url)
    base = BASELINE.read_text()
    sources = {"alpha": base + ORIGINAL, "charlie": base + RENAMED, "bravo": base + INDEPENDENT,
               "bravo-sv": (AMR_FIXTURES / "exploit_system.cpp").read_text()}
    ids = {}
    try:
        for key, text in sources.items():
            team = key.split("-")[0]
            with store.db.session() as session:
                created = create_submission(session, team_id=store.team_id(team), problem="add_mul_relu",
                                            backend=Backend.CPU, files=[("kernel.cpp", text.encode())],
                                            queue="judge.cpu", now=utcnow())  # fmt: skip
                assert claim_run(session, run_id=created.run_id, worker="elsewhere@e2e") is not None
                result = synthetic_result("add_mul_relu", bench_ratio=0.9, private_ratio=0.9)
                if key == "bravo-sv":
                    result.verdict = Verdict.SV
                assert finish_run(session, run_id=created.run_id, result=result, worker_info={})
            ids[key] = created.submission_id
    finally:
        store.close()
    return ids


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if sync_playwright is None:
        pytest.skip("needs the playwright package (no browser download)")
    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-GB", timezone_id="UTC")
    yield context.new_page()
    context.close()


def _until(page: Any, url: str, selector: str, text: str, tries: int = 60) -> None:
    """Reload `url` until `selector` shows `text` (a background job finishing)."""
    for _ in range(tries):
        page.goto(url)
        if text in page.locator(selector).inner_text():
            return
        page.wait_for_timeout(1000)
    raise AssertionError(f"{selector} never showed {text!r}: {page.locator(selector).inner_text()[:500]}")


def test_organisers_review_a_pair_side_by_side(site: LiveSite, written: dict[str, int], page: Any,
                                               tmp_path: Path) -> None:  # fmt: skip
    log_in(page, site.base, site.tokens.admin)
    page.goto(f"{site.base}/admin")
    page.locator("#competitions a", has_text="machine review").click()
    page.click("#start-review")
    url = f"{site.base}/admin/c/demo/similarity?minimum=0.5"
    _until(page, url, "#pairs", "side by side")
    rows = page.locator("#pairs tbody tr").all_inner_texts()
    assert any("alpha" in r and "charlie" in r for r in rows) and not any("bravo" in r for r in rows), rows
    page.locator("#pairs tr", has_text="charlie").locator("a.open-pair").first.click()
    expect(page.locator("#side-a mark").first).to_be_visible()
    assert "fast_path" in page.locator("#side-b mark").all_inner_texts()[0] + page.locator("#side-b").inner_text()
    for side in ("a", "b"):  # each side's link scrolls its file to the first match
        page.click(f"#side-{side} a[href='#match-{side}-0']")
    expect(page.locator("#match-b-0")).to_be_in_viewport()
    screenshot(page, tmp_path, "admin-pair.png", docs=True)
    page.fill("#pair-note", "the same blocking with the names changed")
    page.click("#flag-pair")
    expect(page.locator("#current-decision")).to_have_text("flagged")
    page.goto(url)
    expect(page.locator("#pairs tr", has_text="charlie").first).to_contain_text("flagged")


def test_organisers_reaudit_and_see_the_refusal(site: LiveSite, written: dict[str, int], page: Any) -> None:
    log_in(page, site.base, site.tokens.admin)
    page.goto(f"{site.base}/admin/c/demo/reaudit")
    page.click("#start-reaudit")
    _until(page, f"{site.base}/admin/c/demo/reaudit", "#jobs", "done")
    refused = page.locator("#refused")
    expect(refused).to_contain_text(f"#{written['bravo-sv']}")
    expect(refused).to_contain_text("kernel.cpp:")
    assert f"#{written['alpha']}" not in refused.inner_text()


def test_a_team_marks_its_finals(site: LiveSite, written: dict[str, int], page: Any) -> None:
    answer = site.call("PATCH", "/api/v1/admin/competitions/demo", site.tokens.admin,
                       json={"ranked_by": "chosen", "finals_limit": 1})  # fmt: skip
    assert answer.status_code == 200, answer.text
    listed = site.call("GET", "/api/v1/admin/competitions/demo/submissions", site.tokens.admin).json()
    public = {s["id"]: s["public_id"] for s in listed}  # the team's page names its submissions by these
    log_in(page, site.base, site.tokens.teams["bravo"])
    page.goto(f"{site.base}/team")
    page.locator(".actions a", has_text="Finals").click()
    page.check(f"#final-{public[written['bravo']]}")
    page.click("#save-finals")
    expect(page.locator("#finals-saved")).to_contain_text("Saved.")
    expect(page.locator(f"#final-{public[written['bravo']]}")).to_be_checked()
    page.check(f"#final-{public[written['bravo-sv']]}")  # a second final, same problem: over the limit of 1
    page.click("#save-finals")
    expect(page.locator(".banner.error")).to_contain_text("at most 1 finals per problem")
