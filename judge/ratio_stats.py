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
