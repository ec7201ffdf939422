"""Teams upload, the submission is stored before it is queued, and teams read only their own."""

from __future__ import annotations

from datetime import datetime, timedelta

from fastapi.testclient import TestClient
from sqlalchemy import update

from api.dispatch import dispatch_pending
from api.settings import Settings
from api.store.db import Database
from api.store.enums import RunStatus
from api.store.models import Competition
from api.store.runs import claim_run, finish_run
from api.store.stats import row_counts
from api.store.submissions import submission_sources
from api.web.app import create_app
from judge.verdict import Verdict
from tests.api.conftest import Clock, Contest, DownDispatcher, RecordingDispatcher
from tests.api.helpers import KERNEL, judge_run_id, result, stored_id, upload


def test_upload_stores_the_files_then_enqueues_a_run(
    client: TestClient, contest: Contest, dispatcher: RecordingDispatcher, database: Database
) -> None:
    header = b"// helper\n"
    response = upload(client, contest.auth("alpha"), files=[("kernel.cpp", KERNEL), ("util.h", header)])
    assert response.status_code == 202, response.text
    body = response.json()
    assert body["status"] == "queued" and body["queued"] is True
    assert body["status_url"] == f"/api/v1/submissions/{body['id']}"
    with database.session() as session:
        assert dispatcher.sent == [(judge_run_id(session, body["id"]), "judge.cpu")]
        assert submission_sources(session, submission_id=stored_id(session, body["id"])) == [
            ("kernel.cpp", KERNEL), ("util.h", header)]  # fmt: skip
    detail = client.get(body["status_url"], headers=contest.auth("alpha")).json()
    assert detail["submission"]["status"] == "queued"
    assert [f["name"] for f in detail["files"]] == ["kernel.cpp", "util.h"]
    assert detail["runs"][0]["kind"] == "judge" and detail["runs"][0]["status"] == "queued"


def test_a_team_reads_its_results_and_never_another_teams(
    client: TestClient, contest: Contest, database: Database
) -> None:
    created = upload(client, contest.auth("alpha")).json()
    with database.session() as session:
        run_id = judge_run_id(session, created["id"])
        claim_run(session, run_id=run_id, worker="w1")
        finish_run(session, run_id=run_id, result=result(benchmarks={"b1": 0.5}, private={"p1": 0.7}),
                   worker_info={"device": "cpu0"})  # fmt: skip
    mine = client.get(created["status_url"], headers=contest.auth("alpha")).json()
    run = mine["runs"][0]
    assert run["verdict"] == "AC" and run["compile_log"] == "g++ ok" and run["device"] == "cpu0"
    cases = {c["name"]: c for c in run["cases"]}
    assert cases["b1"]["ratio"] == 0.5 and cases["b1"]["sizes"] == {"n": 1024}
    assert "p1" not in cases  # a private case's name can say its sizes (p01_48m_f16)
    assert cases["private cases"]["redacted"] is True and cases["private cases"]["ratio"] is None
    assert cases["private cases"]["passed"] is True and cases["private cases"]["case_set"] == "private"
    listed = client.get("/api/v1/submissions", headers=contest.auth("alpha")).json()
    assert [s["id"] for s in listed] == [created["id"]]

    other = client.get(created["status_url"], headers=contest.auth("bravo"))
    assert other.status_code == 404 and "your team" in other.json()["detail"]
    assert client.get(f"{created['status_url']}/sources", headers=contest.auth("bravo")).status_code == 404
    assert client.get("/api/v1/submissions", headers=contest.auth("bravo")).json() == []
    sources = client.get(f"{created['status_url']}/sources", headers=contest.auth("reviewer"))
    assert sources.status_code == 200 and sources.json()[0]["content"] == KERNEL.decode()  # alpha is a finalist
    admin = client.get(created["status_url"], headers=contest.auth("admin")).json()
    assert {c["name"]: c for c in admin["runs"][0]["cases"]}["p1"]["ratio"] == 0.7


def test_me_reports_quota_and_next_allowed_time(client: TestClient, contest: Contest, clock: Clock) -> None:
    before = client.get("/api/v1/me", headers=contest.auth("alpha")).json()
    assert before["team_name"] == "alpha" and before["quota"]["left_24h"] == 5
    assert before["quota"]["next_allowed_at"] is None
    upload(client, contest.auth("alpha"))
    after = client.get("/api/v1/me", headers=contest.auth("alpha")).json()["quota"]
    assert after["used_24h"] == 1 and after["left_24h"] == 4 and after["in_flight"] == 1
    # The competition's minimum interval is 60 s.
    assert datetime.fromisoformat(after["next_allowed_at"]) == clock.now + timedelta(seconds=60)


