"""Scoring formulas of docs/rules.md ("Scoring"), as pure functions.

Ratios are r_c = t_sub / t_base of medians measured in the same run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

DEFAULT_SCORE_CAP = 200.0  # docs/rules.md, "Scoring": "up to the competition's cap"


def case_score_vs_best(ratio: float, best_ratio: float) -> float:
    """`relative_to: best`: 100 / (1 + log_1.5(r_c / r*_c)); the best entry scores 100."""
    if ratio <= 0 or best_ratio <= 0:
        raise ValueError(f"ratios must be positive, got {ratio} and {best_ratio}")
    # r*_c is the lowest ratio of the competition, so r_c / r*_c >= 1; guard rounding.
    return 100.0 / (1.0 + math.log(max(ratio / best_ratio, 1.0), 1.5))


def case_score_vs_baseline(ratio: float, cap: float = DEFAULT_SCORE_CAP) -> float:
    """`relative_to: baseline`: 100/(1+log_1.5 r) when r >= 1, else 100 + 50*log_2(1/r), capped."""
    if ratio <= 0:
        raise ValueError(f"ratio must be positive, got {ratio}")
    if ratio >= 1.0:
        return 100.0 / (1.0 + math.log(ratio, 1.5))
    return min(cap, 100.0 + 50.0 * math.log2(1.0 / ratio))


def score_slope(ratio: float, cap: float = DEFAULT_SCORE_CAP) -> float:
    """|d score_c / d ln r_c| of `case_score_vs_baseline` at `ratio`: how many points a relative
    error of the ratio costs (the timing phase spends its spare rounds where that is largest;
    r_c / r*_c of `relative_to: best` has the same shape above 1)."""
    if ratio <= 0:
        raise ValueError(f"ratio must be positive, got {ratio}")
    if ratio >= 1.0:
        return 100.0 / math.log(1.5) / (1.0 + math.log(ratio, 1.5)) ** 2
    return 0.0 if case_score_vs_baseline(ratio, cap) >= cap else 50.0 / math.log(2.0)


def score_half_width_percent(cases: Sequence[tuple[float, float]]) -> float:
    """The 95 % half-width of an online score, in % of the score, from its cases' (ratio, relative
    half-width of the ratio's 95 % interval): each case moves the mean by its slope times its
    half-width over the number of cases, and the cases' errors are independent. Infinite when a
    case has no finite interval. Scored against the baseline (the report's figure)."""
    if not cases:
        return 0.0
    if any(not math.isfinite(width) for _, width in cases):
        return math.inf
    points = math.sqrt(sum((score_slope(ratio) * width) ** 2 for ratio, width in cases)) / len(cases)
    score = sum(case_score_vs_baseline(ratio) for ratio, _ in cases) / len(cases)
    return 100.0 * points / score


def online_score(case_scores: Sequence[float], all_passed: bool) -> float:
    """Mean of the case scores of the ranked set; 0 when any case failed or none was scored."""
    if not all_passed or not case_scores:
        return 0.0
    return sum(case_scores) / len(case_scores)


def reviewer_score(totals: Sequence[float]) -> float | None:
    """Mean of the reviewers' totals, dropping the highest and lowest with 5 or more; None if none."""
    if not totals:
        return None
    ordered = sorted(totals)
    if len(ordered) >= 5:
        ordered = ordered[1:-1]
    return sum(ordered) / len(ordered)


def final_score(
    online: float, reviewer: float | None, *, online_weight: float = 0.7, reviewer_weight: float = 0.3
) -> float:
    """online_weight * online + reviewer_weight * reviewer (a missing review counts 0)."""
    return online_weight * online + reviewer_weight * (reviewer or 0.0)


def reproduces(original_ratio: float, rerun_ratio: float, tolerance: float = 0.10) -> bool:
    """A reproduction run agrees when its r_c is within `tolerance` (relative) of the original."""
    return abs(rerun_ratio - original_ratio) <= tolerance * original_ratio
