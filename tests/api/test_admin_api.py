"""Organiser routes: set-up, rejudge, disqualify, freeze, reproduction, CSV exports and the audit log."""

from __future__ import annotations

import csv
import io
from datetime import datetime, timedelta

from fastapi.testclient import TestClient

from api.store.db import Database
from api.store.enums import RunKind
from api.store.runs import claim_run, finish_run
from judge.backends import CaseSet
from tests.api.conftest import START, Clock, Contest, RecordingDispatcher
from tests.api.helpers import judge_run_id, result, stored_id, upload
from tests.api.judging import open_quotas


def _finish(database: Database, run_id: int, clock: Clock, **ratios: dict[str, float]) -> None:
    with database.session() as session:
        claimed = claim_run(session, run_id=run_id, worker="w", now=clock.now)
        assert claimed is not None
        finish_run(session, run_id=run_id, result=result(**ratios), worker_info={}, now=clock.now)  # type: ignore[arg-type]


def _judged_upload(client: TestClient, contest: Contest, database: Database, clock: Clock, team: str,
                   **ratios: dict[str, float]) -> dict:  # type: ignore[type-arg]  # fmt: skip
    created = upload(client, contest.auth(team)).json()
    with database.session() as session:
        run_id = judge_run_id(session, created["id"])
    _finish(database, run_id, clock, **ratios)
    clock.advance(120)
    return created


def test_setting_up_a_competition(client: TestClient, contest: Contest) -> None:
    admin = contest.auth("admin")
    body = {"slug": "spring", "title": "Spring cup", "starts_at": START.isoformat(),
            "ends_at": (START + timedelta(days=2)).isoformat(), "relative_to": "baseline"}  # fmt: skip
    created = client.post("/api/v1/admin/competitions", headers=admin, json=body)
    assert created.status_code == 201, created.text
    spring = created.json()
    assert spring["quota_per_day"] == 50 and spring["min_interval_s"] == 90 and spring["relative_to"] == "baseline"
    assert spring["freeze_at"].startswith((START + timedelta(days=2, minutes=-30)).isoformat()[:16])
    assert client.post("/api/v1/admin/competitions", headers=admin, json=body).status_code == 409
    bad = client.post(
        "/api/v1/admin/competitions", headers=admin, json={**body, "slug": "x", "ends_at": body["starts_at"]}
    )
    assert bad.status_code == 422 and "end after it starts" in bad.json()["detail"]

    attached = client.post("/api/v1/admin/competitions/spring/problems", headers=admin,
                           json={"problem": "add_mul_relu", "backends": ["cpu"]})  # fmt: skip
    assert attached.status_code == 200 and attached.json()["problems"][0]["backends"] == ["cpu"]
    unknown = client.post("/api/v1/admin/competitions/spring/problems", headers=admin, json={"problem": "nope"})
    assert unknown.status_code == 422 and "unknown problem 'nope'" in unknown.json()["detail"]

    team = client.post("/api/v1/admin/competitions/spring/teams", headers=admin, json={"name": "delta"}).json()
    assert team["token"]["token"].startswith("opj_team_") and team["token"]["prefix"].startswith("opj_team_")
    me = client.get("/api/v1/me", headers={"Authorization": f"Bearer {team['token']['token']}"})
    assert me.status_code == 200 and me.json()["competition"] == "spring"
    duplicate = client.post("/api/v1/admin/competitions/spring/teams", headers=admin, json={"name": "delta"})
    assert duplicate.status_code == 409

    reviewer = client.post("/api/v1/admin/competitions/spring/reviewers", headers=admin, json={"name": "ray"}).json()
    ray = {"Authorization": f"Bearer {reviewer['token']['token']}"}
    assert client.get("/api/v1/review/teams", headers=ray).status_code == 200
    assert client.delete(f"/api/v1/admin/reviewers/{reviewer['reviewer']['id']}", headers=admin).status_code == 200
    assert client.get("/api/v1/review/teams", headers=ray).status_code == 401
    another = client.post("/api/v1/admin/tokens", headers=admin, json={"label": "second organiser"}).json()
    assert client.get("/api/v1/admin/audit", headers={"Authorization": f"Bearer {another['token']}"}).status_code == 200

    actions = [e["action"] for e in client.get("/api/v1/admin/audit", headers=admin).json()]
    for action in ("competition.create", "competition.attach_problem", "team.create", "reviewer.add",
                   "reviewer.remove", "token.issue"):  # fmt: skip
        assert action in actions


