"""Helpers for the page and team-CLI tests: a live `opjudge serve`, results written by a
"worker elsewhere", and a real headless Chromium.

The server is the embedded default (SQLite file, in-process worker) on a free
port, seeded with the demo. Real runs are judged by its worker; to give the
board a known order without judging a dozen kernels, `StoreWriter` finishes
runs through the same store functions a worker calls (claim, stages, finish)
with results whose ratios the test chooses.

Chromium is Debian's /usr/bin/chromium driven by Playwright; no browser is
ever downloaded.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
from fastapi.testclient import TestClient

from api.settings import Settings
from api.store.db import Database, upgrade_database
from api.store.models import Team
from api.store.runs import claim_run, finish_run, record_stage
from api.store.seed import seed_demo
from api.store.submissions import create_submission
from api.store.types import utcnow
from api.web.app import create_app
from judge.backends import Backend, CaseSet, Stage
from judge.conditions import RunConditions
from judge.problem import load_problem
from judge.results import CaseResult, JudgeResult, OutputCheck, TimingStats
from judge.verdict import Verdict
from tests.e2e.services import DemoTokens, Process, service_env, start_api, wait_until

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
DOCS_SHOTS = REPO / "docs" / "screenshots"
AMR_FIXTURES = REPO / "tests" / "submissions" / "add_mul_relu" / "cpu"
AMR_BASELINE = REPO / "reference_kernels" / "add_mul_relu" / "cpu" / "baseline.cpp"
FINISHED = ("done", "failed")
BASELINE_NS = 2.0e6  # the synthetic baseline's median per case


@dataclass
class LiveSite:
    """A running `opjudge serve` and what tests need to talk to it."""

    base: str
    tokens: DemoTokens
    database_url: str
    process: Process

    def call(self, method: str, path: str, token: str | None = None, **kwargs: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.request(method, self.base + path, headers=headers, timeout=30, **kwargs)

    def upload(self, token: str, source: Path, *, problem: str = "add_mul_relu") -> str:
        """Upload one source file as a team; the submission's id (its public id, the one teams use)."""
        response = self.call("POST", "/api/v1/submissions", token, data={"problem": problem, "backend": "cpu"},
                             files=[("files", (source.name, source.read_bytes(), "text/x-c++src"))])  # fmt: skip
        assert response.status_code == 202, response.text
        return str(response.json()["id"])

    def wait_judged(self, token: str, submission_id: str, *, timeout_s: float = 240) -> dict[str, Any]:
        """The submission's detail once its run has finished (the server's log on a time-out)."""
        def finished() -> dict[str, Any] | None:
            detail = self.call("GET", f"/api/v1/submissions/{submission_id}", token).json()
            return detail if detail["submission"]["status"] in FINISHED else None

        return dict(wait_until(f"submission {submission_id} to be judged", finished, timeout_s=timeout_s,
                               interval_s=0.5, log=self.process.log))  # fmt: skip


def pages_env(work: Path, cache: Path, **overrides: str) -> dict[str, str]:
    """The server's environment: its own SQLite file, benchmarks timed briefly, private cases skipped."""
    return service_env(
        OPJUDGE_DATABASE_URL=f"sqlite:///{work / 'opjudge.db'}",
        OPJUDGE_WORK_ROOT=str(work / "runs"),
        OPJUDGE_CACHE_DIR=str(cache),
        # The board ranks benchmarks; private cases would only double each judge's time here.
        OPJUDGE_RUN_CASE_SETS="tests,benchmarks",
        OPJUDGE_CASE_TIME_BUDGET_S="0.1",
        **overrides,
    )


def start_site(work: Path, cache: Path, log_dir: Path) -> LiveSite:
    """`opjudge serve --seed-demo` on a free port, answering."""
    env = pages_env(work, cache)
    process, base, tokens = start_api(env, log_dir, name="pages-serve")
    assert tokens is not None
    return LiveSite(base, tokens, env["OPJUDGE_DATABASE_URL"], process)


class StoreWriter:
    """Finishes runs in the live server's database the way a worker on another host would."""

    def __init__(self, database_url: str) -> None:
        env = service_env()
        settings = Settings(database_url=database_url, judge_secret=env["OPJUDGE_JUDGE_SECRET"],
                            token_pepper=env["OPJUDGE_TOKEN_PEPPER"])  # fmt: skip
        self.db = Database(settings)

    def close(self) -> None:
        self.db.dispose()

    def team_id(self, name: str) -> int:
        with self.db.session(write=False) as session:
            return int(session.query(Team.id).filter(Team.name == name).one()[0])

    def accepted(self, team: str, problem: str, *, bench_ratio: float, private_ratio: float,
                 now: datetime | None = None) -> int:
        """An AC submission of `team` whose timed cases ran at these ratios to the baseline; its id."""
        now = now or utcnow()
        result = synthetic_result(problem, bench_ratio=bench_ratio, private_ratio=private_ratio)
        with self.db.session() as session:
            created = create_submission(session, team_id=self.team_id(team), problem=problem, backend=Backend.CPU,
                                        files=[("kernel.cpp", b"// synthetic\n")], queue="judge.cpu", now=now)
            # Claimed at once: the server's reaper only hands out runs pending for a while.
            assert claim_run(session, run_id=created.run_id, worker="elsewhere@e2e") is not None
            for stage in (Stage.BUILDING, Stage.CHECKING, Stage.TIMING, Stage.SCORING):
                record_stage(session, run_id=created.run_id, stage=stage, at=utcnow())
            assert finish_run(session, run_id=created.run_id, result=result,
                              worker_info={"host": platform.node()})
        return created.submission_id


