"""docs/rules.md "Scoring" and "Competition rules the service enforces", as the contest-rules audit read them.

Private cases stay pass/fail for teams, a frozen board leaks nothing through a team's
own row, r*_c comes from the ranked entries only, every organiser action is audited,
every run can be exported, every run gets its own seed salt, and a re-added reviewer's
marks count again.
"""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient

from api.store.audit import list_audit
from api.store.competitions import update_competition
from api.store.db import Session
from api.store.models import Run
from api.store.ranking import leaderboard
from api.store.rejudge import rejudge, start_reproductions
from api.store.reviews import put_review, reviewer_scores
from api.store.runs import claim_run, fail_run, finish_run
from api.store.submissions import create_submission, submission_detail
from api.store.teams import add_reviewer, remove_reviewer
from judge.backends import Backend, CaseSet
from judge.scoring import case_score_vs_best
from judge.verdict import Verdict
from tests.api.conftest import Clock, Contest, RecordingDispatcher
from tests.api.helpers import KERNEL, result
from tests.api.judging import judged, open_quotas

N_PROBLEMS = 2  # the contest has add_mul_relu and sparse_flash_attention_grad
SECRET_FAILURE = "case p1: output dK is wrong: max |X-G| 0.31 > 0.01 (S2=65536)"


def _upload(session: Session, contest: Contest, clock: Clock, team: str = "alpha") -> tuple[int, int]:
    created = create_submission(session, team_id=contest.team_ids[team], problem="add_mul_relu", backend=Backend.CPU,
                                files=[("kernel.cpp", KERNEL)], queue="judge.cpu", now=clock.now)  # fmt: skip
    return created.submission_id, created.run_id


def _finish_with_failure(session: Session, run_id: int, clock: Clock, *, failing: CaseSet) -> None:
    """A WA whose deciding failure is on `failing`, with the run message the judge copies from it."""
    outcome = result(benchmarks={"b1": 0.5}, private={"p1": 0.6})
    case = next(c for c in outcome.cases if c.case_set is failing)
    case.passed, case.verdict = False, Verdict.WA
    case.message = SECRET_FAILURE.replace("p1", case.name)
    outcome.verdict, outcome.message = Verdict.WA, case.message  # as judge/pipeline.py `_conclude` does
    claim_run(session, run_id=run_id, worker="w", now=clock.now)
    finish_run(session, run_id=run_id, result=outcome, worker_info={}, now=clock.now)


# 1. Private-case failure details never reach the team through the run's message.


def test_a_private_failure_message_is_generic_for_the_team(session: Session, contest: Contest, clock: Clock) -> None:
    submission_id, run_id = _upload(session, contest, clock)
    _finish_with_failure(session, run_id, clock, failing=CaseSet.PRIVATE)
    team = submission_detail(session, submission_id=submission_id, team_id=contest.team_ids["alpha"])
    (run,) = team.runs
    assert run.verdict is Verdict.WA
    assert "p1" not in run.message and "dK" not in run.message and "65536" not in run.message
    assert run.message.startswith("WA on a private case")
    private = next(c for c in run.cases if c.case_set is CaseSet.PRIVATE)
    assert private.redacted and not private.passed and private.message == "" and private.name == "private cases"
    # Organisers still see everything.
    (organiser_run,) = submission_detail(session, submission_id=submission_id).runs
    assert organiser_run.message == SECRET_FAILURE


def test_a_public_failure_message_is_kept_for_the_team(session: Session, contest: Contest, clock: Clock) -> None:
    submission_id, run_id = _upload(session, contest, clock)
    _finish_with_failure(session, run_id, clock, failing=CaseSet.BENCHMARKS)
    (run,) = submission_detail(session, submission_id=submission_id, team_id=contest.team_ids["alpha"]).runs
    assert run.message == SECRET_FAILURE.replace("p1", "b1")