def test_rejudge_replaces_the_result_when_it_finishes(
    client: TestClient, contest: Contest, database: Database, clock: Clock, dispatcher: RecordingDispatcher
) -> None:
    created = _judged_upload(client, contest, database, clock, "alpha", benchmarks={"b1": 0.9})
    admin = contest.auth("admin")
    response = client.post("/api/v1/admin/competitions/cup/rejudge", headers=admin,
                           json={"submission_id": created["id"]})  # fmt: skip
    assert response.status_code == 202, response.text
    (run_id,) = response.json()["run_ids"]
    assert response.json()["queued"] == [run_id] and dispatcher.sent[-1] == (run_id, "judge.cpu")
    board = client.get("/api/v1/competitions/cup/leaderboard").json()
    assert board["rows"][0]["cells"][0]["ratio"] == 0.9  # the earlier result counts until the rejudge finishes
    _finish(database, run_id, clock, benchmarks={"b1": 0.7})
    detail = client.get(created["status_url"], headers=contest.auth("alpha")).json()
    assert [r["kind"] for r in detail["runs"]] == ["rejudge", "judge"] and detail["scored_run_id"] == run_id
    assert client.get("/api/v1/competitions/cup/leaderboard").json()["rows"][0]["cells"][0]["ratio"] == 0.7

    by_team = client.post("/api/v1/admin/competitions/cup/rejudge", headers=admin,
                          json={"team_id": contest.team_ids["alpha"]})  # fmt: skip
    assert by_team.status_code == 202 and len(by_team.json()["run_ids"]) == 1
    by_problem = client.post("/api/v1/admin/competitions/cup/rejudge", headers=admin, json={"problem": "add_mul_relu"})
    assert by_problem.status_code == 202
    both = client.post("/api/v1/admin/competitions/cup/rejudge", headers=admin, json={"team_id": 1, "problem": "x"})
    assert both.status_code == 422
    nothing = client.post("/api/v1/admin/competitions/cup/rejudge", headers=admin, json={"problem": "nope"})
    assert nothing.status_code == 404
    # Organisers' rejudges do not count against the team's runs in flight.
    assert client.get("/api/v1/me", headers=contest.auth("alpha")).json()["quota"]["in_flight"] == 0


def test_disqualify_and_reinstate(client: TestClient, contest: Contest, database: Database, clock: Clock) -> None:
    created = _judged_upload(client, contest, database, clock, "alpha", benchmarks={"b1": 0.5})
    _judged_upload(client, contest, database, clock, "bravo", benchmarks={"b1": 0.9})
    url = f"/api/v1/admin/submissions/{created['id']}/disqualify"
    assert client.post(url, headers=contest.auth("admin"), json={"reason": ""}).status_code == 422
    response = client.post(url, headers=contest.auth("admin"), json={"reason": "reads the oracle's cache"})
    assert response.status_code == 200 and response.json()["disqualify_reason"] == "reads the oracle's cache"
    rows = client.get("/api/v1/competitions/cup/leaderboard").json()["rows"]
    assert [(r["team_name"], r["rank"], r["disqualified"]) for r in rows] == [
        ("bravo", 1, False),
        ("alpha", None, True),
    ]
    mine = client.get(created["status_url"], headers=contest.auth("alpha")).json()["submission"]
    assert mine["disqualify_reason"] == "reads the oracle's cache"
    assert client.delete(url, headers=contest.auth("admin")).json()["disqualified_at"] is None
    assert client.get("/api/v1/competitions/cup/leaderboard").json()["rows"][0]["team_name"] == "alpha"


def test_freeze_over_http(client: TestClient, contest: Contest, database: Database, clock: Clock) -> None:
    _judged_upload(client, contest, database, clock, "alpha", benchmarks={"b1": 0.8})
    freeze = clock.now + timedelta(seconds=1)
    response = client.put("/api/v1/admin/competitions/cup/freeze", headers=contest.auth("admin"),
                          json={"freeze_at": freeze.isoformat()})  # fmt: skip
    assert response.status_code == 200
    clock.advance(10)
    _judged_upload(client, contest, database, clock, "bravo", benchmarks={"b1": 0.4})
    public = client.get("/api/v1/competitions/cup/leaderboard").json()
    assert public["frozen"] and [r["team_name"] for r in public["rows"]] == ["alpha"]
    own = client.get("/api/v1/competitions/cup/leaderboard", headers=contest.auth("bravo")).json()
    assert [(r["team_name"], r["live"], r["is_viewer"]) for r in own["rows"]] == [
        ("alpha", False, False), ("bravo", True, True)
    ]  # fmt: skip
    refused = client.get("/api/v1/competitions/cup/leaderboard?unfrozen=true", headers=contest.auth("bravo"))
    assert refused.status_code == 403
    unfrozen = client.get("/api/v1/competitions/cup/leaderboard?unfrozen=true", headers=contest.auth("admin")).json()
    assert [r["team_name"] for r in unfrozen["rows"]] == ["bravo", "alpha"]
    earlier = client.get("/api/v1/competitions/cup/leaderboard", headers=contest.auth("admin"),
                         params={"as_of": (START + timedelta(minutes=30)).isoformat()}).json()  # fmt: skip
    assert earlier["rows"] == []


