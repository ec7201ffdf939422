"""Ranking per docs/rules.md "Scoring": best vs baseline, latest vs best, ties, disqualification, freeze."""

from __future__ import annotations

from datetime import timedelta

import pytest

from api.store.competitions import update_competition
from api.store.db import Session
from api.store.ranking import leaderboard
from api.store.rejudge import rejudge
from api.store.submissions import disqualify_submission
from judge.scoring import case_score_vs_baseline, case_score_vs_best
from judge.verdict import Verdict
from tests.api.conftest import Clock, Contest
from tests.api.judging import judged, open_quotas

N_PROBLEMS = 2  # the contest has add_mul_relu and sparse_flash_attention_grad


def _ranking(session: Session, contest: Contest, **kwargs: object) -> list[tuple[int | None, str, float]]:
    board = leaderboard(session, competition=contest.slug, **kwargs)  # type: ignore[arg-type]
    return [(row.rank, row.team_name, round(row.online_score, 6)) for row in board.rows]


def test_relative_to_best(session: Session, contest: Contest, clock: Clock) -> None:
    open_quotas(session, contest, clock)
    judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5, "b2": 1.0})
    judged(session, contest, clock, "bravo", benchmarks={"b1": 1.0, "b2": 0.5})
    judged(session, contest, clock, "charlie", benchmarks={"b1": 0.75, "b2": 0.75})
    half = (100 + case_score_vs_best(1.0, 0.5)) / 2 / N_PROBLEMS
    third = case_score_vs_best(0.75, 0.5) / N_PROBLEMS
    assert _ranking(session, contest) == [
        (1, "alpha", round(half, 6)),  # equal scores: alpha submitted first
        (2, "bravo", round(half, 6)),
        (3, "charlie", round(third, 6)),  # 1.5x slower than the best on both cases: 50 each
    ]
    assert case_score_vs_best(0.75, 0.5) == pytest.approx(50.0)
    board = leaderboard(session, competition=contest.slug)
    assert [(c.problem, c.case) for c in board.columns][:2] == [("add_mul_relu", "b1"), ("add_mul_relu", "b2")]
    alpha = board.rows[0]
    assert [round(c.score, 6) for c in alpha.cells if c] == [100.0, round(case_score_vs_best(1.0, 0.5), 6)]
    assert board.baseline is not None and board.baseline.is_baseline


def test_relative_to_baseline_and_its_cap(session: Session, contest: Contest, clock: Clock) -> None:
    open_quotas(session, contest, clock, relative_to="baseline", score_cap=200.0)
    judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5, "b2": 2.0})
    judged(session, contest, clock, "bravo", benchmarks={"b1": 0.01, "b2": 1.0})
    alpha = (case_score_vs_baseline(0.5) + case_score_vs_baseline(2.0)) / 2 / N_PROBLEMS
    bravo = (200.0 + 100.0) / 2 / N_PROBLEMS  # 100x faster is capped at 200
    assert _ranking(session, contest) == [(1, "bravo", round(bravo, 6)), (2, "alpha", round(alpha, 6))]
    # Switching the rule recomputes the cached standings.
    update_competition(session, slug=contest.slug, changes={"relative_to": "best"}, actor=None, now=clock.now)
    alpha_vs_best = (case_score_vs_best(0.5, 0.01) + case_score_vs_best(2.0, 1.0)) / 2 / N_PROBLEMS
    assert _ranking(session, contest) == [(1, "bravo", 50.0), (2, "alpha", round(alpha_vs_best, 6))]


def test_latest_versus_best(session: Session, contest: Contest, clock: Clock) -> None:
    open_quotas(session, contest, clock)
    good = judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5})
    worse = judged(session, contest, clock, "alpha", benchmarks={"b1": 1.0})
    judged(session, contest, clock, "bravo", benchmarks={"b1": 0.8})
    latest = leaderboard(session, competition=contest.slug)
    assert [(r.team_name, r.submission_ids["add_mul_relu"]) for r in latest.rows][1] == ("alpha", worse)
    assert latest.rows[0].team_name == "bravo"  # bravo's 0.8 is the best of the ranked (latest) entries
    update_competition(session, slug=contest.slug, changes={"ranked_by": "best"}, actor=None, now=clock.now)
    best = leaderboard(session, competition=contest.slug)
    assert [(r.team_name, r.submission_ids["add_mul_relu"]) for r in best.rows][0] == ("alpha", good)
    assert best.rows[0].online_score == pytest.approx(100.0 / N_PROBLEMS)


def test_a_failed_case_scores_zero_and_latest_counts(session: Session, contest: Contest, clock: Clock) -> None:
    open_quotas(session, contest, clock)
    judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5})
    judged(session, contest, clock, "alpha", verdict=Verdict.WA, benchmarks={"b1": 0.4}, failed=("b1",))
    judged(session, contest, clock, "bravo", benchmarks={"b1": 0.9})
    rows = leaderboard(session, competition=contest.slug).rows
    assert [(r.rank, r.team_name, r.online_score, r.latest_verdict) for r in rows] == [
        (1, "bravo", pytest.approx(50.0), Verdict.AC),
        (2, "alpha", 0.0, Verdict.WA),
    ]


