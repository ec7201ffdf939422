"""The service end to end, every part real: `opjudge serve` on PostgreSQL and Redis with a
separate `opjudge worker` (Celery, prefork) judging; and the embedded default, SQLite and an
in-process worker, as `make run` starts it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e import kernels
from tests.e2e.conftest import Api
from tests.e2e.services import DemoTokens, Process, service_env, start_api, start_worker, wait_until

pytestmark = pytest.mark.slow


class Service:
    def __init__(self, api: Api, tokens: DemoTokens, processes: list[Process]) -> None:
        self.api, self.tokens, self.processes = api, tokens, processes

    def judged(self, team: str, submission_id: int) -> dict[str, Any]:
        return self.api.wait_finished(self.tokens.teams[team], submission_id, logs=self.processes)


@pytest.fixture(scope="module")
def service(postgres_url: str, redis_url: str, log_dir: Path, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[Service]:
    work = tmp_path_factory.mktemp("work")
    env = service_env(OPJUDGE_DATABASE_URL=postgres_url, OPJUDGE_BROKER_URL=redis_url,
                      OPJUDGE_WORK_ROOT=str(work / "runs"), OPJUDGE_CACHE_DIR=str(work / "cache"))
    processes: list[Process] = []
    try:
        api_process, base, tokens = start_api(env, log_dir)
        processes.append(api_process)
        processes.append(start_worker(env, log_dir, name="judge.cpu@e2e-1"))
        assert tokens is not None
        api = Api(base)
        yield Service(api, tokens, processes)
        api.close()
    finally:
        for process in reversed(processes):
            process.stop()


@pytest.fixture(scope="module")
def uploads(service: Service) -> dict[str, int]:
    """alpha: the baseline; bravo: a wrong kernel; charlie: the baseline's work done four times."""
    sources = {"alpha": kernels.baseline(), "bravo": kernels.wrong(), "charlie": kernels.repeated(4)}
    ids = {}
    for team, source in sources.items():
        response = service.api.upload(service.tokens.teams[team], source)
        assert response.status_code == 202, response.text
        body = response.json()
        assert body["queued"] is True and body["status"] == "queued"
        assert body["status_url"] == f"/api/v1/submissions/{body['id']}"
        ids[team] = body["id"]
    return ids


@pytest.mark.postgres
@pytest.mark.redis
def test_the_baseline_is_queued_claimed_judged_and_accepted_with_per_case_results(service, uploads) -> None:
    detail = service.judged("alpha", uploads["alpha"])
    assert detail["submission"]["verdict"] == "AC", detail
    (run,) = detail["runs"]
    assert run["status"] == "done" and run["attempt"] == 1
    assert {"policy", "building", "checking", "timing", "scoring", "done"} <= set(run["stage_times"])
    sets = [case["case_set"] for case in run["cases"]]
    # The private set is one pass-or-fail row for the team until the final ranking is published.
    assert sets.count("tests") == 5 and sets.count("benchmarks") == 2 and sets.count("private") == 1
    for case in run["cases"]:
        assert case["passed"] is True
        if case["case_set"] == "benchmarks":
            assert case["median_ns"] > 0 and case["ratio"] > 0 and case["gflops"] > 0
        if case["case_set"] == "private":  # teams see pass/fail only
            assert case["median_ns"] is None and case["sizes"] == {}
    # The organisers see which worker judged it, and with what.
    admin_view = service.api.submission(service.tokens.admin, uploads["alpha"])
    assert [c["case_set"] for c in admin_view["runs"][0]["cases"]].count("private") == 2  # every case, always
    assert admin_view["runs"][0]["worker_host"] and admin_view["runs"][0]["toolchain"].startswith("g++")
    workers = service.api.call("GET", "/api/v1/admin/workers", service.tokens.admin).json()
    seen = {w["name"]: w for w in workers}
    assert seen["judge.cpu@e2e-1"]["queue"] == "judge.cpu"
    assert seen["judge.cpu@e2e-1"]["info"]["toolchain"].startswith("g++")


@pytest.mark.postgres
@pytest.mark.redis
def test_a_wrong_kernel_gets_wa(service, uploads) -> None:
    detail = service.judged("bravo", uploads["bravo"])
    assert detail["submission"]["verdict"] == "WA"
    failed = [case for case in detail["runs"][0]["cases"] if not case["passed"]]
    assert failed and failed[0]["message"]
    # Another team cannot read it.
    other = service.api.call("GET", f"/api/v1/submissions/{uploads['bravo']}", service.tokens.teams["alpha"])
    assert other.status_code == 404


@pytest.mark.postgres
@pytest.mark.redis
def test_the_leaderboard_orders_teams_by_the_spec_formula(service, uploads) -> None:
    for team in ("alpha", "charlie"):
        assert service.judged(team, uploads[team])["submission"]["verdict"] == "AC"
    board = service.api.call("GET", "/api/v1/competitions/demo/leaderboard").json()
    assert board["case_set"] == "benchmarks" and board["relative_to"] == "best"
    rows = {row["team_name"]: row for row in board["rows"]}
    ranked = sorted((r for r in board["rows"] if r["rank"] is not None), key=lambda r: r["rank"])
    assert [r["team_name"] for r in ranked][:2] == ["alpha", "charlie"]
    assert rows["bravo"]["online_score"] == 0  # a submission that fails any case scores 0
    _check_formula(board, [rows["alpha"], rows["charlie"]])


