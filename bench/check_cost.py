"""The worker's cost of one timed call's check, step by step, per timed CPU case.

    .venv/bin/python bench/check_cost.py [--checks 12] [--problem sparse_flash_attention_grad]

A check in the timing phase (judge/timing_phase.py, `verify`) makes the call's inputs again, G and R
(judge/call_check.py) and applies the pass rule to outputs fetched from the child. Here the outputs
are R (or G rounded to float32 where there is no R), the fetch is left out, and each check gets a
fresh seed, as in a judging. Printed per case: the mean wall ms of the whole check with the checker's
side thread (R beside G, half the metrics' chunks beside the rest: where the host has two cores or
more) and without it ("alone"), taken in turns, and of its steps measured apart (inputs, G, R, the
pass rule), with the worker's settings (one oracle thread). The host's load moves every figure:
compare columns of one run, or two commits run in one sitting.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import time
from collections.abc import Callable, Iterator

import torch

from judge.backends import Backend, CaseSet
from judge.call_check import OracleChecker
from judge.determinism import set_deterministic
from judge.fingerprint import fingerprint
from judge.problem import load_problem, make_inputs
from judge.runner.calls import CallOutcome


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--problem", default="sparse_flash_attention_grad")
    parser.add_argument("--checks", type=int, default=12, help="checks per case (fresh seeds)")
    options = parser.parse_args()
    set_deterministic(True, warn_only=True)  # as the worker does for the CPU track (pipeline)
    problem = load_problem(options.problem)
    module = problem.module
    cases = problem.cases_for(Backend.CPU, [CaseSet.BENCHMARKS, CaseSet.PRIVATE])
    print(f"load average {os.getloadavg()[0]:.2f}; ms per check (mean over {options.checks})")
    print(f"{'case':22} {'check':>7} {'alone':>7} {'inputs':>7} {'G':>7} {'R':>7} {'rule':>7}")
    totals: dict[str, list[float]] = {"check": [], "alone": []}
    for case in cases:
        checker, alone = OracleChecker(problem, oracle_threads=1), OracleChecker(problem, oracle_threads=1)
        if alone._side is not None:
            alone._side.shutdown()
            alone._side = None
        steps: dict[str, list[float]] = {k: [] for k in ("check", "alone", "inputs", "G", "R", "rule")}
        try:
            for seed in range(1000, 1000 + options.checks):
                inputs = make_inputs(module, case, seed, "cpu")
                digests = {k: fingerprint(v) for k, v in inputs.items() if isinstance(v, torch.Tensor)}
                outcome = CallOutcome(rc=0, elapsed_ns=1, digest_before=digests, digest_after=digests,
                                      new_threads=0, late_writes=[])
                with _one_thread():
                    oracle, reference = module.oracle(case, inputs), module.reference(case, inputs)
                outputs = reference if reference is not None else {k: v.float() for k, v in oracle.items()}
                turns = [("check", checker), ("alone", alone)]
                for name, which in turns if seed % 2 else turns[::-1]:  # each first in every other check
                    which._last = None  # made again, as for a fresh call
                    started = time.perf_counter()
                    verdict = which.check(case, seed, outcome, outputs, cacheable=False).verdict
                    steps[name].append(time.perf_counter() - started)
                    assert verdict.value == "AC", verdict
                with _one_thread():
                    steps["inputs"].append(_timed(make_inputs, module, case, seed + 7919, "cpu"))
                    steps["G"].append(_timed(module.oracle, case, inputs))
                    steps["R"].append(_timed(module.reference, case, inputs))
                    steps["rule"].append(_timed(module.check, case, outputs, oracle, reference))
        finally:
            checker.close()
            alone.close()
        means = {k: statistics.fmean(v) * 1e3 for k, v in steps.items()}
        for name, values in totals.items():
            values.append(means[name])
        print(f"{case.name:22} " + " ".join(f"{means[k]:7.1f}" for k in steps))
    print(f"mean check {statistics.fmean(totals['check']):.1f} ms, alone {statistics.fmean(totals['alone']):.1f} ms; "
          f"load average {os.getloadavg()[0]:.2f}")


def _timed(function: Callable[..., object], *args: object) -> float:
    started = time.perf_counter()
    function(*args)
    return time.perf_counter() - started


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    """One torch thread, as the worker's oracle has (Limits.oracle_threads)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


if __name__ == "__main__":
    main()
