"""One kernel judged again and again on a loaded host: its score moves, and the run must say so
(docs/benchmarks.md, "Scores on a loaded host").

    .venv/bin/python bench/score_under_load.py [--runs 10] [--busy N] [--memory-mib 1024] [--attempts 1]

Starts the load of bench/honest_under_load.py (busy processes, twice the CPUs by default, plus one
that streams over `--memory-mib` of memory), then judges the CPU baseline of
sparse_flash_attention_grad `--runs` times on `benchmarks`, each with `--attempts` timing attempts
(retime.py; the workers use 3 with 15 s between them, which under a load that never lifts only
makes each judging three times longer). Prints every score with the load the result records and
whether the run is marked disturbed, then the scores' coefficient of variation over all runs and
over the unmarked ones. Target: CV <= 2 %, or the runs that move are marked.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import tempfile
import time
from pathlib import Path

from _common import SFA_BASELINE
from honest_under_load import start_load, stop_load

from judge.backends import Backend, CaseSet
from judge.engine import JudgeRequest, judge_submission
from judge.host_config import HostConfig
from judge.problem import load_problem
from judge.submission import read_sources
from judge.tracks import get_track


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--busy", type=int, default=2 * (os.cpu_count() or 1))
    parser.add_argument("--memory-mib", type=int, default=1024)
    parser.add_argument("--attempts", type=int, default=1)
    parser.add_argument("--sandbox", default="auto")
    args = parser.parse_args()
    limits = dataclasses.replace(get_track(Backend.CPU).limits, disturbed_timing_attempts=args.attempts,
                                 disturbed_backoff_s=5.0)
    request = JudgeRequest(problem=load_problem("sparse_flash_attention_grad"), backend=Backend.CPU,
                           sources=read_sources([SFA_BASELINE], limits), case_sets=(CaseSet.BENCHMARKS,),
                           secret=b"bench")  # fmt: skip
    load = start_load(args.busy, args.memory_mib)
    scores: list[tuple[float, bool]] = []
    try:
        time.sleep(5)
        print(f"{args.busy} busy processes + {args.memory_mib} MiB streamed, {os.cpu_count()} CPUs; "
              f"load average now {os.getloadavg()[0]:.2f}")
        for run in range(args.runs):
            with tempfile.TemporaryDirectory(prefix="opjudge-bench-") as work:
                started = time.monotonic()
                result = judge_submission(request, host=HostConfig(work_root=Path(work), limits=limits,
                                                                   sandbox_mode=args.sandbox))  # fmt: skip
            disturbed = result.conditions.disturbed or ""
            score = result.score if result.score is not None else float("nan")
            scores.append((score, bool(disturbed)))
            print(f"run {run + 1:2d}: {result.verdict.value} score {score:7.2f}  "
                  f"{'DISTURBED: ' + disturbed[:120] if disturbed else 'calm'}  ({time.monotonic() - started:.0f} s, "
                  f"load {os.getloadavg()[0]:.2f}, score +-{result.host.get('score_half_width_percent', '?')} %, "
                  f"baseline spread {result.host.get('baseline_spread_percent', '?')} %)", flush=True)
    finally:
        stop_load(load)

    def cv(values: list[float]) -> str:
        values = [v for v in values if v == v]
        if len(values) < 2:
            return "n/a"
        return f"{100 * statistics.stdev(values) / statistics.mean(values):.2f} % over {len(values)}"

    print(f"score CV, all runs: {cv([s for s, _ in scores])}; unmarked runs: {cv([s for s, d in scores if not d])}; "
          f"marked disturbed: {sum(d for _, d in scores)} of {len(scores)}")


if __name__ == "__main__":
    main()