def test_leaderboard_etag(client: TestClient, contest: Contest, database: Database, clock: Clock) -> None:
    first = client.get("/api/v1/competitions/cup/leaderboard", headers={"Accept-Encoding": "gzip"})
    assert first.headers["content-encoding"] == "gzip" and first.json()["competition"] == "cup"  # cached compressed
    etag = first.headers["etag"]
    assert client.get("/api/v1/competitions/cup/leaderboard", headers={"If-None-Match": etag}).status_code == 304
    _judged_upload(client, contest, database, clock, "alpha", benchmarks={"b1": 0.8})
    changed = client.get("/api/v1/competitions/cup/leaderboard", headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["etag"] != etag and changed.json()["rows"]


def test_reproduction_runs_flag_what_does_not_reproduce(
    client: TestClient, contest: Contest, database: Database, clock: Clock
) -> None:
    alpha = _judged_upload(client, contest, database, clock, "alpha", benchmarks={"b1": 0.5}, private={"p1": 0.5})
    _judged_upload(client, contest, database, clock, "bravo", benchmarks={"b1": 0.9}, private={"p1": 0.9})
    admin = contest.auth("admin")
    started = client.post("/api/v1/admin/competitions/cup/reproductions", headers=admin, json={"top_n": 2})
    assert started.status_code == 202
    first, second = started.json()["run_ids"]
    with database.session() as session:
        claimed = claim_run(session, run_id=first, worker="clean-host", now=clock.now)
        assert claimed is not None and claimed.kind is RunKind.REPRODUCTION
        assert claimed.case_sets == (CaseSet.BENCHMARKS, CaseSet.PRIVATE) and len(claimed.seed_salt) == 16
        finish_run(session, run_id=first, result=result(benchmarks={"b1": 0.52}, private={"p1": 0.53}),
                   worker_info={}, now=clock.now)  # fmt: skip
        claim_run(session, run_id=second, worker="clean-host", now=clock.now)
        finish_run(session, run_id=second, result=result(benchmarks={"b1": 0.9}, private={"p1": 1.2}),
                   worker_info={}, now=clock.now)  # fmt: skip
    listed = {
        r["team_name"]: r for r in client.get("/api/v1/admin/competitions/cup/reproductions", headers=admin).json()
    }
    assert listed["alpha"]["flagged"] is False
    assert (
        listed["bravo"]["flagged"] is True
        and "private case p1: r 1.200 against 0.900" in listed["bravo"]["flag_reason"]
    )
    # Reproductions change no score, and teams never see them.
    assert client.get("/api/v1/competitions/cup/leaderboard").json()["rows"][0]["team_name"] == "alpha"
    runs = client.get(alpha["status_url"], headers=contest.auth("alpha")).json()["runs"]
    assert [r["kind"] for r in runs] == ["judge"]
    assert len(client.get(alpha["status_url"], headers=admin).json()["runs"]) == 2


def test_csv_exports(client: TestClient, contest: Contest, database: Database, clock: Clock) -> None:
    with database.session() as session:
        open_quotas(session, contest, clock)
    created = _judged_upload(client, contest, database, clock, "alpha", benchmarks={"b1": 0.5}, private={"p1": 0.6})
    marks = {"design": 30, "code_quality": 20, "presentation": 20}
    client.put(f"/api/v1/review/teams/{contest.team_ids['alpha']}", headers=contest.auth("reviewer"),
               json={"marks": marks, "comment": "=HYPERLINK(x)"})  # fmt: skip
    admin = contest.auth("admin")

    def rows(kind: str) -> list[dict[str, str]]:
        response = client.get(f"/api/v1/admin/competitions/cup/export/{kind}.csv", headers=admin)
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
        return list(csv.DictReader(io.StringIO(response.text)))

    (submission,) = rows("submissions")
    with database.session() as session:  # the organisers' export keeps the database id
        assert submission["submission_id"] == str(stored_id(session, created["id"])) and submission["verdict"] == "AC"
    results = rows("results")
    assert [(r["case"], r["set"], r["ratio"]) for r in results] == [("t1", "tests", ""), ("b1", "benchmarks", "0.5"),
                                                                      ("p1", "private", "0.6")]  # fmt: skip
    assert [r["baseline"] for r in results] == ["", "baseline kernel", "baseline kernel"]  # what timed each case
    (review,) = rows("reviews")
    assert review["total"] == "70.0" and review["comment"] == "'=HYPERLINK(x)"  # formulas defused
    ranking = rows("ranking")
    assert ranking[0]["team"] == "alpha" and float(ranking[0]["final_score"]) == 0.7 * 50 + 0.3 * 70
    audit = client.get("/api/v1/admin/audit", headers=admin, params={"competition": "cup"}).json()
    assert [e["target"] for e in audit if e["action"] == "export"] == ["ranking", "reviews", "results", "submissions"]
    assert client.get("/api/v1/admin/competitions/nope/export/ranking.csv", headers=admin).status_code == 404
    assert client.get("/api/v1/admin/competitions/cup/export/secrets.csv", headers=admin).status_code == 422


def test_workers_queues_and_dispatch_routes(client: TestClient, contest: Contest) -> None:
    admin = contest.auth("admin")
    upload(client, contest.auth("alpha"))
    assert client.get("/api/v1/admin/workers", headers=admin).json() == []
    assert client.get("/api/v1/admin/queues", headers=admin).json() == [
        {"queue": "judge.cpu", "status": "queued", "runs": 1}
    ]
    assert client.post("/api/v1/admin/dispatch", headers=admin).json()["run_ids"] == []
    listed = client.get("/api/v1/admin/competitions/cup/submissions", headers=admin).json()
    assert [s["team_name"] for s in listed] == ["alpha"]


def test_moving_the_end_moves_the_freeze_with_it(client: TestClient, contest: Contest) -> None:
    admin = contest.auth("admin")
    end = START + timedelta(days=2)
    body = {"slug": "autumn", "title": "Autumn cup", "starts_at": START.isoformat(), "ends_at": end.isoformat()}
    assert client.post("/api/v1/admin/competitions", headers=admin, json=body).status_code == 201

    def freeze_after(changes: dict) -> str:  # type: ignore[type-arg]
        response = client.patch("/api/v1/admin/competitions/autumn", headers=admin, json=changes)
        assert response.status_code == 200, response.text
        return response.json()["freeze_at"]

    later = end + timedelta(days=1)
    assert freeze_after({"ends_at": later.isoformat()}).startswith((later - timedelta(minutes=30)).isoformat()[:16])
    # Shortened past the old freeze: the freeze moves too, rather than the edit being refused.
    sooner = START + timedelta(hours=1)
    assert freeze_after({"ends_at": sooner.isoformat()}).startswith((sooner - timedelta(minutes=30)).isoformat()[:16])
    # A freeze set in the same change is taken as it is.
    own = START + timedelta(minutes=10)
    assert freeze_after({"ends_at": end.isoformat(), "freeze_at": own.isoformat()}).startswith(own.isoformat()[:16])
    # And it stays where it was set when the end moves again (a freeze the organisers
    # set had moved with the end, a freeze "now" to the start of the window).
    assert freeze_after({"ends_at": later.isoformat()}).startswith(own.isoformat()[:16])


def test_csv_cells_that_a_spreadsheet_reads_as_formulas_are_defused() -> None:
    """OWASP's list: =, +, -, @, and a leading tab or carriage return."""
    from api.store.exports import csv_value

    for text in ("=1+1", "+1", "-1", "@SUM(A1)", "\t=1+1", "\r=1+1"):
        assert csv_value(text) == "'" + text
    assert csv_value("alpha team") == "alpha team"


def test_a_freeze_the_organisers_set_stays_when_the_end_moves(client: TestClient, contest: Contest) -> None:
    """A manual freeze had jumped to the window's start when the end was edited."""
    base = f"/api/v1/admin/competitions/{contest.slug}"
    shown = client.get(f"/api/v1/competitions/{contest.slug}").json()
    ends = datetime.fromisoformat(shown["ends_at"])
    default = datetime.fromisoformat(shown["freeze_at"])
    assert ends - default == timedelta(minutes=30)
    later = ends + timedelta(hours=2)
    moved = client.patch(base, headers=contest.auth("admin"), json={"ends_at": later.isoformat()}).json()
    assert datetime.fromisoformat(moved["freeze_at"]) == later - timedelta(minutes=30)  # the default follows
    manual = later - timedelta(hours=5)
    assert client.put(f"{base}/freeze", headers=contest.auth("admin"),
                      json={"freeze_at": manual.isoformat()}).status_code == 200  # fmt: skip
    latest = (later + timedelta(hours=1)).isoformat()
    again = client.patch(base, headers=contest.auth("admin"), json={"ends_at": latest})
    assert again.status_code == 200
    assert datetime.fromisoformat(again.json()["freeze_at"]) == manual  # where the organisers set it
