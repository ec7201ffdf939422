"""How loaded the host was while a run was timed, recorded with the result (docs/rules.md, "Disturbed hosts").

A disturbed host makes ratios noisy but must never turn an honest kernel's run into a verdict
against it; organisers read these figures to see a run that should be judged again.
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass
from pathlib import Path

# Above these the run is marked disturbed (docs/rules.md, "Disturbed hosts"; no verdict changes).
DISTURBED_LOAD_PER_CPU = 1.5  # the run itself keeps about one per CPU busy
DISTURBED_STEAL_PERCENT = 5.0
# The score's own 95 % interval, in % of the score: +-4 % is a score CV near 2 %. The baseline's
# calls' spread, the rule before, says how noisy one call is, which the pairs' ratios absorb: on
# quiet 2-vCPU hosts it passed 10 % in nearly every judging (docs/benchmarks.md, "Disturbed, on a
# quiet host"), so every run there was timed three times and left out of the final ranking.
DISTURBED_SCORE_HALF_WIDTH_PERCENT = 4.0
SCORE_WIDTH_KEY = "score_half_width_percent"  # in the result's `host`: "benchmarks 2.10, private 3.40"


def format_widths(widths: dict[str, float]) -> str:
    return ", ".join(f"{name} {width:.2f}" for name, width in widths.items())


def parse_widths(text: str) -> dict[str, float]:
    """`format_widths` read back; an entry that does not read is left out."""
    widths = {}
    for entry in filter(None, (part.strip() for part in text.split(","))):
        name, _, value = entry.rpartition(" ")
        try:
            widths[name] = float(value)
        except ValueError:
            continue
    return widths


@dataclass(frozen=True)
class CpuTimes:
    busy: int  # jiffies of every state but idle and iowait
    total: int
    steal: int | None  # None where /proc/stat has no steal column


def cpu_times(stat: Path = Path("/proc/stat")) -> CpuTimes | None:
    try:
        fields = stat.read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    if not fields or fields[0] != "cpu":
        return None
    values = [int(v) for v in fields[1:]]
    idle = sum(values[3:5])
    steal = values[7] if len(values) > 7 else None
    total = sum(values[:8])  # guest time is already counted in user
    return CpuTimes(busy=total - idle, total=total, steal=steal)


def load_average() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return ""


def steal_percent(before: CpuTimes | None, after: CpuTimes | None) -> float | None:
    """CPU time stolen by the hypervisor between two readings, in % of all CPU time."""
    if before is None or after is None or before.steal is None or after.steal is None:
        return None
    total = after.total - before.total
    return 100.0 * (after.steal - before.steal) / total if total > 0 else 0.0


def spread_percent(std_ns: float, mean_ns: float) -> float:
    return 100.0 * std_ns / mean_ns if mean_ns > 0 else 0.0


def describe(*, load_before: str, before: CpuTimes | None, after: CpuTimes | None,
             baseline_spreads: list[float], score_half_widths: dict[str, float] | None = None,
             ) -> tuple[dict[str, str], str | None]:
    """The figures recorded in the result's `host`: load average at the start and end of the
    timing phase, CPU steal over it, the baseline's own spread (its calls' CV, the median and the
    worst case: a figure only), each timed set's score interval (`score_half_widths`, % of the
    score); and why the host was disturbed when the load, the steal or a score's interval says the
    score is less to be trusted (the run's `conditions.disturbed`, judge/conditions.py), else None."""
    figures = {"load_average_timing_start": load_before, "load_average_timing_end": load_average()}
    steal = steal_percent(before, after)
    if steal is not None:
        figures["cpu_steal_percent"] = f"{steal:.2f}"
    if baseline_spreads:
        figures["baseline_spread_percent"] = (f"median {statistics.median(baseline_spreads):.2f}, "
                                              f"worst {max(baseline_spreads):.2f}")
    widths = score_half_widths or {}
    if widths:
        figures[SCORE_WIDTH_KEY] = format_widths(widths)
    reasons = []
    cpus = len(os.sched_getaffinity(0)) or 1
    loads = [float(v) for v in load_before.split()[:1] + figures["load_average_timing_end"].split()[:1] if v]
    if loads and max(loads) > DISTURBED_LOAD_PER_CPU * cpus:
        reasons.append(f"load average {max(loads):.2f} on {cpus} CPUs")
    if steal is not None and steal > DISTURBED_STEAL_PERCENT:
        reasons.append(f"{steal:.1f} % CPU steal")
    for name, width in widths.items():
        if width > DISTURBED_SCORE_HALF_WIDTH_PERCENT:
            reasons.append(f"the {name} score is known to +-{width:.1f} % only (95 %)")
    return figures, "; ".join(reasons) if reasons else None
