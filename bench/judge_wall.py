"""Whole-judge wall time of the CPU track for sparse FA backward, split by stage.

    .venv/bin/python bench/judge_wall.py [--sandbox strict] [--warm-cache]

Target (docs/benchmarks.md, "Whole judge, CPU track"): at most 60 s on this 2-core machine.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from _common import SFA_BASELINE, HostRecord, judge_file

from judge.backends import CaseSet


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sandbox", default="auto")
    parser.add_argument("--warm-cache", action="store_true", help="judge once first so builds and oracles are cached")
    options = parser.parse_args()
    sets = (CaseSet.TESTS, CaseSet.BENCHMARKS, CaseSet.PRIVATE)
    print(HostRecord.describe(), flush=True)
    record = HostRecord()
    with tempfile.TemporaryDirectory() as cache:
        if options.warm_cache:
            judge_file(SFA_BASELINE, sets=sets, sandbox=options.sandbox, cache_dir=Path(cache))
        started = time.monotonic()
        result = judge_file(SFA_BASELINE, sets=sets, sandbox=options.sandbox, cache_dir=Path(cache))
        wall = time.monotonic() - started
    print(f"verdict {result.verdict.value} ({result.message}), score {result.score}, "
          f"isolation {result.isolation.value}; score interval +-{result.host.get('score_half_width_percent', '?')} %, "
          f"host {result.conditions.disturbed or 'not disturbed'}")
    for stage, seconds in result.stage_times_s.items():
        print(f"  {stage:12} {seconds:6.1f} s")
    accounted = sum(result.stage_times_s.values())
    print(f"  {'other':12} {wall - accounted:6.1f} s  (child start, input generation, messages)")
    timed = [case for case in result.cases if case.timing is not None]
    print(f"whole judge: {wall:.1f} s for {len(result.cases)} cases ({len(timed)} timed)")
    parts = {part: seconds for part, seconds in result.timing_profile_s.items() if part != "timed_pairs"}
    print(f"timing phase: {result.timing_profile_s.get('timed_pairs', 0):.0f} timed pairs; by part (summed over "
          "both runners): " + ", ".join(f"{part} {seconds:.2f} s" for part, seconds in
                                        sorted(parts.items(), key=lambda kv: -kv[1])))
    print(record.summary())


if __name__ == "__main__":
    main()
