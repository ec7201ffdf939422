"""The worker's wait after "ran" for the kernel's threads to leave the CPU (judge/idle_watch.py,
`wait_until_settled`), on and off, judgings of ranking_fidelity.py's `fast` alternated:

    cd bench && ../.venv/bin/python settle_after_ran.py [--runs 16] [--sandbox strict]

Per judging: the verdict (an honest kernel: AC expected), the score, one pair's ratio spread (the sd
of the log of each pair's ratio, mean over the cases), the timed pairs, the timing phase's CPU steal
and the time the waits took. "off" reads the CPU time at once, as the worker did before. Figures:
docs/benchmarks.md, "Kernel threads after ran".
"""

from __future__ import annotations

import argparse
import math
import statistics
import tempfile
from pathlib import Path

import judging_noise
from _common import HostRecord, judge_file
from ranking_fidelity import FAST_PERMILLE, make_variant

from judge.backends import CaseSet
from judge.idle_watch import kernel_threads_running
from judge.runner import session


def _no_wait(root: int | None, *_args: object, **_kwargs: object) -> tuple[int, int]:
    return kernel_threads_running(root), 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=16, help="judgings, alternating on and off")
    parser.add_argument("--sandbox", default="auto")
    options = parser.parse_args()
    judging_noise._watch_record()  # keeps each case's pair ratios
    print(HostRecord.describe(), flush=True)
    record = HostRecord()
    waits = {"on": session.wait_until_settled, "off": _no_wait}
    rows: dict[str, list[tuple[str, float, float, int, float]]] = {"on": [], "off": []}
    folder = Path(tempfile.mkdtemp(prefix="opjudge-settle-"))
    kernel = make_variant(FAST_PERMILLE, folder)
    for run in range(options.runs):
        mode = "on" if run % 2 == 0 else "off"
        session.wait_until_settled = waits[mode]  # type: ignore[assignment]
        result = judge_file(kernel, sets=(CaseSet.BENCHMARKS,), sandbox=options.sandbox, cache_dir=folder / "cache")
        spreads = [statistics.stdev([math.log(r) for r in seen["pairs_ratios"]])  # type: ignore[union-attr]
                   for seen in judging_noise._SEEN.values()]
        pairs = sum(len(seen["pairs_ratios"]) for seen in judging_noise._SEEN.values())  # type: ignore[arg-type]
        steal = float(result.host.get("cpu_steal_percent", "nan"))
        rows[mode].append((result.verdict.value, result.score or 0.0, statistics.fmean(spreads), pairs, steal))
        print(f"run {run + 1} wait {mode}: {result.verdict.value} score {result.score or 0:.2f}, one pair's sd "
              f"{100 * statistics.fmean(spreads):.1f} %, {pairs} timed pairs, CPU steal {steal:.1f} %, waits "
              f"{result.timing_profile_s.get('settle', 0.0):.2f} s" + (f" ({result.message})" if result.verdict.value
                                                                      != "AC" else ""), flush=True)
    session.wait_until_settled = waits["on"]  # type: ignore[assignment]
    for mode, judged in rows.items():
        if not judged:
            continue
        accepted = [r for r in judged if r[0] == "AC"]
        scores = [r[1] for r in accepted]
        cv = 100 * statistics.stdev(scores) / statistics.fmean(scores) if len(scores) > 1 else math.nan
        mean = statistics.fmean(scores) if scores else 0.0
        spread = 100 * statistics.fmean(r[2] for r in judged)
        pairs, steal = statistics.fmean(r[3] for r in judged), statistics.fmean(r[4] for r in judged)
        print(f"wait {mode}: {len(accepted)} of {len(judged)} AC; score mean {mean:.2f}, CV {cv:.2f} %; one pair's sd "
              f"{spread:.1f} %, {pairs:.0f} timed pairs, CPU steal {steal:.1f} %")
    print(record.summary())


if __name__ == "__main__":
    main()
