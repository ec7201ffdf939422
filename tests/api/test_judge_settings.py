"""The NPU clock as a competition setting: set by organisers, sent with each run,
recorded with its result and shown on its report, in its JSON and in the CSV exports."""

from __future__ import annotations

import csv
import dataclasses
import io
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from api.settings import Settings
from api.store.db import Database
from api.store.errors import InvalidInputError
from api.store.judge_settings import apply_judge_settings, run_settings
from api.store.runs import claim_run, finish_run
from api.web.app import create_app
from api.web.pages.auth import TOKEN_COOKIE
from judge.backends import Backend
from judge.results import CaseResult
from tests.api.conftest import Clock, Contest, RecordingDispatcher
from tests.api.helpers import judge_run_id, result, upload
from tests.api.judging import open_quotas


def test_settings_are_checked_and_merged() -> None:
    stored = apply_judge_settings({}, {"npu_timing": "device"})
    assert apply_judge_settings(stored, {"npu_max_launches": 1}) == {"npu_timing": "device", "npu_max_launches": 1}
    assert run_settings({"npu_timing": "device", "npu_max_launches": 1, "other": 3}) == {
        "npu_timing": "device", "npu_max_launches": 1}
    for bad in ({"npu_timing": "wallclock"}, {"npu_max_launches": -1}, {"npu_max_launches": True},
                {"npu_max_launches": 1001}, {"cpu_timing": "x"}):
        with pytest.raises(InvalidInputError):
            apply_judge_settings({}, bad)


def test_organisers_set_the_clock_and_each_claimed_run_carries_it(
        client: TestClient, contest: Contest, database: Database, clock: Clock) -> None:
    admin = contest.auth("admin")
    before = client.get("/api/v1/competitions/cup", headers=admin).json()
    assert before["npu_timing"] is None and before["npu_max_launches"] is None  # the workers' default
    changed = client.patch("/api/v1/admin/competitions/cup", headers=admin,
                           json={"npu_timing": "device", "npu_max_launches": 1})
    assert changed.status_code == 200, changed.text
    assert (changed.json()["npu_timing"], changed.json()["npu_max_launches"]) == ("device", 1)
    refused = client.patch("/api/v1/admin/competitions/cup", headers=admin, json={"npu_timing": "wallclock"})
    assert refused.status_code == 422
    audit = client.get("/api/v1/admin/audit", headers=admin, params={"competition": "cup"}).json()
    assert any(e["action"] == "competition.update" and e["details"].get("npu_timing") == "device" for e in audit)

    with database.session() as session:
        open_quotas(session, contest, clock)
    created = upload(client, contest.auth("alpha")).json()
    with database.session() as session:
        claimed = claim_run(session, run_id=judge_run_id(session, created["id"]), worker="w", now=clock.now)
    assert claimed is not None and claimed.judge_settings == {"npu_timing": "device", "npu_max_launches": 1}


def _device_timed_result():  # type: ignore[no-untyped-def]
    judged = result(benchmarks={"b1": 0.5}, private={"p1": 0.6})
    cases: list[CaseResult] = [dataclasses.replace(c, launches=1, baseline_launches=3) if c.timing else c
                               for c in judged.cases]
    detail = ("device time of the tasks each call ran (torch_npu profiler), at most 1 launch per call of your "
              "kernel; the baseline's launches are counted, never capped")
    host = {**judged.host, "timing": "device", "max_launches": "1", "timing_detail": detail}
    return dataclasses.replace(judged, backend=Backend.NPU, cases=cases, host=host)


@pytest.fixture
def pages(settings: Settings, database: Database, dispatcher: RecordingDispatcher, clock: Clock
          ) -> Iterator[TestClient]:  # fmt: skip
    app = create_app(settings, dispatcher, database=database, clock=clock)
    with TestClient(app) as browser:
        yield browser


def test_the_clock_is_on_the_report_its_json_and_the_csv(
        client: TestClient, pages: TestClient, contest: Contest, database: Database, clock: Clock) -> None:
    with database.session() as session:
        open_quotas(session, contest, clock)
    created = upload(client, contest.auth("alpha")).json()
    with database.session() as session:
        run_id = judge_run_id(session, created["id"])
        claim_run(session, run_id=run_id, worker="w", now=clock.now)
        finish_run(session, run_id=run_id, result=_device_timed_result(), worker_info={}, now=clock.now)
    team = contest.auth("alpha")
    (run,) = client.get(created["status_url"], headers=team).json()["runs"]
    assert run["timing"]["timing"] == "device" and run["timing"]["max_launches"] == "1"
    by_name = {c["name"]: c for c in run["cases"]}
    assert (by_name["b1"]["launches"], by_name["b1"]["baseline_launches"]) == (1, 3)
    assert by_name["private cases"]["launches"] is None  # a private case stays pass or fail only
    assert by_name["t1"]["launches"] is None  # untimed

    pages.cookies.set(TOKEN_COOKIE, contest.tokens["alpha"])
    page = pages.get(f"/s/{created['id']}")
    assert page.status_code == 200
    assert '<dd id="clock">device time of the tasks each call ran' in page.text
    assert "1 launch a call; baseline 3" in page.text

    admin = contest.auth("admin")

    def rows(kind: str) -> list[dict[str, str]]:
        response = client.get(f"/api/v1/admin/competitions/cup/export/{kind}.csv", headers=admin)
        assert response.status_code == 200
        return list(csv.DictReader(io.StringIO(response.text)))

    results = {r["case"]: r for r in rows("results")}
    assert (results["b1"]["clock"], results["b1"]["launches"], results["b1"]["baseline_launches"]) == (
        "device", "1", "3")
    assert results["t1"]["launches"] == ""
    (judged_run,) = rows("runs")
    assert judged_run["clock"].startswith("device time of the tasks each call ran")
