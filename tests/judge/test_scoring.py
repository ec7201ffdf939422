import math

import pytest

from judge.scoring import (
    case_score_vs_baseline,
    case_score_vs_best,
    final_score,
    online_score,
    reproduces,
    reviewer_score,
)


def test_best_scores_100_and_one_and_a_half_times_slower_scores_50():
    assert case_score_vs_best(0.8, 0.8) == pytest.approx(100)
    assert case_score_vs_best(1.2, 0.8) == pytest.approx(50)
    assert case_score_vs_best(0.8 * 1.5**3, 0.8) == pytest.approx(25)


def test_baseline_rule_both_sides():
    assert case_score_vs_baseline(1.0) == pytest.approx(100)
    assert case_score_vs_baseline(1.5) == pytest.approx(50)
    assert case_score_vs_baseline(0.5) == pytest.approx(150)
    assert case_score_vs_baseline(0.25) == pytest.approx(200)
    assert case_score_vs_baseline(0.01, cap=180) == 180


def test_scores_are_monotone_in_ratio():
    ratios = [0.3, 0.5, 0.9, 1.0, 1.1, 2.0, 8.0]
    scores = [case_score_vs_baseline(r) for r in ratios]
    assert scores == sorted(scores, reverse=True)


def test_online_is_mean_and_zero_on_any_failure():
    assert online_score([100, 50], True) == 75
    assert online_score([100, 50], False) == 0
    assert online_score([], True) == 0


def test_reviewer_drop_high_low_from_five():
    assert reviewer_score([80, 90]) == 85
    assert reviewer_score([10, 80, 80, 80, 100]) == 80
    assert reviewer_score([]) is None


def test_final_is_weighted():
    assert final_score(80, 60) == pytest.approx(0.7 * 80 + 0.3 * 60)
    assert final_score(80, None) == pytest.approx(56)
    assert final_score(50, 100, online_weight=0.5, reviewer_weight=0.5) == 75


def test_reproduction_tolerance():
    assert reproduces(1.0, 1.09)
    assert not reproduces(1.0, 1.11)
    assert not math.isnan(case_score_vs_best(1.0, 1.0000001))


def test_invalid_ratio_rejected():
    with pytest.raises(ValueError):
        case_score_vs_baseline(0)


def test_score_slope_is_the_scores_change_per_relative_change_of_the_ratio():
    import math

    from judge.scoring import case_score_vs_baseline, score_slope

    for ratio in (0.3, 0.8, 1.0, 1.2, 3.0):
        step = 1e-6
        numeric = abs(case_score_vs_baseline(ratio * math.exp(step)) - case_score_vs_baseline(ratio)) / step
        assert score_slope(ratio) == pytest.approx(numeric, rel=1e-3), ratio
    assert score_slope(1.0) > score_slope(1.2) > score_slope(3.0)
    assert score_slope(0.1) == 0.0  # capped at 200: the ratio's error costs no points there
