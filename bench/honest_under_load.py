"""Honest kernels judged on a loaded host must never get SV (docs/rules.md, "Disturbed hosts").

    .venv/bin/python bench/honest_under_load.py [--load 2] [--runs 20] [--memory-mib 1024]

Starts `--load` busy processes (a spinning loop each) and one memory-heavy one (streams over
`--memory-mib` of memory), then judges honest kernels of sparse_flash_attention_grad in turn (the
CPU baseline, `ok_row_blocked`, and the extra-work copy of bench/ranking_fidelity.py) `--runs`
times on `--sets`. Prints every verdict with the host's load as the result records it (load
average, CPU steal, the baseline's own spread), and the count of each verdict.

Target: 0 SV. An honest kernel's worst outcome on a disturbed host is IE (retried later).
"""

from __future__ import annotations

import argparse
import collections
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO_ROOT, SFA_BASELINE, judge_file
from ranking_fidelity import FAST_PERMILLE, make_variant

from judge.backends import CaseSet

# ok_row_blocked is numerically close to the pass rule: with _common's default secret (b"bench") its
# t10_custom_scale_dense inputs give dq a MERE of 1.59e-4 against 1.22e-4 allowed (on main too), a
# WA that skips the timing. The fixture tests' secret gives inputs it passes on.
SECRET = b"test"

BUSY = "while True: pass"
MEMORY = ("import numpy as np, sys\n"
          "a = np.ones(int(sys.argv[1]) * (1 << 20) // 8)\n"
          "while True:\n    a += 1.0\n")


def start_load(busy: int, memory_mib: int) -> list[subprocess.Popen[bytes]]:
    procs = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(busy)]
    if memory_mib > 0:
        procs.append(subprocess.Popen([sys.executable, "-c", MEMORY, str(memory_mib)]))
    return procs


def stop_load(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        proc.kill()
    for proc in procs:
        proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--load", type=int, default=2, help="busy processes beside the judge")
    parser.add_argument("--memory-mib", type=int, default=1024, help="memory the memory-heavy process streams over")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--sets", default="tests,benchmarks")
    parser.add_argument("--sandbox", default="auto")
    options = parser.parse_args()
    sets = tuple(CaseSet(s) for s in options.sets.split(","))
    verdicts: collections.Counter[str] = collections.Counter()
    with tempfile.TemporaryDirectory() as cache_dir, tempfile.TemporaryDirectory() as source_dir:
        kernels = [SFA_BASELINE,
                   REPO_ROOT / "tests/submissions/sparse_flash_attention_grad/cpu/ok_row_blocked.cpp",
                   make_variant(FAST_PERMILLE, Path(source_dir))]
        for kernel in kernels:  # builds and oracles cached before the load starts
            judge_file(kernel, sets=sets, sandbox=options.sandbox, cache_dir=Path(cache_dir), secret=SECRET)
        load = start_load(options.load, options.memory_mib)
        try:
            time.sleep(2)
            for run in range(options.runs):
                kernel = kernels[run % len(kernels)]
                started = time.monotonic()
                result = judge_file(kernel, sets=sets, sandbox=options.sandbox, cache_dir=Path(cache_dir),
                                    secret=SECRET)
                verdicts[result.verdict.value] += 1
                host = result.host
                print(f"run {run + 1} {kernel.name}: {result.verdict.value} score {result.score} "
                      f"in {time.monotonic() - started:.1f} s; load {host.get('load_average_timing_start', '?')}, "
                      f"steal {host.get('cpu_steal_percent', '-')} %, baseline spread "
                      f"{host.get('baseline_spread_percent', '-')} %; {result.conditions.disturbed or 'not disturbed'}"
                      + ("" if result.verdict.value == "AC" else f"; {result.message[:300]}"), flush=True)
        finally:
            stop_load(load)
    print(f"\n{options.runs} judgings with {options.load} busy processes and {options.memory_mib} MiB streamed: "
          + ", ".join(f"{v} {n}" for v, n in sorted(verdicts.items())) + f"; SV {verdicts.get('SV', 0)} (target 0)")


if __name__ == "__main__":
    main()
