"""A run whose timing stayed disturbed through re-timing is marked everywhere its score shows and stays
out of a final ranking until re-timed (docs/rules.md, "Disturbed hosts"; judge/retime.py does the re-timing)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from api.settings import Settings
from api.store.db import Database
from api.store.ranking import leaderboard
from api.store.runs import claim_run, finish_run
from api.web.app import create_app
from api.web.pages.auth import TOKEN_COOKIE
from tests.api.conftest import Clock, Contest, RecordingDispatcher
from tests.api.helpers import public_id, result
from tests.api.judging import judged, open_quotas

REASON = "load average 5.82 on 2 CPUs; the baseline's calls spread by 76.5 %"


@pytest.fixture
def pages(settings: Settings, database: Database, dispatcher: RecordingDispatcher, clock: Clock
          ) -> Iterator[TestClient]:  # fmt: skip
    with TestClient(create_app(settings, dispatcher, database=database, clock=clock)) as client:
        yield client


def test_a_disturbed_run_is_marked_and_left_out_of_the_final_ranking(
        client: TestClient, pages: TestClient, contest: Contest, database: Database, clock: Clock) -> None:
    with database.session() as session:
        open_quotas(session, contest, clock)
        shaky = judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5}, private={"p1": 0.5},
                       disturbed=REASON)
        judged(session, contest, clock, "bravo", benchmarks={"b1": 0.9}, private={"p1": 0.9})
        shaky_public = public_id(session, shaky)  # what the team sees and passes
        public = {r.team_name: r for r in leaderboard(session, competition=contest.slug).rows}
        final = {r.team_name: r for r in leaderboard(session, competition=contest.slug, final=True).rows}
    # The public board shows it, marked; the final ranking leaves it out until it is re-timed.
    assert public["alpha"].rank == 1 and public["alpha"].disturbed == REASON and public["bravo"].disturbed == ""
    assert "alpha" not in final or final["alpha"].rank is None
    assert final["bravo"].rank == 1

    admin, team = contest.auth("admin"), contest.auth("alpha")
    (run,) = client.get(f"/api/v1/submissions/{shaky_public}", headers=team).json()["runs"]
    assert run["disturbed"] == REASON and run["timing_attempts"] == 3
    board = client.get(f"/api/v1/competitions/{contest.slug}/leaderboard").json()
    assert {r["team_name"]: r["disturbed"] for r in board["rows"] if not r["is_baseline"]}["alpha"] == REASON
    (listed,) = client.get(f"/api/v1/admin/competitions/{contest.slug}/disturbed", headers=admin).json()
    assert (listed["submission_id"], listed["counts"], listed["reason"]) == (shaky, True, REASON)
    for kind in ("runs", "results"):
        rows = list(csv.DictReader(io.StringIO(
            client.get(f"/api/v1/admin/competitions/{contest.slug}/export/{kind}.csv", headers=admin).text)))
        assert {r["team"]: r["disturbed"] for r in rows}["alpha"] == REASON, kind

    pages.cookies.set(TOKEN_COOKIE, contest.tokens["alpha"])
    report = pages.get(f"/s/{shaky_public}").text
    assert 'id="disturbed"' in report and "through all 3 timing attempts" in report
    board_page = pages.get(f"/c/{contest.slug}")
    assert board_page.status_code == 200 and '<span class="tag disturbed"' in board_page.text

    # The organisers re-time it (a rejudge) on a calm host: it ranks in the final ranking again.
    rejudged = client.post(f"/api/v1/admin/competitions/{contest.slug}/rejudge", headers=admin,
                           json={"submission_id": shaky})
    assert rejudged.status_code == 202, rejudged.text
    (run_id,) = rejudged.json()["run_ids"]
    with database.session() as session:
        claim_run(session, run_id=run_id, worker="w", now=clock.now)
        finish_run(session, run_id=run_id, result=result("add_mul_relu", benchmarks={"b1": 0.5},
                                                         private={"p1": 0.5}), worker_info={}, now=clock.now)
        final = {r.team_name: r for r in leaderboard(session, competition=contest.slug, final=True).rows}
    assert final["alpha"].rank == 1 and final["alpha"].disturbed == ""
