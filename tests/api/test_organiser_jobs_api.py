"""Organiser jobs through the admin API (docs/organisers.md), run by the worker code on this database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.settings import Settings
from api.store.db import Session
from tests.api.conftest import Clock, Contest
from tests.api.helpers import KERNEL, stored_id, upload
from workers.context import WorkerContext
from workers.organiser_jobs import run_organiser_job
from workers.settings import WorkerSettings

SYSTEM = b'#include "add_mul_relu.h"\n#include <cstdlib>\nint kernel_run(void) { return std::system("id"); }\n'


def worker_context(settings: Settings, tmp_path: Path) -> WorkerContext:
    """What a worker on this database runs jobs with."""
    return WorkerContext(WorkerSettings(database_url=settings.database_url, judge_secret=settings.judge_secret,
                                        token_pepper="token-pepper-for-tests-0123456789", work_root=tmp_path / "w",
                                        cache_dir=tmp_path / "c"), name="judge.cpu@jobs")  # fmt: skip


@pytest.fixture
def worker(settings: Settings, tmp_path: Path) -> Iterator[WorkerContext]:
    ctx = worker_context(settings, tmp_path)
    yield ctx
    ctx.close()


def test_a_reaudit_lists_what_todays_policy_refuses(
    client: TestClient, contest: Contest, clock: Clock, worker: WorkerContext, session: Session
) -> None:
    clean = stored_id(session, upload(client, contest.auth("alpha"), files=[("kernel.cpp", KERNEL)]).json()["id"])
    clock.advance(120)
    bad = stored_id(session, upload(client, contest.auth("bravo"), files=[("kernel.cpp", SYSTEM)]).json()["id"])
    admin = contest.auth("admin")
    started = client.post("/api/v1/admin/competitions/cup/reaudit", headers=admin, json={})
    assert started.status_code == 202, started.text
    job = started.json()
    assert job["status"] == "pending" and "takes no organiser jobs" in job["dispatch"]  # the test dispatcher
    again = client.post("/api/v1/admin/competitions/cup/reaudit", headers=admin, json={})
    assert again.status_code == 409 and "has not finished yet" in again.json()["detail"]

    assert run_organiser_job(worker, job["id"]) == "done"
    done = client.get(f"/api/v1/admin/jobs/{job['id']}", headers=admin).json()
    assert done["status"] == "done" and done["result"]["scanned"] == 2
    (refusal,) = {r["submission_id"]: r for r in done["result"]["refused"]}.values()
    assert refusal["submission_id"] == bad and refusal["team"] == "bravo" and refusal["line"] == 3
    assert clean not in {r["submission_id"] for r in done["result"]["refused"]}
    listed = client.get("/api/v1/admin/competitions/cup/jobs?kind=reaudit", headers=admin).json()
    assert [j["id"] for j in listed] == [job["id"]]
    assert client.get("/api/v1/admin/jobs/99999", headers=admin).status_code == 404
    assert client.post("/api/v1/admin/competitions/cup/reaudit", headers=contest.auth("alpha"),
                       json={}).status_code == 403  # fmt: skip