def synthetic_result(problem_slug: str, *, bench_ratio: float, private_ratio: float) -> JudgeResult:
    """An AC result on the problem's real CPU cases (so the board's columns match real runs)."""
    problem = load_problem(problem_slug)
    outputs = [spec.name for spec in problem.outputs]
    cases = []
    for case in problem.cases_for(Backend.CPU):
        ratio = {CaseSet.BENCHMARKS: bench_ratio, CaseSet.PRIVATE: private_ratio}.get(case.case_set)
        flops = 3.0 * float(case.params.get("n", 1_000_000))
        checks = {name: OutputCheck(True, 0.0, 0.0, 0.0, 1.0, 1e-6, 1e-3) for name in outputs}
        timed = ratio is not None
        median = BASELINE_NS * ratio if timed else None
        cases.append(CaseResult(
            name=case.name, case_set=case.case_set, passed=True, outputs=checks,
            timing=TimingStats(median, median, median * 0.97, median * 0.01, 40) if median else None,
            baseline_timing=TimingStats(BASELINE_NS, BASELINE_NS, BASELINE_NS * 0.97, BASELINE_NS * 0.01, 40)
            if timed else None,
            ratio=ratio, gflops=flops / median if median else None,
            gbytes_per_s=flops * 8 / 3 / median if median else None, flops=flops, checked_calls=4,
            sizes={"dtype": case.dtype, **case.params} if case.case_set is not CaseSet.PRIVATE else {},
        ))  # fmt: skip
    return JudgeResult(verdict=Verdict.AC, problem=problem_slug, backend=Backend.CPU,
                       message=f"all {len(cases)} cases passed", compile_log="", score=100.0 / bench_ratio,
                       cases=cases, host={"host": platform.node(), "device": "cpu"},
                       conditions=RunConditions(toolchain="g++ (synthetic)"))  # fmt: skip


# ---- the browser ------------------------------------------------------------------------------


def launch_chromium(playwright: Any) -> Any:
    """Debian's Chromium, headless (never a downloaded browser)."""
    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])


def log_in(page: Any, base: str, token: str) -> None:
    """Log in through the login form, as a person would."""
    page.goto(f"{base}/login")
    page.fill("#token", token)
    page.click("form[action='/login'] button[type=submit]")
    page.wait_for_load_state("load")
    assert "/login" not in page.url, page.content()[:2000]


def screenshot(page: Any, folder: Path, name: str, *, docs: bool = False, full_page: bool = True) -> Path:
    """A PNG of the page in the test's folder, and a copy in docs/screenshots/ when `docs` and
    OPJUDGE_UPDATE_SCREENSHOTS=1 (so an ordinary test run leaves the committed pictures alone)."""
    path = folder / name
    # Finite animations (a changed row's flash) are run to their end: the picture shows the steady state.
    page.screenshot(path=str(path), full_page=full_page, animations="disabled")
    if docs and os.environ.get("OPJUDGE_UPDATE_SCREENSHOTS") == "1":
        DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, DOCS_SHOTS / name)
    return path


# ---- in-process pages, without a browser -------------------------------------------------------


class NoDispatch:
    def enqueue(self, run_id: int, queue: str, priority: int = 6) -> None:
        """Runs stay queued: these tests only read pages."""


AppClient = tuple[TestClient, Any, Database]  # the client, the demo's tokens, the database


def in_process_app(tmp_path: Path) -> Iterator[AppClient]:
    """The app on a fresh SQLite file seeded with the demo, for a fixture to yield from."""
    settings = Settings(dev_mode=True, database_url=f"sqlite:///{tmp_path / 'pages.db'}")
    upgrade_database(settings)
    database = Database(settings)
    with database.session() as session:
        seed = seed_demo(session, settings)
    with TestClient(create_app(settings, NoDispatch(), database=database)) as client:
        yield client, seed, database
    database.dispose()


def log_in_client(client: TestClient, token: str) -> None:
    """Log in through the login form, without a browser."""
    form = client.get("/login").text
    nonce = re.search(r'action="/login">\s*<input type="hidden" name="csrf" value="([^"]+)"', form)
    assert nonce is not None
    answer = client.post("/login", data={"token": token, "csrf": nonce.group(1)}, follow_redirects=False)
    assert answer.status_code == 303, answer.text


def form_csrf(page_html: str) -> str:
    """The first CSRF token on a page (a form's hidden field)."""
    found = re.search(r'name="csrf" value="([^"]+)"', page_html)
    assert found is not None, page_html[:2000]
    return found.group(1)
