"""Faults with real processes: a worker killed mid-run, PostgreSQL restarted under the API,
Redis down at upload time. Nothing is lost, and every run ends with one verdict.

The PostgreSQL and Redis that get stopped here are throwaway servers these tests start
on free ports; the machine's own servers are never touched.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e import kernels
from tests.e2e.conftest import Api, fresh_database
from tests.e2e.services import (
    Process,
    ThrowawayPostgres,
    ThrowawayRedis,
    children,
    service_env,
    start_api,
    start_worker,
    wait_until,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def processes() -> Iterator[list[Process]]:
    started: list[Process] = []
    yield started
    for process in reversed(started):
        process.stop()


@pytest.fixture
def database() -> Iterator[str]:
    with fresh_database() as url:
        yield url


def fast_env(tmp_path: Path, **overrides: str) -> dict[str, str]:
    return service_env(OPJUDGE_WORK_ROOT=str(tmp_path / "runs"), OPJUDGE_CACHE_DIR=str(tmp_path / "cache"),
                       OPJUDGE_RUN_CASE_SETS="tests", **overrides)


@pytest.mark.postgres
@pytest.mark.redis
def test_a_worker_killed_mid_run_gets_the_run_judged_exactly_once_more(
    database: str, redis_url: str, tmp_path: Path, log_dir: Path, processes: list[Process]
) -> None:
    env = fast_env(tmp_path, OPJUDGE_DATABASE_URL=database, OPJUDGE_BROKER_URL=redis_url)
    api_process, base, tokens = start_api(env, log_dir, name="api-kill")
    processes.append(api_process)
    worker = start_worker(env, log_dir, name="judge.cpu@fault-kill")
    processes.append(worker)
    assert tokens is not None
    api, admin = Api(base), tokens.admin
    # About a second per call and five test cases: the run is killed while it checks them.
    response = api.upload(tokens.teams["alpha"], kernels.spinning(1_000_000_000))
    assert response.status_code == 202, response.text
    submission_id = response.json()["id"]

    def checking() -> dict[str, Any] | None:
        run = api.submission(admin, submission_id)["runs"][0]
        return run if run["stage"] == "checking" else None

    first = wait_until("the run to reach the checking stage", checking, timeout_s=120,
                       log=lambda: worker.log() + api_process.log())
    assert first["attempt"] == 1
    time.sleep(1.0)  # well inside the checking of the first cases
    pool = children(worker.pid)
    assert len(pool) == 1, f"expected one pool process under the worker, found {pool}"
    os.kill(pool[0], signal.SIGKILL)

    detail = api.wait_finished(admin, submission_id, timeout_s=180, logs=[worker, api_process])
    (run,) = detail["runs"]
    assert detail["submission"]["verdict"] == "AC", detail
    assert run["status"] == "done" and run["attempt"] == 2  # judged exactly once more
    assert [c["case_set"] for c in run["cases"]] == ["tests"] * 5  # one set of results, not two
    assert worker.alive()  # the worker lived on with a fresh pool process
    time.sleep(3)  # nothing judges it a third time
    again = api.submission(admin, submission_id)
    assert again["runs"][0]["attempt"] == 2 and len(again["runs"]) == 1
    assert "attempt 2" in worker.log_path.read_text()
    api.close()


@pytest.mark.redis
def test_postgresql_restarted_under_the_api_gives_503_then_recovers(
    redis_url: str, tmp_path: Path, log_dir: Path, processes: list[Process]
) -> None:
    try:
        pg = ThrowawayPostgres()
    except (FileNotFoundError, RuntimeError) as exc:
        pytest.skip(f"cannot create a throwaway PostgreSQL cluster: {exc}")
    try:
        pg.start()
        env = fast_env(tmp_path, OPJUDGE_DATABASE_URL=pg.url, OPJUDGE_BROKER_URL=redis_url)
        api_process, base, tokens = start_api(env, log_dir, name="api-pg")
        processes.append(api_process)
        assert tokens is not None
        api, team = Api(base), tokens.teams["alpha"]
        stored = api.upload(team, kernels.baseline())
        assert stored.status_code == 202, stored.text

        pg.stop()
        listing = api.call("GET", "/api/v1/submissions", team)
        assert listing.status_code == 503, listing.text
        assert "database is unavailable" in listing.json()["detail"] and listing.headers.get("Retry-After")
        refused = api.upload(team, kernels.baseline())
        assert refused.status_code == 503 and "database" in refused.json()["detail"]

        pg.start()

        def listed() -> list[dict[str, Any]] | None:
            response = api.call("GET", "/api/v1/submissions", team)
            return response.json() if response.status_code == 200 else None

        submissions = wait_until("the API to answer again", listed, timeout_s=60, log=api_process.log)
        assert [s["id"] for s in submissions] == [stored.json()["id"]]  # kept; the refused one never stored
        again = api.upload(team, kernels.baseline())
        assert again.status_code == 202, again.text
        api.close()
    finally:
        for process in processes:
            process.stop()
        processes.clear()
        pg.destroy()


@pytest.mark.postgres
def test_an_upload_while_redis_is_down_is_stored_and_queued_when_redis_is_back(
    database: str, tmp_path: Path, log_dir: Path, processes: list[Process]
) -> None:
    broker = ThrowawayRedis(log_dir)
    try:
        broker.start()
        env = fast_env(tmp_path, OPJUDGE_DATABASE_URL=database, OPJUDGE_BROKER_URL=broker.url)
        api_process, base, tokens = start_api(env, log_dir, name="api-redis")
        processes.append(api_process)
        worker = start_worker(env, log_dir, name="judge.cpu@fault-redis")
        processes.append(worker)
        assert tokens is not None
        api, team = Api(base), tokens.teams["bravo"]

        broker.stop()
        started = time.monotonic()
        response = api.upload(team, kernels.baseline())
        assert time.monotonic() - started < 30  # the upload does not wait for the broker (generous: a loaded host)
        assert response.status_code == 202, response.text
        body = response.json()
        assert body["queued"] is False and body["status"] == "pending" and "unavailable" in body["message"]
        time.sleep(2)  # a few reaper passes fail while Redis is down: the run stays pending
        assert api.submission(team, body["id"])["submission"]["status"] == "pending"

        broker.start()
        detail = api.wait_finished(team, body["id"], timeout_s=180, logs=[worker, api_process])
        assert detail["submission"]["verdict"] == "AC"
        assert detail["runs"][0]["attempt"] == 1 and detail["runs"][0]["queued_at"]
        api.close()
    finally:
        for process in processes:
            process.stop()
        processes.clear()
        broker.stop()
