"""The report's roofline chart with many timed cases crowded together, in headless Chromium.

The report page is served by the app in this process (uvicorn on a thread, the
demo seeded on an SQLite file); one run of sparse_flash_attention_grad is
finished the way a worker would finish it, with nine timed cases whose
intensity and throughput lie close together and the worker's recorded roofs.
The check reads the rendered SVG: the box of every text element (case names,
keys, the roofs' labels, the axes' ticks and titles) must lie inside the SVG's
box and cut no other text's box.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from api.settings import Settings
from api.store.db import Database, upgrade_database
from api.store.models import Team
from api.store.runs import claim_run, finish_run
from api.store.seed import seed_demo
from api.store.submissions import create_submission
from api.store.types import utcnow
from api.web.app import create_app
from judge.backends import Backend, CaseSet
from judge.conditions import RunConditions
from judge.results import CaseResult, JudgeResult, TimingStats
from judge.verdict import Verdict
from tests.e2e.conftest_pages import NoDispatch, launch_chromium, log_in, screenshot
from tests.e2e.services import free_port, wait_until

try:
    from playwright.sync_api import sync_playwright
except ImportError:  # the browser test skips
    sync_playwright = None  # type: ignore[assignment]

PROBLEM = "sparse_flash_attention_grad"
# Its nine timed CPU cases: (FLOP per byte, GFLOP/s). Seven sit within a few per cent of each other
# (two nearly on top of one another), two lower down, as a kernel bound by memory would leave them.
CROWD = {
    "b01_dsa_d512": (5.2, 48.0),
    "b02_causal_dense": (5.4, 50.0),
    "b03_batch_mode0": (5.1, 46.5),
    "b04_causal_bs64": (5.6, 51.0),
    "b05_half_bs8": (2.2, 21.0),
    "p01_dsa_d512_mode0": (5.3, 47.0),
    "p02_causal_dense": (5.4, 50.5),
    "p03_ragged_batch": (4.9, 45.0),
    "p04_half_bs32": (2.3, 22.0),
}
ROOFS = RunConditions(peak_flops=1.2e12, peak_bytes_per_s=40e9)  # what a worker records about its host

# For every pair of text elements of the chart, whether their boxes cut each other, and every one
# that leaves the SVG's box (a half pixel of slack for anti-aliased edges).
TEXT_CLASHES = """svg => {
  const s = svg.getBoundingClientRect(), eps = 0.5;
  const boxes = [...svg.querySelectorAll('text')].map(t => ({text: t.textContent, r: t.getBoundingClientRect()}));
  const outside = boxes.filter(b => b.r.left < s.left - eps || b.r.right > s.right + eps
                                 || b.r.top < s.top - eps || b.r.bottom > s.bottom + eps).map(b => b.text);
  const cut = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i].r, b = boxes[j].r;
    if (a.left < b.right - eps && b.left < a.right - eps && a.top < b.bottom - eps && b.top < a.bottom - eps)
      cut.push([boxes[i].text, boxes[j].text]);
  }
  return {count: boxes.length, outside, cut};
}"""


def crowded_result() -> JudgeResult:
    cases = []
    for name, (intensity, gflops) in CROWD.items():
        median = 2.0e6
        cases.append(CaseResult(
            name=name, case_set=CaseSet.BENCHMARKS if name.startswith("b") else CaseSet.PRIVATE, passed=True,
            timing=TimingStats(median, median, median * 0.98, median * 0.01, 40),
            baseline_timing=TimingStats(median, median, median * 0.98, median * 0.01, 40), ratio=1.0,
            gflops=gflops, gbytes_per_s=gflops / intensity, flops=gflops * median, checked_calls=4,
        ))  # fmt: skip
    return JudgeResult(verdict=Verdict.AC, problem=PROBLEM, backend=Backend.CPU, message="all cases passed",
                       score=100.0, cases=cases, host={"host": "elsewhere", "device": "cpu"},
                       conditions=ROOFS)  # fmt: skip


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str, int]]:
    """The app on a free port, with the crowded run finished: its base URL, the admin's token, the id."""
    settings = Settings(dev_mode=True, database_url=f"sqlite:///{tmp_path / 'chart.db'}")
    upgrade_database(settings)
    database = Database(settings)
    with database.session() as session:
        seed = seed_demo(session, settings)
        team_id = int(session.query(Team.id).filter(Team.name == "alpha").one()[0])
        created = create_submission(session, team_id=team_id, problem=PROBLEM, backend=Backend.CPU, now=utcnow(),
                                    files=[("kernel.cpp", b"// crowded\n")], queue="judge.cpu")  # fmt: skip
        assert claim_run(session, run_id=created.run_id, worker="elsewhere") is not None
        assert finish_run(session, run_id=created.run_id, result=crowded_result(), worker_info={})
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(settings, NoDispatch(), database=database), host="127.0.0.1",
                                           port=port, log_level="warning"))  # fmt: skip
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        wait_until("the app to listen", lambda: server.started, timeout_s=30)
        assert seed.admin_token is not None
        yield f"http://127.0.0.1:{port}", seed.admin_token, created.submission_id
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        database.dispose()


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 420])  # a desktop window and a phone's
def test_no_label_of_a_crowded_roofline_cuts_another_or_the_charts_edge(served: tuple[str, str, int], width: int,
                                                                      tmp_path: Path) -> None:
    if sync_playwright is None:
        pytest.skip("needs the playwright package (pip install playwright; no browser download)")
    base, admin, submission_id = served
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            page = browser.new_context(viewport={"width": width, "height": 900}, locale="en-GB").new_page()
            log_in(page, base, admin)
            page.goto(f"{base}/s/{submission_id}")
            chart = page.locator("#roofline svg")
            chart.scroll_into_view_if_needed()
            found: dict[str, Any] = chart.evaluate(TEXT_CLASHES)
            page.locator("#roofline").screenshot(path=str(tmp_path / f"roofline-{width}.png"))
            if width == 1280:
                screenshot(page, tmp_path, "report-roofline.png", docs=True, full_page=False)
            shown = str(chart.evaluate("svg => svg.textContent"))
        finally:
            browser.close()
    assert found["count"] > len(CROWD), found  # the names (or their keys) are drawn as text
    assert found["outside"] == [], found
    assert found["cut"] == [], found
    assert all(name in shown for name in CROWD), shown  # every case is named, on the chart or its key