def test_broker_down_still_accepts_and_dispatches_later(
    settings: Settings, database: Database, contest: Contest, clock: Clock
) -> None:
    down = DownDispatcher()
    with TestClient(create_app(settings, down, database=database, clock=clock, pages=False)) as client:
        response = upload(client, contest.auth("alpha"))
        assert response.status_code == 202, response.text
        body = response.json()
        assert body["queued"] is False and body["status"] == "pending" and "unavailable" in body["message"]
        assert down.attempts == 1
        detail = client.get(body["status_url"], headers=contest.auth("alpha")).json()
        assert detail["runs"][0]["status"] == "pending"
    # The broker is back: the periodic dispatch hands the run over (once it is old enough).
    back = RecordingDispatcher()
    with database.session() as session:
        assert dispatch_pending(session, back, min_age_s=3600, now=clock.now).queued == []
        report = dispatch_pending(session, back, min_age_s=0, now=clock.now)
        run_id = judge_run_id(session, body["id"])
        assert report.queued == [run_id] and back.sent == [(run_id, "judge.cpu")]
        assert row_counts(session)["runs"] == 1
    with TestClient(create_app(settings, back, database=database, clock=clock, pages=False)) as client:
        detail = client.get(body["status_url"], headers=contest.auth("alpha")).json()
        assert detail["submission"]["status"] == RunStatus.QUEUED


def test_openapi_is_served(client: TestClient) -> None:
    assert client.get("/docs").status_code == 200
    paths = client.get("/openapi.json").json()["paths"]
    assert "/api/v1/submissions" in paths and "/api/v1/competitions/{slug}/leaderboard" in paths


def test_a_team_sees_one_pass_or_fail_for_the_private_set_until_the_final_ranking_is_published(
    client: TestClient, contest: Contest, database: Database
) -> None:
    """A pass or fail per private case under a stable label is one bit per run per case: binary search
    on its size. Organisers keep the detail; teams get it after publication."""
    created = upload(client, contest.auth("alpha")).json()
    with database.session() as session:
        run_id = judge_run_id(session, created["id"])
        claim_run(session, run_id=run_id, worker="w1")
        finish_run(session, run_id=run_id, worker_info={},
                   result=result(verdict=Verdict.WA, benchmarks={"b1": 0.5}, private={"p1": 0.7, "p2": 0.6},
                                 failed=("p2",)))  # fmt: skip

    def private_rows(token: str) -> list[tuple[str, bool]]:
        run = client.get(created["status_url"], headers=contest.auth(token)).json()["runs"][0]
        return [(c["name"], c["passed"]) for c in run["cases"] if c["case_set"] == "private"]

    assert private_rows("alpha") == [("private cases", False)]  # which one failed is not said
    assert private_rows("admin") == [("p1", True), ("p2", False)]
    with database.session() as session:
        session.execute(update(Competition).where(Competition.slug == contest.slug).values(final_published=True))
        session.commit()
    assert private_rows("alpha") == [("private 1", True), ("private 2", False)]


def test_a_test_run_has_no_score_in_any_list_even_one_stored_as_0(
    client: TestClient, contest: Contest, database: Database
) -> None:
    """Older workers stored 0.0 for a failed test run; the lists showed 0.00 (a test run has no score)."""
    parts = [("files", ("kernel.cpp", KERNEL, "text/x-c++src"))]
    created = client.post("/api/v1/submissions", headers=contest.auth("alpha"), files=parts,
                          data={"problem": "add_mul_relu", "backend": "cpu", "mode": "test"}).json()  # fmt: skip
    failed = result(verdict=Verdict.WA, failed=("t1",))
    failed.score = 0.0
    with database.session() as session:
        run_id = judge_run_id(session, created["id"])
        claim_run(session, run_id=run_id, worker="w1")
        finish_run(session, run_id=run_id, result=failed, worker_info={})
    listed = client.get("/api/v1/submissions", headers=contest.auth("alpha")).json()
    assert [(s["mode"], s["verdict"], s["score"]) for s in listed] == [("test", "WA", None)]