def test_multiple_problems_average(session: Session, contest: Contest, clock: Clock) -> None:
    open_quotas(session, contest, clock)
    judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5})
    judged(session, contest, clock, "alpha", problem="sparse_flash_attention_grad", benchmarks={"s1": 0.5})
    judged(session, contest, clock, "bravo", benchmarks={"b1": 0.5})
    rows = leaderboard(session, competition=contest.slug).rows
    assert [(r.team_name, r.online_score) for r in rows] == [("alpha", 100.0), ("bravo", 50.0)]
    assert rows[0].problem_scores == {"add_mul_relu": 100.0, "sparse_flash_attention_grad": 100.0}


def test_disqualified_entries_are_kept_but_not_ranked(session: Session, contest: Contest, clock: Clock) -> None:
    open_quotas(session, contest, clock)
    earlier = judged(session, contest, clock, "alpha", benchmarks={"b1": 0.9})
    cheat = judged(session, contest, clock, "alpha", benchmarks={"b1": 0.1})
    only = judged(session, contest, clock, "bravo", benchmarks={"b1": 0.5})
    assert _ranking(session, contest)[0][1] == "alpha"
    disqualify_submission(session, submission_id=cheat, reason="caches results", actor=None, now=clock.now)
    rows = leaderboard(session, competition=contest.slug).rows
    assert [(r.rank, r.team_name, r.submission_ids.get("add_mul_relu")) for r in rows] == [
        (1, "bravo", only), (2, "alpha", earlier)
    ]  # fmt: skip
    disqualify_submission(session, submission_id=only, reason="copied", actor=None, now=clock.now)
    rows = leaderboard(session, competition=contest.slug).rows
    assert [(r.rank, r.team_name, r.disqualified) for r in rows] == [(1, "alpha", False), (None, "bravo", True)]
    disqualify_submission(session, submission_id=only, reason=None, actor=None, now=clock.now)  # reinstated
    assert [r.team_name for r in leaderboard(session, competition=contest.slug).rows] == ["bravo", "alpha"]


def test_freeze_shows_the_board_at_the_freeze(session: Session, contest: Contest, clock: Clock) -> None:
    open_quotas(session, contest, clock)
    judged(session, contest, clock, "alpha", benchmarks={"b1": 0.8})
    freeze = clock.now + timedelta(minutes=1)
    update_competition(session, slug=contest.slug, changes={"freeze_at": freeze}, actor=None, now=clock.now)
    clock.now = freeze + timedelta(minutes=5)
    judged(session, contest, clock, "bravo", benchmarks={"b1": 0.4})
    judged(session, contest, clock, "alpha", benchmarks={"b1": 0.2})

    public = leaderboard(session, competition=contest.slug, now=clock.now)
    assert public.frozen and public.frozen_at == freeze
    assert [(r.rank, r.team_name, r.online_score) for r in public.rows] == [(1, "alpha", 50.0)]
    own = leaderboard(session, competition=contest.slug, now=clock.now, viewer_team=contest.team_ids["bravo"])
    assert [(r.team_name, r.live, r.is_viewer, r.rank) for r in own.rows] == [
        ("alpha", False, False, 1), ("bravo", True, True, None)
    ]  # fmt: skip
    alpha_view = leaderboard(session, competition=contest.slug, now=clock.now, viewer_team=contest.team_ids["alpha"])
    live_entry = alpha_view.rows[0].submission_ids["add_mul_relu"]
    assert alpha_view.rows[0].live and live_entry != public.rows[0].submission_ids["add_mul_relu"]
    organisers = leaderboard(session, competition=contest.slug, now=clock.now, ignore_freeze=True)
    assert [r.team_name for r in organisers.rows] == ["alpha", "bravo"] and not organisers.frozen
    # A rejudge finishing after the freeze does not move the frozen board either.
    runs = rejudge(session, competition=contest.slug, actor=None, now=clock.now, queue_of=lambda b: "judge.cpu",
                   problem="add_mul_relu")  # fmt: skip
    assert len(runs) == 3
    assert _ranking(session, contest, now=clock.now) == [(1, "alpha", 50.0)]


def test_ties_go_to_the_earlier_submission(session: Session, contest: Contest, clock: Clock) -> None:
    open_quotas(session, contest, clock)
    judged(session, contest, clock, "charlie", benchmarks={"b1": 0.5})
    judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5})
    judged(session, contest, clock, "bravo", benchmarks={"b1": 0.5})
    assert [name for _rank, name, _score in _ranking(session, contest)] == ["charlie", "alpha", "bravo"]
    judged(session, contest, clock, "charlie", benchmarks={"b1": 0.5})  # resubmitting the same: now the latest
    assert [name for _rank, name, _score in _ranking(session, contest)] == ["alpha", "bravo", "charlie"]


def test_board_version_moves_with_results(session: Session, contest: Contest, clock: Clock) -> None:
    open_quotas(session, contest, clock)
    before = leaderboard(session, competition=contest.slug).version
    judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5})
    assert leaderboard(session, competition=contest.slug).version > before
