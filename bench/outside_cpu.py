"""Each child's CPU time outside its calls' brackets, per case (judge/idle_watch.py, `OutsideWatch`).

The worker reads both runner children's process trees' CPU time from outside them around every call:
from the call command to "armed" and from "ran" to the report. The submission's is held to the
baseline's (the same runner code on the same case). This prints, for honest kernels, both medians,
the worst submission call and how many calls passed the allowance, so the allowance can be judged
against what honest kernels use; and what the watch costs a judging (the extra /proc reads).

    .venv/bin/python bench/outside_cpu.py [--kernel PATH ...] [--sets benchmarks] [--sandbox strict]
        [--repeat N] [--load BUSY]   # N judgings of each kernel, beside BUSY busy processes and a 1 GiB streamer
"""

from __future__ import annotations

import argparse
import ast
import logging
import os
import time
from pathlib import Path

from _common import REPO_ROOT, SFA_BASELINE, judge_file
from honest_under_load import start_load, stop_load

from judge.backends import CaseSet
from judge.idle_watch import OUTSIDE_CALL_FACTOR, OUTSIDE_CALLS_SV, OUTSIDE_FAR_FACTOR, OUTSIDE_MEDIAN_SHARE

DEFAULT_KERNELS = [
    SFA_BASELINE,
    REPO_ROOT / "tests/submissions/sparse_flash_attention_grad/cpu/ok_row_blocked.cpp",
    REPO_ROOT / "tests/submissions/sparse_flash_attention_grad/cpu/ok_std_openmp.cpp",
]


class _Figures(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.rows: list[tuple[str, dict[str, float]]] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("case ") and "CPU outside the brackets" in record.getMessage():
            case, figures = record.args  # type: ignore[misc]
            self.rows.append((str(case), ast.literal_eval(repr(figures))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernel", type=Path, action="append")
    parser.add_argument("--sets", default="benchmarks")
    parser.add_argument("--problem", default="sparse_flash_attention_grad")
    parser.add_argument("--sandbox", default="strict")
    parser.add_argument("--repeat", type=int, default=1, help="judgings of each kernel")
    parser.add_argument("--load", type=int, default=0,
                        help="busy processes beside the judge, plus one streaming over 1 GiB (honest_under_load.py)")
    args = parser.parse_args()
    sets = tuple(CaseSet(s) for s in args.sets.split(","))
    handler = _Figures()
    logger = logging.getLogger("opjudge.judge")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    far = OUTSIDE_CALL_FACTOR + OUTSIDE_FAR_FACTOR
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs; a call is over past "
          f"{OUTSIDE_CALL_FACTOR} x the baseline's median + 5 ms; SV: {OUTSIDE_CALLS_SV} calls past about "
          f"{far:.0f} x, or over a quarter of a case's calls over, beyond the baseline's own by chance < 1 %; "
          f"logged: the median over "
          f"{1 + OUTSIDE_MEDIAN_SHARE:.2f} x the baseline's + 3 ms")
    print(f"{'kernel':<16} {'case':<18} {'calls':>5} {'sub q1/med/q3 ms':>20} {'base q1/med/q3 ms':>20} "
          f"{'worst':>7} {'over':>4} {'far':>3} {'b.over':>6} {'helper q3/max sub, max base ms':>32}")
    load = start_load(args.load, 1024) if args.load else []
    try:
        for kernel in [k for k in args.kernel or DEFAULT_KERNELS for _ in range(args.repeat)]:
            _judge_and_print(kernel, args, sets, handler)
    finally:
        stop_load(load)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


def _judge_and_print(kernel: Path, args: argparse.Namespace, sets: tuple[CaseSet, ...], handler: _Figures) -> None:
    handler.rows.clear()
    started = time.monotonic()
    result = judge_file(kernel, problem=args.problem, sets=sets, sandbox=args.sandbox)
    for case, f in handler.rows:
        sub = f"{f['submission_q1_ms']:.1f}/{f['submission_ms']:.1f}/{f['submission_q3_ms']:.1f}"
        base = f"{f['baseline_q1_ms']:.1f}/{f['baseline_ms']:.1f}/{f['baseline_q3_ms']:.1f}"
        print(f"{kernel.stem[:16]:<16} {case[:18]:<18} {int(f['calls']):>5} {sub:>20} {base:>20} "
              f"{f['worst_ms']:>7.1f} {int(f['calls_over']):>4} {int(f['calls_far']):>3} {int(f['baseline_over']):>6} "
              f"{f['helper_submission_q3_ms']:>10.3f}/{f['helper_submission_max_ms']:.3f}, "
              f"{f['helper_baseline_max_ms']:.3f}")
    if result.verdict.value != "AC":
        print("   ", [c.message[:300] for c in result.cases if not c.passed], result.message[:200])
    print(f"{kernel.stem[:16]:<16} verdict {result.verdict.value}, score {result.score}, "
          f"{time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
