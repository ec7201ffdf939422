"""Run modes through the API (docs/rules.md "Run modes"): each its own quota, only ranked runs rank,
the mode on every row, and test runs ahead of ranked ones on the queue."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.store.db import Database
from api.store.modes import QueuePriority
from api.store.runs import claim_run, finish_run, runs_to_dispatch
from judge.backends import CaseSet
from judge.modes import RunMode
from tests.api.conftest import Clock, Contest
from tests.api.helpers import KERNEL, judge_run_id, result


class PriorityDispatcher:
    def __init__(self) -> None:
        self.sent: list[tuple[int, str, int]] = []

    def enqueue(self, run_id: int, queue: str, priority: int = 6) -> None:
        self.sent.append((run_id, queue, priority))


def submit(client: TestClient, contest: Contest, team: str, mode: str | None) -> Any:
    data = {"problem": "add_mul_relu", "backend": "cpu", **({"mode": mode} if mode else {})}
    return client.post("/api/v1/submissions", headers=contest.auth(team), data=data,
                       files=[("files", ("kernel.cpp", KERNEL, "text/x-c++src"))])  # fmt: skip


def test_modes_have_their_own_quotas_and_intervals(client: TestClient, contest: Contest, clock: Clock) -> None:
    # The contest's own quota (5 a day, 60 s apart, 2 in flight) is the ranked mode's.
    assert submit(client, contest, "alpha", None).status_code == 202  # no mode: ranked
    too_soon = submit(client, contest, "alpha", "ranked")
    assert too_soon.status_code == 429 and "ranked" in too_soon.json()["detail"]
    test = submit(client, contest, "alpha", "test")  # a ranked run just went: a test run may still go
    assert test.status_code == 202 and test.json()["mode"] == "test"
    again = submit(client, contest, "alpha", "test")
    assert again.status_code == 429 and "10 s between two test runs" in again.json()["detail"]
    assert again.headers["Retry-After"] == "10"  # the injected clock has not moved since the last test run
    assert submit(client, contest, "alpha", "benchmark").status_code == 202
    clock.advance(11)
    assert submit(client, contest, "alpha", "test").status_code == 202
    clock.advance(11)
    flying = submit(client, contest, "alpha", "test")  # two test runs are still queued
    assert flying.status_code == 429
    assert "2 runs still in flight (limit 2) among your test runs" in flying.json()["detail"]
    me = client.get("/api/v1/me", headers=contest.auth("alpha")).json()
    assert me["quotas"]["test"]["used_24h"] == 2 and me["quotas"]["test"]["limit_24h"] == 200
    assert me["quotas"]["benchmark"]["used_24h"] == 1 and me["quotas"]["benchmark"]["limit_24h"] == 100
    assert me["quotas"]["ranked"]["used_24h"] == 1 and me["quota"]["limit_24h"] == 5
    assert me["quotas"]["test"]["min_interval_s"] == 10 and me["quotas"]["benchmark"]["min_interval_s"] == 30


def test_an_unknown_mode_is_refused_with_the_modes(client: TestClient, contest: Contest) -> None:
    refused = submit(client, contest, "alpha", "fast")
    assert refused.status_code == 422 and "test, benchmark, ranked" in refused.json()["detail"]


def test_organisers_set_each_modes_quota(client: TestClient, contest: Contest, clock: Clock) -> None:
    path = f"/api/v1/admin/competitions/{contest.slug}"
    changed = client.patch(path, headers=contest.auth("admin"),
                           json={"mode_quotas": {"test": {"per_day": 1, "min_interval_s": 0}}})  # fmt: skip
    assert changed.status_code == 200, changed.text
    quotas = changed.json()["mode_quotas"]
    assert quotas["test"] == {"per_day": 1, "min_interval_s": 0, "max_in_flight": 2}
    assert quotas["benchmark"] == {"per_day": 100, "min_interval_s": 30, "max_in_flight": 2}
    assert quotas["ranked"] == {"per_day": 5, "min_interval_s": 60, "max_in_flight": 2}
    assert submit(client, contest, "alpha", "test").status_code == 202
    spent = submit(client, contest, "alpha", "test")
    assert spent.status_code == 429 and "(limit 1 for test runs)" in spent.json()["detail"]
    ranked = client.patch(path, headers=contest.auth("admin"), json={"mode_quotas": {"ranked": {"per_day": 7}}})
    assert ranked.json()["quota_per_day"] == 7  # the ranked mode's quota is the competition's own
    bad = client.patch(path, headers=contest.auth("admin"), json={"mode_quotas": {"test": {"per_day": 0}}})
    assert bad.status_code == 422


def test_only_ranked_runs_count_on_the_board_and_every_row_says_its_mode(
    client: TestClient, contest: Contest, database: Database, clock: Clock
) -> None:
    ids = {}
    for team, mode in (("alpha", "benchmark"), ("bravo", "ranked")):
        created = submit(client, contest, team, mode).json()
        ids[team] = created["id"]
        with database.session() as session:
            run_id = judge_run_id(session, created["id"])
            claim_run(session, run_id=run_id, worker="w", now=clock.now)
            outcome = result(benchmarks={"b1": 0.5 if team == "alpha" else 1.0})
            finish_run(session, run_id=run_id, result=outcome, worker_info={}, now=clock.now)
    board = client.get(f"/api/v1/competitions/{contest.slug}/leaderboard").json()
    ranked = {row["team_name"]: row for row in board["rows"] if row["rank"] is not None}
    # alpha's benchmark run was twice as fast, and still does not rank, nor set r*_c: bravo's entry is the
    # best ranked one and scores 100 on add_mul_relu, 50 over the contest's two problems (18 against alpha's).
    assert list(ranked) == ["bravo"] and ranked["bravo"]["online_score"] == pytest.approx(50.0)
    mine = client.get("/api/v1/submissions", headers=contest.auth("alpha")).json()
    assert [s["mode"] for s in mine] == ["benchmark"]
    detail = client.get(f"/api/v1/submissions/{ids['alpha']}", headers=contest.auth("alpha")).json()
    assert detail["submission"]["mode"] == "benchmark" and detail["submission"]["verdict"] == "AC"
    csv = client.get(f"/api/v1/admin/competitions/{contest.slug}/export/submissions.csv", headers=contest.auth("admin"))
    header, *rows = csv.text.strip().splitlines()
    assert "mode" in header.split(",")
    column = header.split(",").index("mode")
    assert sorted(row.split(",")[column] for row in rows) == ["benchmark", "ranked"]


def test_test_runs_go_first_on_the_queue(settings, database: Database, contest: Contest, clock: Clock) -> None:
    from api.web.app import create_app

    dispatcher = PriorityDispatcher()
    app = create_app(settings, dispatcher, database=database, clock=clock, pages=False)
    with TestClient(app) as client:
        for mode in ("ranked", "benchmark", "test"):
            assert submit(client, contest, "alpha", mode).status_code == 202
    assert [p for _, _, p in dispatcher.sent] == [QueuePriority.RANKED, QueuePriority.BENCHMARK, QueuePriority.TEST]
    assert QueuePriority.TEST < QueuePriority.BENCHMARK < QueuePriority.RANKED < QueuePriority.ORGANISER


def test_pending_runs_are_handed_out_test_first(settings, database: Database, contest: Contest,
                                                clock: Clock) -> None:  # fmt: skip
    from api.store.submissions import create_submission
    from judge.backends import Backend

    made = {}
    with database.session() as session:
        for team, mode in (("alpha", RunMode.RANKED), ("bravo", RunMode.TEST)):
            made[mode] = create_submission(session, team_id=contest.team_ids[team], problem="add_mul_relu",
                                           backend=Backend.CPU, files=[("kernel.cpp", KERNEL)], queue="judge.cpu",
                                           now=clock.now, mode=mode)  # fmt: skip
        clock.advance(60)
        pending = runs_to_dispatch(session, limit=10, now=clock.now)
    assert [d.run_id for d in pending] == [made[RunMode.TEST].run_id, made[RunMode.RANKED].run_id]
    assert pending[0].priority == QueuePriority.TEST


def test_the_mode_narrows_the_case_sets() -> None:
    every = (CaseSet.TESTS, CaseSet.BENCHMARKS, CaseSet.PRIVATE)
    assert RunMode.TEST.select(every) == (CaseSet.TESTS,)
    assert RunMode.BENCHMARK.select(every) == (CaseSet.TESTS, CaseSet.BENCHMARKS)
    assert RunMode.RANKED.select(every) == every
    assert RunMode.BENCHMARK.select((CaseSet.BENCHMARKS, CaseSet.PRIVATE)) == (CaseSet.BENCHMARKS,)