def _check_formula(board: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    """docs/rules.md "Scoring": score_c = 100 / (1 + log_1.5(r_c / r*_c)), means per problem, then over problems."""
    columns = board["columns"]
    best = {}
    for index, column in enumerate(columns):
        ratios = [row["cells"][index]["ratio"] for row in rows if row["cells"][index]]
        best[index] = min(ratios)
        assert column["problem"] in board["problems"]
    for row in rows:
        per_problem: dict[str, list[float]] = {}
        for index, column in enumerate(columns):
            cell = row["cells"][index]
            if column["problem"] != "add_mul_relu":
                continue
            expected = 100 / (1 + math.log(cell["ratio"] / best[index], 1.5))
            # The JSON rounds scores to 4 decimals and ratios to 6 significant digits.
            assert cell["score"] == pytest.approx(expected, rel=1e-5, abs=1e-4)
            per_problem.setdefault(column["problem"], []).append(expected)
        problem_score = sum(per_problem["add_mul_relu"]) / len(per_problem["add_mul_relu"])
        assert row["problem_scores"]["add_mul_relu"] == pytest.approx(problem_score, abs=1e-4)
        online = sum(row["problem_scores"].get(p, 0.0) for p in board["problems"]) / len(board["problems"])
        assert row["online_score"] == pytest.approx(online, abs=1e-4)


@pytest.mark.postgres
@pytest.mark.redis
def test_reviewer_marks_move_the_final_ranking_by_three_tenths_of_their_mean(service, uploads) -> None:
    for team in ("alpha", "charlie"):
        service.judged(team, uploads[team])
    admin, reviewer = service.tokens.admin, service.tokens.reviewer
    before = _final_rows(service, admin)
    assert before["alpha"]["rank"] < before["charlie"]["rank"]  # faster on the private cases
    team_ids = {name: row["team_id"] for name, row in before.items()}
    marks = {"alpha": {"design": 0, "code_quality": 0, "presentation": 0},
             "charlie": {"design": 40, "code_quality": 30, "presentation": 30}}
    for team, team_marks in marks.items():
        response = service.api.call("PUT", f"/api/v1/review/teams/{team_ids[team]}", reviewer,
                                    json={"marks": team_marks, "comment": "e2e"})
        assert response.status_code == 200, response.text
    # Boards are cached for up to a second (api/web/boardcache.py): wait for the one with the marks.
    # (a bound on a poll, not a figure: generous, so a loaded host cannot fail it)
    after = wait_until("the final board to show the marks", lambda: _with_marks(service, admin), timeout_s=60)
    for team, team_marks in marks.items():
        mean = float(sum(team_marks.values()))  # one reviewer: the mean is their total
        assert after[team]["reviewer_score"] == pytest.approx(mean)
        expected = 0.7 * after[team]["online_score"] + 0.3 * mean
        assert after[team]["final_score"] == pytest.approx(expected, abs=0.01)
        assert after[team]["online_score"] == pytest.approx(before[team]["online_score"])
    assert after["charlie"]["rank"] < after["alpha"]["rank"]  # 0.3 x 100 outweighs charlie's slower kernel


def _with_marks(service: Service, admin: str) -> dict[str, dict[str, Any]] | None:
    rows = _final_rows(service, admin)
    return rows if all(rows[t]["reviewer_score"] is not None for t in ("alpha", "charlie")) else None


def _final_rows(service: Service, admin: str) -> dict[str, dict[str, Any]]:
    response = service.api.call("GET", "/api/v1/competitions/demo/leaderboard", admin, params={"final": "true"})
    assert response.status_code == 200, response.text
    board = response.json()
    assert board["case_set"] == "private" and board["final"] is True
    return {row["team_name"]: row for row in board["rows"]}


def test_the_embedded_default_judges_in_process(tmp_path: Path, log_dir: Path) -> None:
    """`opjudge serve --seed-demo` as `make run` starts it: SQLite under var/, no broker, no worker process."""
    env = service_env(OPJUDGE_DATABASE_URL=f"sqlite:///{tmp_path / 'var' / 'opjudge.db'}",
                      OPJUDGE_WORK_ROOT=str(tmp_path / "var" / "work"), OPJUDGE_CACHE_DIR=str(tmp_path / "cache"),
                      OPJUDGE_RUN_CASE_SETS="tests")
    for name in ("OPJUDGE_JUDGE_SECRET", "OPJUDGE_TOKEN_PEPPER"):
        del env[name]  # the embedded server makes its own, as on a fresh clone
    process, base, tokens = start_api(env, log_dir, name="embedded")
    api = Api(base)
    try:
        assert tokens is not None
        response = api.upload(tokens.teams["alpha"], kernels.baseline())
        assert response.status_code == 202, response.text
        detail = api.wait_finished(tokens.teams["alpha"], response.json()["id"], logs=[process])
        assert detail["submission"]["verdict"] == "AC"
        assert [c["case_set"] for c in detail["runs"][0]["cases"]] == ["tests"] * 5
        assert (tmp_path / "var" / "secrets.json").is_file()
    finally:
        api.close()
        process.stop()
