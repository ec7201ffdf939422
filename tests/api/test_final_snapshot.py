"""docs/organisers.md, "The final ranking": published only after the window (or with an audited
override), a stored snapshot that moves only when the organisers recompute it (audited, with the differences)."""

from __future__ import annotations

from datetime import timedelta

from fastapi.testclient import TestClient

from api.store.audit import list_audit
from api.store.db import Session
from api.store.ranking import leaderboard
from api.store.submissions import disqualify_submission
from tests.api.conftest import START, Clock, Contest
from tests.api.judging import judged, open_quotas


def _publish(client: TestClient, contest: Contest, **body: object):  # noqa: ANN202 - an httpx response
    return client.put(f"/api/v1/admin/competitions/{contest.slug}/final", headers=contest.auth("admin"),
                      json={"published": True, **body})  # fmt: skip


def _final_rows(client: TestClient, contest: Contest) -> dict[str, tuple[int | None, float | None]]:
    board = client.get(f"/api/v1/competitions/{contest.slug}/leaderboard?final=true").json()
    return {r["team_name"]: (r["rank"], r["final_score"]) for r in board["rows"]}


def test_publishing_in_the_window_needs_an_audited_override(
    client: TestClient, session: Session, contest: Contest, clock: Clock
) -> None:
    open_quotas(session, contest, clock)
    judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5}, private={"p1": 0.5})
    refused = _publish(client, contest)
    assert refused.status_code == 409 and "window is open" in refused.json()["detail"]
    assert "tune their kernels to the private cases" in refused.json()["detail"]  # what publishing gives away
    assert client.get(f"/api/v1/competitions/{contest.slug}/leaderboard?final=true").status_code == 403
    no_reason = _publish(client, contest, override=True)
    assert no_reason.status_code == 422 and "say why" in no_reason.json()["detail"]
    done = _publish(client, contest, override=True, reason="rehearsal of the prize ceremony")
    assert done.status_code == 200 and done.json()["final_published"]
    (entry,) = [e for e in list_audit(session) if e.action == "competition.publish_final"]
    assert entry.details["override"] is True and entry.details["reason"] == "rehearsal of the prize ceremony"
    state = client.get(f"/api/v1/admin/competitions/{contest.slug}/final", headers=contest.auth("admin")).json()
    assert state["window_open"] and state["snapshot"]["override"]
    assert state["snapshot"]["id"] == entry.details["snapshot"]


def test_the_published_ranking_moves_only_when_recomputed(
    client: TestClient, session: Session, contest: Contest, clock: Clock
) -> None:
    open_quotas(session, contest, clock)
    alpha = judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5}, private={"p1": 0.5})
    judged(session, contest, clock, "bravo", benchmarks={"b1": 0.6}, private={"p1": 0.6})
    clock.now = START + timedelta(days=1, minutes=5)  # the window has ended
    assert _publish(client, contest).status_code == 200
    published = _final_rows(client, contest)
    assert published["alpha"][0] == 1 and published["bravo"][0] == 2

    # A disqualification after publishing changes the live standings, not the published ranking.
    disqualify_submission(session, submission_id=alpha, reason="copied", actor=None, now=clock.now)
    assert _final_rows(client, contest) == published
    assert leaderboard(session, competition=contest.slug, final=True).rows[0].team_name == "alpha"
    session.rollback()

    url = f"/api/v1/admin/competitions/{contest.slug}/final/recompute"
    preview = client.post(url, headers=contest.auth("admin"), json={"dry_run": True}).json()
    assert not preview["stored"] and _final_rows(client, contest) == published
    changed = {(c["team_name"], c["field"]): (c["before"], c["after"]) for c in preview["changes"]}
    assert changed[("bravo", "rank")] == (2, 1) and changed[("alpha", "rank")] == (1, None)
    assert ("alpha", "disqualified") in changed

    done = client.post(url, headers=contest.auth("admin"), json={"reason": "alpha disqualified after review"})
    assert done.status_code == 200 and done.json()["stored"] and done.json()["changes"] == preview["changes"]
    after = _final_rows(client, contest)
    assert after["bravo"][0] == 1 and after["alpha"][0] is None
    (entry,) = [e for e in list_audit(session) if e.action == "competition.recompute_final"]
    assert entry.details["reason"] == "alpha disqualified after review"
    assert {(c["team"], c["field"]) for c in entry.details["changes"]} == set(changed)
    state = client.get(f"/api/v1/admin/competitions/{contest.slug}/final", headers=contest.auth("admin")).json()
    assert [s["current"] for s in state["history"]] == [True, False]


def test_hiding_and_publishing_again_shows_the_same_snapshot(
    client: TestClient, session: Session, contest: Contest, clock: Clock
) -> None:
    open_quotas(session, contest, clock)
    judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5}, private={"p1": 0.5})
    clock.now = START + timedelta(days=2)
    assert _publish(client, contest).status_code == 200
    before = _final_rows(client, contest)
    hide = client.put(f"/api/v1/admin/competitions/{contest.slug}/final", headers=contest.auth("admin"),
                      json={"published": False})  # fmt: skip
    assert hide.status_code == 200 and not hide.json()["final_published"]
    assert client.get(f"/api/v1/competitions/{contest.slug}/leaderboard?final=true").status_code == 403
    put = client.put(f"/api/v1/review/teams/{contest.team_ids['alpha']}", headers=contest.auth("reviewer"),
                     json={"marks": {"design": 40, "code_quality": 30, "presentation": 30}})  # fmt: skip
    assert put.status_code == 200
    assert _publish(client, contest).status_code == 200
    assert _final_rows(client, contest) == before  # the later marks wait for a recompute
    snapshots = {e.details.get("snapshot") for e in list_audit(session) if e.action == "competition.publish_final"}
    assert len(snapshots - {None}) == 1


def test_recompute_needs_a_snapshot(client: TestClient, contest: Contest) -> None:
    answer = client.post(f"/api/v1/admin/competitions/{contest.slug}/final/recompute",
                         headers=contest.auth("admin"), json={})  # fmt: skip
    assert answer.status_code == 409 and "publish it first" in answer.json()["detail"]
