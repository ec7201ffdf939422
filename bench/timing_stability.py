"""Judge the sparse FA baseline against itself N times; print the CV of each case's ratio and of the score.

    .venv/bin/python bench/timing_stability.py [--runs 10] [--sets benchmarks]

Target (issue 2): CV of the score at most 2 % on this 2-core machine.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from _common import SFA_BASELINE, judge_file

from judge.backends import CaseSet


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--sets", default="benchmarks", help="comma-separated: benchmarks,private")
    parser.add_argument("--sandbox", default="auto")
    options = parser.parse_args()
    sets = tuple(CaseSet(s) for s in options.sets.split(","))
    ratios: dict[str, list[float]] = {}
    scores: list[float] = []
    with tempfile.TemporaryDirectory() as cache:
        for run in range(options.runs):
            started = time.monotonic()
            result = judge_file(SFA_BASELINE, sets=sets, sandbox=options.sandbox, cache_dir=Path(cache))
            assert result.verdict.value == "AC", result.message
            for case in result.cases:
                if case.ratio is not None:
                    ratios.setdefault(case.name, []).append(case.ratio)
            scores.append(result.score or 0.0)
            print(f"run {run + 1}: score {result.score:.2f} in {time.monotonic() - started:.1f} s", flush=True)
    print(f"\n{'case':28} {'mean ratio':>10} {'CV %':>7}")
    for name, values in ratios.items():
        mean = statistics.fmean(values)
        print(f"{name:28} {mean:10.4f} {100 * statistics.pstdev(values) / mean:7.2f}")
    mean_score = statistics.fmean(scores)
    print(f"{'score':28} {mean_score:10.2f} {100 * statistics.pstdev(scores) / mean_score:7.2f}")


if __name__ == "__main__":
    main()
