"""Organiser jobs end to end (re-audit and machine review): `opjudge serve` on PostgreSQL and Redis,
a separate `opjudge worker` (Celery) judging the uploads and then running the re-audit and the
machine review it is sent through the admin API."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e import kernels
from tests.e2e.conftest import FIXTURES, Api
from tests.e2e.services import DemoTokens, Process, service_env, start_api, start_worker, wait_until
from tests.workers.test_similarity import ORIGINAL, RENAMED

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.redis]


@pytest.fixture(scope="module")
def service(postgres_url: str, redis_url: str, log_dir: Path, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[Api, DemoTokens, list[Process]]]:  # fmt: skip
    work = tmp_path_factory.mktemp("jobs")
    env = service_env(OPJUDGE_DATABASE_URL=postgres_url, OPJUDGE_BROKER_URL=redis_url,
                      OPJUDGE_WORK_ROOT=str(work / "runs"), OPJUDGE_CACHE_DIR=str(work / "cache"),
                      OPJUDGE_RUN_CASE_SETS="tests")  # fmt: skip
    processes: list[Process] = []
    try:
        api_process, base, tokens = start_api(env, log_dir, name="jobs-api")
        processes.append(api_process)
        processes.append(start_worker(env, log_dir, name="judge.cpu@jobs-e2e"))
        assert tokens is not None
        api = Api(base)
        yield api, tokens, processes
        api.close()
    finally:
        for process in reversed(processes):
            process.stop()


def _job(api: Api, admin: str, path: str, body: dict[str, Any], processes: list[Process]) -> dict[str, Any]:
    started = api.call("POST", f"/api/v1/admin/competitions/demo/{path}", admin, json=body)
    assert started.status_code == 202, started.text
    assert started.json()["dispatch"] == ""  # handed to the Celery worker

    def finished() -> dict[str, Any] | None:
        job = api.call("GET", f"/api/v1/admin/jobs/{started.json()['id']}", admin).json()
        return job if job["status"] in ("done", "failed") else None

    job = wait_until(f"{path} job", finished, timeout_s=240, interval_s=1,
                     log=lambda: "\n".join(p.log() for p in processes))  # fmt: skip
    assert job["status"] == "done", job
    return job


def test_the_worker_reaudits_and_reviews_what_it_judged(service: tuple[Api, DemoTokens, list[Process]]) -> None:
    api, tokens, processes = service
    base = kernels.baseline().decode()
    uploads = {"alpha": base + ORIGINAL, "bravo": (FIXTURES / "exploit_system.cpp").read_text(),
               "charlie": base + RENAMED}
    ids = {}
    for team, source in uploads.items():
        answer = api.upload(tokens.teams[team], source.encode())
        assert answer.status_code == 202, answer.text
        ids[team] = answer.json()["id"]
    for team, submission_id in ids.items():
        api.wait_finished(tokens.teams[team], submission_id, timeout_s=240, logs=processes)

    audit = _job(api, tokens.admin, "reaudit", {}, processes)["result"]
    # The job names submissions by their database ids (organisers' view); teams' answers by public ids.
    assert {r["team"] for r in audit["refused"]} == {"bravo"}

    review = _job(api, tokens.admin, "similarity", {"threshold": 0.5}, processes)["result"]
    assert review["pairs"] >= 1
    pairs = api.call("GET", "/api/v1/admin/competitions/demo/similar-pairs?minimum=0.5", tokens.admin).json()
    teams = {frozenset((p["team_a"], p["team_b"])) for p in pairs}
    assert frozenset(("alpha", "charlie")) in teams and not any("bravo" in t for t in teams)
