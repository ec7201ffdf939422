"""Does the sandbox slow a legitimate OpenMP kernel down? Strict vs off, interleaved.

    .venv/bin/python bench/sandbox_overhead.py [--rounds 3] [--sets benchmarks] [--compare memcg]

Judges the sparse FA baseline (OpenMP) as a submission under `strict` (bubblewrap,
seccomp, rlimits, the runner's lockdown) and under `off`, alternating which goes
first each round, and prints per benchmark case the ratio of the medians (over
rounds) of the kernel's median time: strict / off. Target: within 3 %.
`--compare memcg` judges under `strict` both times, with the children's memory cgroups
(judge/sandbox/memcg.py) against without them: what the groups cost an honest kernel.
"""

from __future__ import annotations

import argparse
import math
import statistics
import tempfile
import time
from pathlib import Path

from _common import SFA_BASELINE, judge_file

from judge.backends import CaseSet

# label -> (sandbox mode, memory cgroup mode); the first of each pair is the one measured.
COMPARISONS = {
    "sandbox": {"strict": ("strict", "auto"), "off": ("off", "off")},
    "memcg": {"strict": ("strict", "auto"), "off": ("strict", "off")},
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sets", default="benchmarks", help="comma-separated: benchmarks,private")
    parser.add_argument("--compare", choices=sorted(COMPARISONS), default="sandbox",
                        help="sandbox: strict vs off; memcg: strict with vs without memory cgroups")
    options = parser.parse_args()
    modes = COMPARISONS[options.compare]
    if options.compare == "memcg":
        print("'strict' below: strict with memory cgroups; 'off': strict without them", flush=True)
    sets = tuple(CaseSet(s) for s in options.sets.split(","))
    medians: dict[str, dict[str, list[float]]] = {mode: {} for mode in modes}
    minima: dict[str, dict[str, list[float]]] = {mode: {} for mode in modes}
    walls: dict[str, list[float]] = {mode: [] for mode in modes}
    with tempfile.TemporaryDirectory() as cache:
        for round_index in range(options.rounds):
            order = list(modes) if round_index % 2 == 0 else list(modes)[::-1]
            for mode in order:
                started = time.monotonic()
                sandbox, memory_cgroup = modes[mode]
                result = judge_file(SFA_BASELINE, sets=sets, sandbox=sandbox, cache_dir=Path(cache),
                                    memory_cgroup=memory_cgroup)
                walls[mode].append(time.monotonic() - started)
                assert result.verdict.value == "AC", f"{mode}: {result.verdict} {result.message}"
                for case in result.cases:
                    if case.timing is not None:
                        medians[mode].setdefault(case.name, []).append(case.timing.median_ns)
                        minima[mode].setdefault(case.name, []).append(case.timing.min_ns)
                print(
                    f"round {round_index + 1} {mode:6}: {walls[mode][-1]:.1f} s, isolation {result.isolation}",
                    flush=True,
                )
    print(f"\n{'case':28} {'strict ms':>10} {'off ms':>10} {'strict/off':>10} {'min ratio':>10}")
    ratios, min_ratios = [], []
    for name, off_values in medians["off"].items():
        strict_ms = statistics.median(medians["strict"][name]) / 1e6
        off_ms = statistics.median(off_values) / 1e6
        ratios.append(strict_ms / off_ms)
        min_ratios.append(min(minima["strict"][name]) / min(minima["off"][name]))
        print(f"{name:28} {strict_ms:10.3f} {off_ms:10.3f} {ratios[-1]:10.4f} {min_ratios[-1]:10.4f}")
    geomean = math.exp(statistics.fmean(math.log(r) for r in ratios))
    min_geomean = math.exp(statistics.fmean(math.log(r) for r in min_ratios))
    print(f"{'geometric mean':28} {'':10} {'':10} {geomean:10.4f} {min_geomean:10.4f}")
    wall_ratio = statistics.median(walls["strict"]) / statistics.median(walls["off"])
    print(
        f"whole judge wall time, median: strict {statistics.median(walls['strict']):.1f} s, "
        f"off {statistics.median(walls['off']):.1f} s ({wall_ratio:.3f})"
    )


if __name__ == "__main__":
    main()