def test_a_message_quoting_a_private_case_is_generic(session: Session, contest: Contest, clock: Clock) -> None:
    """Whatever decided the verdict, a run message that repeats a private case's own message is replaced."""
    submission_id, run_id = _upload(session, contest, clock)
    outcome = result(benchmarks={"b1": 0.5}, private={"p1": 0.6}, failed=("p1", "b1"))
    for case in outcome.cases:
        case.message = f"case {case.name}: wrong"
        case.verdict = Verdict.RE if case.name == "b1" else case.verdict
    outcome.verdict, outcome.message = Verdict.RE, "first failures: case p1: wrong; case b1: wrong"
    claim_run(session, run_id=run_id, worker="w", now=clock.now)
    finish_run(session, run_id=run_id, result=outcome, worker_info={}, now=clock.now)
    (run,) = submission_detail(session, submission_id=submission_id, team_id=contest.team_ids["alpha"]).runs
    assert run.message.startswith("RE on a private case")


# 2. A frozen board: the team's own live row is scored against the r*_c of the freeze.


def _freeze_now(session: Session, contest: Contest, clock: Clock) -> None:
    freeze = clock.now + timedelta(minutes=1)
    update_competition(session, slug=contest.slug, changes={"freeze_at": freeze}, actor=None, now=clock.now)
    clock.now = freeze + timedelta(minutes=5)


@pytest.mark.parametrize("ranked_by", ["latest", "best"])
def test_the_live_row_does_not_show_other_teams_later_results(
    session: Session, contest: Contest, clock: Clock, ranked_by: str
) -> None:
    open_quotas(session, contest, clock, ranked_by=ranked_by)
    judged(session, contest, clock, "alpha", benchmarks={"b1": 0.8, "b2": 1.0})
    _freeze_now(session, contest, clock)
    judged(session, contest, clock, "bravo", benchmarks={"b1": 1.2, "b2": 1.0})
    before = leaderboard(session, competition=contest.slug, now=clock.now, viewer_team=contest.team_ids["bravo"])
    judged(session, contest, clock, "charlie", benchmarks={"b1": 0.1, "b2": 0.1})  # after the freeze, far ahead
    after = leaderboard(session, competition=contest.slug, now=clock.now, viewer_team=contest.team_ids["bravo"])
    expected = (case_score_vs_best(1.2, 0.8) + 100.0) / 2 / N_PROBLEMS  # against alpha's frozen 0.8 and 1.0
    for board in (before, after):
        bravo = next(r for r in board.rows if r.team_name == "bravo")
        assert bravo.live and bravo.online_score == pytest.approx(expected)
    assert [r.team_name for r in after.rows] == ["alpha", "bravo"]
    # The live table itself moved (organisers see charlie ahead); only the frozen view is kept.
    organisers = leaderboard(session, competition=contest.slug, now=clock.now, ignore_freeze=True)
    assert [r.team_name for r in organisers.rows][0] == "charlie"


def test_a_live_row_beating_the_frozen_best_scores_100(session: Session, contest: Contest, clock: Clock) -> None:
    open_quotas(session, contest, clock)
    judged(session, contest, clock, "alpha", benchmarks={"b1": 0.8})
    _freeze_now(session, contest, clock)
    judged(session, contest, clock, "bravo", benchmarks={"b1": 0.4})
    bravo = next(r for r in leaderboard(session, competition=contest.slug, now=clock.now,
                                        viewer_team=contest.team_ids["bravo"]).rows if r.live)  # fmt: skip
    assert bravo.online_score == pytest.approx(100.0 / N_PROBLEMS)
    # The frozen rows themselves keep their frozen scores.
    public = leaderboard(session, competition=contest.slug, now=clock.now)
    assert [(r.team_name, r.online_score) for r in public.rows] == [("alpha", 100.0 / N_PROBLEMS)]


# 3. `ranked_by: best`: r*_c is the lowest r_c of the ranked submissions, not of every judged one.


