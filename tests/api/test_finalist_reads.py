"""A reviewer reads every submission of a finalist team through the API, ranked or not."""

from __future__ import annotations

from fastapi.testclient import TestClient

from api.store.db import Session
from api.store.submissions import disqualify_submission
from api.store.teams import set_finalists
from tests.api.conftest import Clock, Contest
from tests.api.helpers import KERNEL, public_id
from tests.api.judging import judged, open_quotas


def test_a_reviewer_reads_unranked_and_disqualified_submissions_of_a_finalist(
    client: TestClient, session: Session, contest: Contest, clock: Clock
) -> None:
    open_quotas(session, contest, clock)
    first = judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5}, private={"p1": 0.5})
    cheat = judged(session, contest, clock, "alpha", benchmarks={"b1": 0.1}, private={"p1": 0.1})
    latest = judged(session, contest, clock, "alpha", benchmarks={"b1": 0.6}, private={"p1": 0.6})
    bravo = judged(session, contest, clock, "bravo", benchmarks={"b1": 0.6}, private={"p1": 0.6})
    disqualify_submission(session, submission_id=cheat, reason="reads the timer", actor=None, now=clock.now)
    set_finalists(session, competition=contest.slug, team_ids=[contest.team_ids["alpha"]], actor=None, now=clock.now)

    listed = client.get(f"/api/v1/review/teams/{contest.team_ids['alpha']}/submissions",
                        headers=contest.auth("reviewer"))  # fmt: skip
    assert listed.status_code == 200, listed.text
    marks = {s["submission"]["id"]: s["ranked"] for s in listed.json()}
    named = {i: public_id(session, i) for i in (first, cheat, latest)}  # answers name them by public id
    assert marks == {named[latest]: True, named[cheat]: False, named[first]: False}
    assert next(s for s in listed.json() if s["submission"]["id"] == named[cheat])["submission"]["disqualify_reason"]
    for submission_id in (first, cheat, latest):
        sources = client.get(f"/api/v1/submissions/{submission_id}/sources", headers=contest.auth("reviewer"))
        assert sources.status_code == 200 and sources.json()[0]["content"] == KERNEL.decode()

    # bravo is no longer a finalist: neither its list nor its sources.
    other = client.get(f"/api/v1/review/teams/{contest.team_ids['bravo']}/submissions",
                       headers=contest.auth("reviewer"))  # fmt: skip
    assert other.status_code == 404 and "no finalist team" in other.json()["detail"]
    assert client.get(f"/api/v1/submissions/{bravo}/sources", headers=contest.auth("reviewer")).status_code == 404
    # A team cannot use the reviewers' list.
    assert client.get(f"/api/v1/review/teams/{contest.team_ids['alpha']}/submissions",
                      headers=contest.auth("bravo")).status_code == 403  # fmt: skip
