"""A waiting run's place in its queue and the estimate of its wait (docs/user-guide.md, "Submitting")."""

from __future__ import annotations

from fastapi.testclient import TestClient

from api.store.db import Database
from api.store.runs import claim_run, finish_run
from api.store.submissions import create_submission
from judge.backends import Backend
from judge.modes import RunMode
from tests.api.conftest import Clock, Contest
from tests.api.helpers import KERNEL, result
from tests.api.judging import open_quotas


def test_position_follows_priority_then_age_and_the_wait_comes_from_recent_runs(
    client: TestClient, contest: Contest, database: Database, clock: Clock
) -> None:
    def make(team: str, mode: RunMode) -> tuple[str, int]:
        with database.session() as session:
            made = create_submission(session, team_id=contest.team_ids[team], problem="add_mul_relu",
                                     backend=Backend.CPU, files=[("kernel.cpp", KERNEL)], queue="judge.cpu",
                                     now=clock.now, mode=mode)  # fmt: skip
        return made.public_id, made.run_id  # teams name a submission by its public id

    with database.session() as session:
        open_quotas(session, contest, clock, mode_quotas={"test": {"min_interval_s": 0}})
    # One run judged in 40 s teaches the estimate; with no finished run there is none.
    first_sub, first_run = make("charlie", RunMode.RANKED)
    body = client.get(f"/api/v1/submissions/{first_sub}", headers=contest.auth("charlie")).json()
    assert body["queue"]["position"] == 1 and body["queue"]["estimated_wait_s"] is None
    with database.session() as session:
        claim_run(session, run_id=first_run, worker="w", now=clock.now)
        clock.advance(40)
        finish_run(session, run_id=first_run, result=result(benchmarks={"b1": 1.0}), worker_info={}, now=clock.now)
    ranked = [make("alpha", RunMode.RANKED), make("bravo", RunMode.RANKED)]
    test_sub, _ = make("alpha", RunMode.TEST)

    def place(submission_id: str, team: str) -> dict:
        return client.get(f"/api/v1/submissions/{submission_id}", headers=contest.auth(team)).json()["queue"]

    assert place(test_sub, "alpha")["position"] == 1  # the test run goes before both ranked runs
    later = place(ranked[1][0], "bravo")
    assert later["position"] == 3 and later["ahead"] == 2 and later["workers"] == 1
    # Two runs ahead: the test run (no test run finished yet: the queue's median, 40 s) and a ranked one.
    assert later["estimated_wait_s"] == 80.0 and later["typical_run_s"] == 40.0
    with database.session() as session:
        claim_run(session, run_id=ranked[0][1], worker="w", now=clock.now)
    assert place(ranked[0][0], "alpha") is None  # running: no longer waiting
    assert place(ranked[1][0], "bravo")["running"] == 1
    upload = client.post("/api/v1/submissions", headers=contest.auth("charlie"),
                         data={"problem": "add_mul_relu", "backend": "cpu", "mode": "test"},
                         files=[("files", ("kernel.cpp", KERNEL, "text/x-c++src"))])  # fmt: skip
    assert upload.status_code == 202 and upload.json()["queue"]["position"] == 2  # behind alpha's test run
