"""Judge the sparse FA baseline against itself N times; print the CV of each case's ratio and of the score.

    .venv/bin/python bench/timing_stability.py [--runs 10] [--sets benchmarks] [--guard on|off|both]

Target (docs/benchmarks.md, "Timing stability"): CV of the score at most 2 % on this 2-core machine.

`--guard both` (docs/security.md, layer 5) judges every run twice, with the runner's per-call guard (the output page
reads inside the timed bracket and the checks after each call, judge/runner/child/guard.py) on and off,
in alternating order, and prints the baseline's ratio against itself in each mode and their
quotient: what the guard costs an honest kernel, measured in one run so that load matters less.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from _common import SFA_BASELINE

from judge.backends import Backend, CaseSet
from judge.engine import JudgeRequest, judge_submission
from judge.host_config import HostConfig
from judge.problem import load_problem
from judge.results import JudgeResult
from judge.submission import read_sources
from judge.tracks import get_track


def judge_baseline(sets: tuple[CaseSet, ...], sandbox: str, cache: Path, guard: str) -> JudgeResult:
    limits = get_track(Backend.CPU).limits
    request = JudgeRequest(problem=load_problem("sparse_flash_attention_grad"), backend=Backend.CPU,
                           sources=read_sources([SFA_BASELINE], limits), case_sets=sets, secret=b"bench")
    with tempfile.TemporaryDirectory(prefix="opjudge-bench-") as work:
        host = HostConfig(work_root=Path(work), limits=limits, sandbox_mode=sandbox, cache_dir=cache,
                          call_guard=guard != "off")
        return judge_submission(request, host=host)


def summary(label: str, ratios: dict[str, list[float]], scores: list[float]) -> None:
    print(f"\n[{label}] {'case':28} {'mean ratio':>10} {'CV %':>7}")
    for name, values in ratios.items():
        mean = statistics.fmean(values)
        print(f"[{label}] {name:28} {mean:10.4f} {100 * statistics.pstdev(values) / mean:7.2f}")
    mean_score = statistics.fmean(scores)
    print(f"[{label}] {'score':28} {mean_score:10.2f} {100 * statistics.pstdev(scores) / mean_score:7.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--sets", default="benchmarks", help="comma-separated: benchmarks,private")
    parser.add_argument("--sandbox", default="auto")
    parser.add_argument("--guard", choices=("on", "off", "both"), default="on")
    options = parser.parse_args()
    sets = tuple(CaseSet(s) for s in options.sets.split(","))
    modes = ("on", "off") if options.guard == "both" else (options.guard,)
    ratios: dict[str, dict[str, list[float]]] = {m: {} for m in modes}
    scores: dict[str, list[float]] = {m: [] for m in modes}
    with tempfile.TemporaryDirectory() as cache:
        for run in range(options.runs):
            for mode in modes if run % 2 == 0 else modes[::-1]:  # alternate the order: drift cancels
                started = time.monotonic()
                result = judge_baseline(sets, options.sandbox, Path(cache), mode)
                assert result.verdict.value == "AC", result.message
                for case in result.cases:
                    if case.ratio is not None:
                        ratios[mode].setdefault(case.name, []).append(case.ratio)
                scores[mode].append(result.score or 0.0)
                print(f"run {run + 1} guard {mode}: score {result.score:.2f} in {time.monotonic() - started:.1f} s",
                      flush=True)
    for mode in modes:
        summary(f"guard {mode}", ratios[mode], scores[mode])
    if len(modes) == 2:
        print(f"\n{'case':28} {'ratio on/off':>12}  (the baseline against itself; 1 = the guard costs nothing)")
        for name in ratios["on"]:
            quotient = statistics.fmean(ratios["on"][name]) / statistics.fmean(ratios["off"][name])
            print(f"{name:28} {quotient:12.4f}")
        on, off = statistics.fmean(scores["on"]), statistics.fmean(scores["off"])
        print(f"{'score on/off':28} {on / off:12.4f}")


if __name__ == "__main__":
    main()
