"""The statistics of a case's timing: each kernel's figures and the pairs' ratio with its interval
(docs/rules.md, "Timing": the scored figure is the interquartile mean of the pairs' ratios)."""

from __future__ import annotations

import math
import statistics

from judge.results import TimingStats


def stats(samples_ns: list[int]) -> TimingStats:
    return TimingStats(
        median_ns=float(statistics.median(samples_ns)),
        mean_ns=float(statistics.fmean(samples_ns)),
        min_ns=float(min(samples_ns)),
        std_ns=float(statistics.pstdev(samples_ns)) if len(samples_ns) > 1 else 0.0,
        count=len(samples_ns),
    )


def paired_ratio(submission_ns: list[int], baseline_ns: list[int]) -> float:
    """Median over pairs of t_sub / t_base, each pair timed back to back.

    Steadier than a ratio of medians when the machine's speed comes and goes in
    bursts: both calls of a pair see the same conditions.
    """
    return float(statistics.median(s / b for s, b in zip(submission_ns, baseline_ns, strict=True) if b > 0))


def ratio_interval(ratios: list[float], z: float = 1.96) -> tuple[float, float]:
    """A distribution-free 95 % confidence interval of the median of `ratios` (order statistics:
    the ranks a binomial(n, 1/2) count reaches within z standard deviations); (0, inf) below 6."""
    n = len(ratios)
    k = math.floor((n - z * math.sqrt(n)) / 2)
    if k < 0 or n < 6:
        return 0.0, math.inf
    ordered = sorted(ratios)
    return ordered[k], ordered[n - 1 - k]


def relative_half_width(ratios: list[float]) -> float:
    """Half the width of `ratio_interval` over the median: the median's precision (a diagnostic;
    the stop rule uses `ratio_estimate`, whose figure is the one scored)."""
    lo, hi = ratio_interval(ratios)
    mid = statistics.median(ratios) if ratios else 0.0
    return (hi - lo) / 2 / mid if mid > 0 and math.isfinite(hi) else math.inf


TRIM = 0.25  # of the pairs' ratios left out at each end: the interquartile mean


def _t_975(df: int) -> float:
    """Student's t at 97.5 % for `df` degrees of freedom (within 3 % of the table from df = 3)."""
    return 1.96 + 2.4 / df + 3.0 / df**2


def ratio_estimate(ratios: list[float]) -> tuple[float, float]:
    """The case's ratio and the relative half-width of its 95 % interval: the interquartile mean of
    the pairs' t_sub / t_base (the middle half of them, averaged), with the trimmed mean's
    interval (Tukey-McLaughlin: the winsorized spread). As robust as the median to pairs a burst
    of load hit on one side, and steadier from judging to judging (for pairs spread like a bell
    the median needs about 1.3 times as many pairs for the same precision). (median, inf) below 6."""
    n = len(ratios)
    if n < 6:
        return (float(statistics.median(ratios)) if ratios else 0.0), math.inf
    ordered = sorted(ratios)
    cut = int(TRIM * n)
    middle = ordered[cut : n - cut]
    center = float(statistics.fmean(middle))
    winsorized = [middle[0]] * cut + middle + [middle[-1]] * cut
    spread = statistics.stdev(winsorized)
    half = _t_975(len(middle) - 1) * spread / ((1 - 2 * cut / n) * math.sqrt(n))
    return center, (half / center if center > 0 else math.inf)
