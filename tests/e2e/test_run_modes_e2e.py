"""Run modes with every part real: `opjudge serve` on PostgreSQL and Redis, runs queued while no
worker is up, then one `opjudge worker` (Celery, prefork) takes the test run first; and the
embedded default judging a test run on `tests` only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e import kernels
from tests.e2e.conftest import Api
from tests.e2e.services import service_env, start_api, start_worker

pytestmark = pytest.mark.slow


def upload(api: Api, token: str, mode: str) -> dict[str, Any]:
    response = api.call("POST", "/api/v1/submissions", token,
                        data={"problem": "add_mul_relu", "backend": "cpu", "mode": mode},
                        files=[("files", ("kernel.cpp", kernels.baseline(), "text/x-c++src"))])  # fmt: skip
    assert response.status_code == 202, response.text
    return dict(response.json())


@pytest.mark.postgres
@pytest.mark.redis
def test_a_worker_takes_the_test_run_before_ranked_ones_queued_earlier(
    postgres_url: str, redis_url: str, log_dir: Path, tmp_path: Path
) -> None:
    env = service_env(OPJUDGE_DATABASE_URL=postgres_url, OPJUDGE_BROKER_URL=redis_url,
                      OPJUDGE_WORK_ROOT=str(tmp_path / "runs"), OPJUDGE_CACHE_DIR=str(tmp_path / "cache"))
    processes = []
    try:
        api_process, base, tokens = start_api(env, log_dir, name="api-modes")
        processes.append(api_process)
        assert tokens is not None
        api = Api(base)
        open_modes = {"test": {"min_interval_s": 0}, "benchmark": {"min_interval_s": 0}}
        patched = api.call("PATCH", "/api/v1/admin/competitions/demo", tokens.admin, json={"mode_quotas": open_modes})
        assert patched.status_code == 200, patched.text
        team = tokens.teams["charlie"]
        ranked = [upload(api, team, "ranked"), upload(api, team, "ranked")]
        benchmark = upload(api, team, "benchmark")
        test = upload(api, team, "test")
        assert all(u["queued"] for u in [*ranked, benchmark, test]) and test["mode"] == "test"
        processes.append(start_worker(env, log_dir, name="judge.cpu@modes-1"))
        done = {u["id"]: api.wait_finished(team, u["id"], timeout_s=400, logs=processes)
                for u in [test, benchmark, *ranked]}  # fmt: skip
        started = {i: d["runs"][0]["started_at"] for i, d in done.items()}
        # Redis priorities: the test run first, then the benchmark run, then the ranked ones in order.
        assert sorted(started, key=started.__getitem__) == [test["id"], benchmark["id"], ranked[0]["id"],
                                                           ranked[1]["id"]]  # fmt: skip
        sets = {i: [c["case_set"] for c in d["runs"][0]["cases"]] for i, d in done.items()}
        assert set(sets[test["id"]]) == {"tests"} and done[test["id"]]["submission"]["verdict"] == "AC"
        assert set(sets[benchmark["id"]]) == {"tests", "benchmarks"}
        assert set(sets[ranked[0]["id"]]) == {"tests", "benchmarks", "private"}
        assert done[test["id"]]["submission"]["mode"] == "test"
        board = api.call("GET", "/api/v1/competitions/demo/leaderboard").json()
        charlie = next(r for r in board["rows"] if r["team_name"] == "charlie")
        assert charlie["submission_ids"]["add_mul_relu"] == ranked[1]["id"]  # the latest ranked run ranks
        api.close()
    finally:
        for process in reversed(processes):
            process.stop()


def test_the_embedded_default_judges_a_test_run_on_tests_only(tmp_path: Path, log_dir: Path) -> None:
    env = service_env(OPJUDGE_DATABASE_URL=f"sqlite:///{tmp_path / 'opjudge.db'}",
                      OPJUDGE_WORK_ROOT=str(tmp_path / "work"), OPJUDGE_CACHE_DIR=str(tmp_path / "cache"))
    process, base, tokens = start_api(env, log_dir, name="embedded-modes")
    api = Api(base)
    try:
        assert tokens is not None
        created = upload(api, tokens.teams["charlie"], "test")
        detail = api.wait_finished(tokens.teams["charlie"], created["id"], timeout_s=300, logs=[process])
        assert detail["submission"]["verdict"] == "AC" and detail["submission"]["mode"] == "test"
        assert [c["case_set"] for c in detail["runs"][0]["cases"]] == ["tests"] * 5
        assert all(c["median_ns"] is None for c in detail["runs"][0]["cases"])  # nothing timed
    finally:
        api.close()
        process.stop()
