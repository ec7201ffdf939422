"""Reviewer marks and the final ranking: 0.7 x online (private) + 0.3 x reviewer, drop-high-low from 5."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api.settings import Settings
from api.store.db import Session
from api.store.ranking import leaderboard
from api.store.reviews import list_reviews, put_review
from api.store.teams import add_reviewer, remove_reviewer
from judge.scoring import final_score
from tests.api.conftest import Clock, Contest
from tests.api.judging import judged, open_quotas

FULL = {"design": 40, "code_quality": 30, "presentation": 30}


def _marks(total: int) -> dict[str, float]:
    """Marks adding up to `total` within the default rubric."""
    design = min(40, total)
    quality = min(30, total - design)
    return {"design": design, "code_quality": quality, "presentation": total - design - quality}


def _final(session: Session, contest: Contest) -> dict[str, tuple[int | None, float | None, float | None]]:
    board = leaderboard(session, competition=contest.slug, final=True)
    session.rollback()  # end the read: on SQLite a write session holds the write lock until then
    return {r.team_name: (r.rank, r.reviewer_score, r.final_score) for r in board.rows}


def test_reviewer_marks_move_the_final_by_0_3_of_their_mean(
    client: TestClient, session: Session, contest: Contest, clock: Clock
) -> None:
    open_quotas(session, contest, clock)
    judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5}, private={"p1": 0.5})
    judged(session, contest, clock, "bravo", benchmarks={"b1": 0.6}, private={"p1": 0.6})
    before = _final(session, contest)
    online_bravo = leaderboard(session, competition=contest.slug, final=True).rows[1].online_score
    session.rollback()
    assert before["alpha"][0] == 1 and before["bravo"][2] == pytest.approx(0.7 * online_bravo)

    put = client.put(f"/api/v1/review/teams/{contest.team_ids['bravo']}", headers=contest.auth("reviewer"),
                     json={"marks": _marks(90), "comment": "clean design"})  # fmt: skip
    assert put.status_code == 200, put.text
    assert put.json()["total"] == 90
    after = _final(session, contest)
    assert after["bravo"][2] == pytest.approx(before["bravo"][2] + 0.3 * 90)
    assert after["bravo"][0] == 1  # the marks lift bravo above alpha
    # A later review by the same reviewer replaces the earlier one; the history is kept.
    client.put(f"/api/v1/review/teams/{contest.team_ids['bravo']}", headers=contest.auth("reviewer"),
               json={"marks": _marks(60)})  # fmt: skip
    assert _final(session, contest)["bravo"][1] == 60
    assert [r.total for r in list_reviews(session, competition_id=1, history=True)] == [90, 60]
    mine = client.get("/api/v1/review/marks", headers=contest.auth("reviewer")).json()
    assert [(m["team_name"], m["total"]) for m in mine] == [("bravo", 60)]
    finalists = client.get("/api/v1/review/teams", headers=contest.auth("reviewer")).json()
    assert {f["team_name"] for f in finalists} == {"alpha", "bravo", "charlie"}
    assert next(f for f in finalists if f["team_name"] == "alpha")["submission_ids"]["add_mul_relu"] > 0


def test_five_reviewers_drop_the_highest_and_lowest(
    session: Session, settings: Settings, contest: Contest, clock: Clock
) -> None:
    open_quotas(session, contest, clock)
    judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5}, private={"p1": 0.5})
    team = contest.team_ids["alpha"]
    totals = [100, 80, 70, 60, 10]
    reviewers = [contest.reviewer_id]
    for name in ("r2", "r3", "r4", "r5"):
        view, _token = add_reviewer(session, competition=contest.slug, name=name, pepper=settings.pepper, actor=None,
                                    now=clock.now)  # fmt: skip
        reviewers.append(view.id)
    for reviewer_id, total in zip(reviewers[:4], totals[:4], strict=True):
        put_review(session, reviewer_id=reviewer_id, team_id=team, marks=_marks(total), comment="", now=clock.now)
    assert _final(session, contest)["alpha"][1] == pytest.approx((100 + 80 + 70 + 60) / 4)  # four: plain mean
    put_review(session, reviewer_id=reviewers[4], team_id=team, marks=_marks(10), comment="", now=clock.now)
    _rank, reviewer, final = _final(session, contest)["alpha"]
    assert reviewer == pytest.approx((80 + 70 + 60) / 3)  # 100 and 10 dropped
    assert final == pytest.approx(final_score(100.0 / 2, reviewer))
    remove_reviewer(session, reviewer_id=reviewers[0], actor=None, now=clock.now)  # their 100 stops counting
    assert _final(session, contest)["alpha"][1] == pytest.approx((80 + 70 + 60 + 10) / 4)


def test_bad_marks_are_refused(client: TestClient, session: Session, contest: Contest) -> None:
    url = f"/api/v1/review/teams/{contest.team_ids['alpha']}"
    cases = [
        ({"marks": {"design": 41, "code_quality": 0, "presentation": 0}}, "between 0 and 40"),
        ({"marks": {"design": 10}}, "missing code_quality, presentation"),
        ({"marks": {**FULL, "style": 5}}, "unknown style"),
        ({"marks": {"design": -1, "code_quality": 0, "presentation": 0}}, "between 0 and 40"),
    ]
    for body, reason in cases:
        response = client.put(url, headers=contest.auth("reviewer"), json=body)
        assert response.status_code == 422 and reason in response.json()["detail"], response.text
    missing = client.put("/api/v1/review/teams/999", headers=contest.auth("reviewer"), json={"marks": FULL})
    assert missing.status_code == 404
    assert list_reviews(session, competition_id=1, history=True) == []


def test_final_is_public_only_once_published(client: TestClient, contest: Contest) -> None:
    url = f"/api/v1/competitions/{contest.slug}/leaderboard?final=true"
    refused = client.get(url)
    assert refused.status_code == 403 and "not published" in refused.json()["detail"]
    assert client.get(url, headers=contest.auth("admin")).status_code == 200
    published = client.put(f"/api/v1/admin/competitions/{contest.slug}/final", headers=contest.auth("admin"),
                           json={"published": True, "override": True, "reason": "a test"})  # fmt: skip
    assert published.status_code == 200 and published.json()["final_published"]
    board = client.get(url).json()
    assert board["final"] is True and board["case_set"] == "private"
