"""How loaded the host was while a run was timed, recorded with the result (docs/rules.md, "Disturbed hosts").

A disturbed host makes ratios noisy but must never turn an honest kernel's run into a verdict
against it; organisers read these figures to see a run that should be judged again.
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass
from pathlib import Path

# Above these the run is marked disturbed (for the organisers; no verdict changes).
DISTURBED_LOAD_PER_CPU = 1.5  # the run itself keeps about one per CPU busy
DISTURBED_STEAL_PERCENT = 5.0
DISTURBED_BASELINE_SPREAD_PERCENT = 10.0


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
             baseline_spreads: list[float]) -> tuple[dict[str, str], str | None]:
    """The figures recorded in the result's `host`: load average at the start and end of the
    timing phase, CPU steal over it, the baseline's own spread (its calls' CV, the median and
    the worst case); and why the host was disturbed when one of them says the ratios are less to be
    trusted (the run's `conditions.disturbed`, judge/conditions.py), else None."""
    figures = {"load_average_timing_start": load_before, "load_average_timing_end": load_average()}
    steal = steal_percent(before, after)
    if steal is not None:
        figures["cpu_steal_percent"] = f"{steal:.2f}"
    if baseline_spreads:
        figures["baseline_spread_percent"] = (f"median {statistics.median(baseline_spreads):.2f}, "
                                              f"worst {max(baseline_spreads):.2f}")
    reasons = []
    cpus = len(os.sched_getaffinity(0)) or 1
    loads = [float(v) for v in load_before.split()[:1] + figures["load_average_timing_end"].split()[:1] if v]
    if loads and max(loads) > DISTURBED_LOAD_PER_CPU * cpus:
        reasons.append(f"load average {max(loads):.2f} on {cpus} CPUs")
    if steal is not None and steal > DISTURBED_STEAL_PERCENT:
        reasons.append(f"{steal:.1f} % CPU steal")
    if baseline_spreads and max(baseline_spreads) > DISTURBED_BASELINE_SPREAD_PERCENT:
        reasons.append(f"the baseline's calls spread by {max(baseline_spreads):.1f} %")
    return figures, "; ".join(reasons) if reasons else None