def test_best_of_best_takes_r_star_from_ranked_entries(session: Session, contest: Contest, clock: Clock) -> None:
    open_quotas(session, contest, clock, ranked_by="best")
    # alpha's first entry is fastest on b1 but slow on b2; its second ranks instead (the better mean).
    judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5, "b2": 2.0})
    ranked = judged(session, contest, clock, "alpha", benchmarks={"b1": 0.95, "b2": 1.0})
    judged(session, contest, clock, "bravo", benchmarks={"b1": 1.0, "b2": 1.0})
    rows = leaderboard(session, competition=contest.slug).rows
    assert [(r.team_name, r.submission_ids["add_mul_relu"]) for r in rows][0] == ("alpha", ranked)
    # r*_b1 = 0.95 (alpha's ranked entry), not the 0.5 of an entry that does not rank.
    assert rows[0].online_score == pytest.approx(100.0 / N_PROBLEMS)
    bravo = (case_score_vs_best(1.0, 0.95) + 100.0) / 2 / N_PROBLEMS
    assert rows[1].team_name == "bravo" and rows[1].online_score == pytest.approx(bravo)


def test_best_of_best_settles_when_the_choice_moves(session: Session, contest: Contest, clock: Clock) -> None:
    """Against every entry bravo's second would rank; against the ranked ones its first does, and ranks."""
    open_quotas(session, contest, clock, ranked_by="best")
    judged(session, contest, clock, "alpha", benchmarks={"b1": 0.3, "b2": 3.0})  # sets r*_b1 = 0.3, never ranks
    alpha = judged(session, contest, clock, "alpha", benchmarks={"b1": 1.0, "b2": 0.2})
    bravo = judged(session, contest, clock, "bravo", benchmarks={"b1": 1.5, "b2": 3.0})
    judged(session, contest, clock, "bravo", benchmarks={"b1": 2.0, "b2": 1.0})
    rows = {r.team_name: r for r in leaderboard(session, competition=contest.slug).rows}
    assert rows["alpha"].submission_ids["add_mul_relu"] == alpha
    assert rows["bravo"].submission_ids["add_mul_relu"] == bravo
    # r*_c of the ranked entries: b1 1.0, b2 0.2 (both alpha's ranked entry).
    assert rows["alpha"].online_score == pytest.approx(100.0 / N_PROBLEMS)
    expected = (case_score_vs_best(1.5, 1.0) + case_score_vs_best(3.0, 0.2)) / 2 / N_PROBLEMS
    assert rows["bravo"].online_score == pytest.approx(expected)


# 4. Every organiser action is audited: the manual dispatch too.


def test_dispatch_is_audited(
    client: TestClient, session: Session, contest: Contest, clock: Clock, dispatcher: RecordingDispatcher
) -> None:
    _submission_id, run_id = _upload(session, contest, clock)  # stored, never enqueued: pending
    response = client.post("/api/v1/admin/dispatch", headers=contest.auth("admin"))
    assert response.status_code == 200 and response.json()["queued"] == [run_id]
    assert dispatcher.sent == [(run_id, "judge.cpu")]
    (entry,) = [e for e in list_audit(session) if e.action == "dispatch"]
    assert entry.actor != "system" and entry.details == {"queued": [run_id], "pending": [], "reason": ""}


# 5. Export every result: every run, superseded, IE and reproduction runs included.


def test_runs_export_has_every_run(client: TestClient, session: Session, contest: Contest, clock: Clock) -> None:
    open_quotas(session, contest, clock)
    submission_id = judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5}, private={"p1": 0.6})
    (rerun,) = rejudge(session, competition=contest.slug, actor=None, now=clock.now, queue_of=lambda b: "judge.cpu",
                       submission_id=submission_id)  # fmt: skip
    claim_run(session, run_id=rerun.run_id, worker="w2", now=clock.now)
    finish_run(session, run_id=rerun.run_id, result=result(benchmarks={"b1": 0.4}, private={"p1": 0.5}),
               worker_info={}, now=clock.now)  # fmt: skip
    (failed,) = rejudge(session, competition=contest.slug, actor=None, now=clock.now, queue_of=lambda b: "judge.cpu",
                        submission_id=submission_id)  # fmt: skip
    claim_run(session, run_id=failed.run_id, worker="w3", now=clock.now)
    fail_run(session, run_id=failed.run_id, reason="the device fell off the bus", retry=False, now=clock.now)
    (repro,) = start_reproductions(session, competition=contest.slug, top_n=1, actor=None, now=clock.now,
                                   queue_of=lambda b: "judge.cpu")  # fmt: skip

    response = client.get(f"/api/v1/admin/competitions/{contest.slug}/export/runs.csv", headers=contest.auth("admin"))
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert [(r["kind"], r["verdict"], r["counts"]) for r in rows] == [
        ("judge", "AC", "False"), ("rejudge", "AC", "True"), ("rejudge", "IE", "False"), ("reproduction", "", "False")
    ]  # fmt: skip
    assert {r["submission_id"] for r in rows} == {str(submission_id)} and {r["team"] for r in rows} == {"alpha"}
    assert rows[2]["message"] == "internal error: the device fell off the bus" and rows[2]["status"] == "failed"
    assert rows[3]["run_id"] == str(repro.run_id) and rows[3]["reproduction_of"] == rows[1]["run_id"]
    assert (rows[1]["worker"], rows[1]["host"]) == ("w2", "box") and rows[0]["created_at"] and rows[0]["finished_at"]
    # The per-case results export is unchanged: only the run that counts.
    results = client.get(f"/api/v1/admin/competitions/{contest.slug}/export/results.csv",
                         headers=contest.auth("admin")).text  # fmt: skip
    assert {r["run_id"] for r in csv.DictReader(io.StringIO(results))} == {rows[1]["run_id"]}


# 6. Every run, judge and rejudge included, gets a fresh seed salt (docs/rules.md: unpredictable seeds).


def test_every_run_gets_its_own_seed_salt(session: Session, contest: Contest, clock: Clock) -> None:
    open_quotas(session, contest, clock)
    first, first_run = _upload(session, contest, clock)
    _second, second_run = _upload(session, contest, clock, "bravo")
    (rerun,) = rejudge(session, competition=contest.slug, actor=None, now=clock.now, queue_of=lambda b: "judge.cpu",
                       submission_id=first)  # fmt: skip
    salts = [session.get_one(Run, run_id).seed_salt for run_id in (first_run, second_run, rerun.run_id)]
    assert all(len(bytes.fromhex(s)) == 16 for s in salts) and len(set(salts)) == 3
    claimed = claim_run(session, run_id=first_run, worker="w", now=clock.now)
    assert claimed is not None and claimed.seed_salt == bytes.fromhex(salts[0])
    # An internal-error retry keeps the run's salt: the same run sees the same inputs.
    fail_run(session, run_id=first_run, reason="lost", retry=True, now=clock.now)
    assert session.get_one(Run, first_run, populate_existing=True).seed_salt == salts[0]


# 7. A removed reviewer's marks stop counting; re-adding them makes their current marks count again.


def test_re_adding_a_reviewer_restores_their_marks(session: Session, contest: Contest, clock: Clock) -> None:
    open_quotas(session, contest, clock)
    judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5}, private={"p1": 0.6})
    alpha = contest.team_ids["alpha"]
    marks = {"design": 40, "code_quality": 30, "presentation": 20}
    put_review(session, reviewer_id=contest.reviewer_id, team_id=alpha, marks=marks, comment="", now=clock.now)
    assert reviewer_scores(session, competition_id=_competition_id(session, contest)) == {alpha: (90.0, 1)}
    remove_reviewer(session, reviewer_id=contest.reviewer_id, actor=None, now=clock.now)
    assert reviewer_scores(session, competition_id=_competition_id(session, contest)) == {}
    version = leaderboard(session, competition=contest.slug, final=True).version
    reviewer, token = add_reviewer(session, competition=contest.slug, name="rita", pepper=b"p" * 32, actor=None,
                                   now=clock.now)  # fmt: skip
    assert reviewer.id == contest.reviewer_id and reviewer.active and token.token
    assert reviewer_scores(session, competition_id=_competition_id(session, contest)) == {alpha: (90.0, 1)}
    final = leaderboard(session, competition=contest.slug, final=True)
    assert final.version > version  # cached final rankings see the marks again
    assert next(r for r in final.rows if r.team_id == alpha).reviewer_score == 90.0
    (entry,) = [e for e in list_audit(session) if e.action == "reviewer.add" and "marks_restored" in e.details]
    assert entry.details["marks_restored"] == 1 and entry.target == "rita"


def _competition_id(session: Session, contest: Contest) -> int:
    return leaderboard(session, competition=contest.slug).competition_id
