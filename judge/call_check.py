"""Checks one call of the submission against the oracle, in the worker.

The worker regenerates the call's inputs from the seed it chose, so what the
oracle sees never passed through the submission's process.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

import torch

from judge.checking import beside
from judge.fingerprint import fingerprint
from judge.problem import Case, Problem, make_inputs
from judge.results import OutputCheck
from judge.runner.calls import CallOutcome
from judge.verdict import Verdict


@dataclass
class CallCheck:
    verdict: Verdict  # AC when the call was fine
    message: str = ""
    outputs: dict[str, OutputCheck] = field(default_factory=dict)


# The child's clock reading lies inside the worker's bracket; both are CLOCK_MONOTONIC, so only
# the rounding of two readings separates them.
CLOCK_SLACK_NS = 1_000


def conduct(case: Case, outcome: CallOutcome, workspace_limit: int) -> CallCheck:
    """The checks that need no oracle, in docs/rules.md's verdict order: SV (threads, late writes),
    MLE (workspace), RE (return code), WA (inputs)."""
    if outcome.bracket_ns and outcome.elapsed_ns > outcome.bracket_ns + CLOCK_SLACK_NS:
        return CallCheck(Verdict.SV, f"case {case.name}: the call's time ({outcome.elapsed_ns} ns) is longer than "
                         f"the judge's own clock around it ({outcome.bracket_ns} ns): the timer was tampered with")
    if outcome.tampering:
        return CallCheck(Verdict.SV, f"case {case.name}: after kernel_run returned, {'; '.join(outcome.tampering)}: "
                         "a kernel may not install signal handlers or change memory protections (work deferred "
                         "to the runner's first read of the outputs is work off the clock)")
    if outcome.openmp_level:
        return CallCheck(Verdict.SV, f"case {case.name}: kernel_run returned from inside an OpenMP parallel "
                         "region (it jumped out of it), leaving threads working after the call")
    if outcome.busy_threads:
        return CallCheck(Verdict.SV, f"case {case.name}: {outcome.busy_threads} thread(s) kept working after "
                         "kernel_run returned, while nothing was being judged; all work must finish inside the call")
    if outcome.new_threads:
        return CallCheck(Verdict.SV, f"case {case.name}: a thread the kernel started was still alive after "
                         "kernel_run returned; all work must finish inside the call")
    if outcome.late_writes:
        return CallCheck(Verdict.SV, f"case {case.name}: output {', '.join(outcome.late_writes)} changed after "
                         "kernel_run returned; all work must finish inside the call")
    if outcome.workspace_requested is not None:
        return CallCheck(Verdict.MLE, f"case {case.name}: kernel_workspace_bytes asked for "
                         f"{outcome.workspace_requested} bytes; at most {workspace_limit} are given")
    if outcome.rc != 0:
        return CallCheck(Verdict.RE, f"case {case.name}: kernel_run returned {outcome.rc} (0 means success)")
    changed = [k for k, v in outcome.digest_before.items() if outcome.digest_after.get(k) != v]
    if changed:
        return CallCheck(Verdict.WA, f"case {case.name}: kernel_run changed its input {', '.join(changed)}; "
                         "inputs are read-only")
    return CallCheck(Verdict.AC)


class OracleChecker:
    """Regenerates inputs, computes (or loads) the oracle and applies the problem's pass rule."""

    def __init__(self, problem: Problem, cache: Any | None = None, *, generation_device: str = "cpu",
                 oracle_device: str = "cpu", oracle_threads: int = 1) -> None:
        self.problem = problem
        self.module = problem.module
        self.cache = cache
        self.generation_device = generation_device  # where the child made the inputs: made again here
        self.oracle_device = oracle_device  # where G and R are computed
        self.oracle_threads = oracle_threads or len(os.sched_getaffinity(0))  # torch threads on the CPU
        self._last: tuple[tuple[str, object, int], dict[str, Any]] | None = None
        self.oracle_seconds = 0.0  # the worker's time in the oracle that no call of the child overlapped
        self._ahead: tuple[tuple[str, object, int], Future[tuple[dict[str, Any], Any]]] | None = None
        self._pool: ThreadPoolExecutor | None = None
        # R beside G, a thread each (`_truth`): a check runs while both children are idle between
        # calls (judge/idle_watch.py holds them to it), so a one-thread oracle leaves a core unused.
        self._side: ThreadPoolExecutor | None = None
        if oracle_device == "cpu" and self.oracle_threads == 1 and len(os.sched_getaffinity(0)) > 1:
            self._side = ThreadPoolExecutor(max_workers=1, thread_name_prefix="opjudge-reference")

    def prefetch(self, case: Case, seed: int, *, cacheable: bool) -> None:
        """Start the call's inputs and truth in a worker thread, to run while the child makes the same
        call: for untimed calls only (the correctness stage), whose time is nobody's score; or once a
        timed call has ended, beside the fetch of its outputs (judge/timing_phase.py). `check` of
        the same case and seed then waits for it; torch's kernels release the GIL, so on a host of
        two cores or more the oracle runs beside the call and its 150 ms look for late writes."""
        if self.oracle_device != "cpu" or self.generation_device != "cpu":
            return  # a device's memory holds the child's buffers now; its oracle waits for the call
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="opjudge-oracle")
        key = (case.name, case.case_set, seed)

        def prepare() -> tuple[dict[str, Any], Any]:
            inputs = make_inputs(self.module, case, seed, self.generation_device)
            return inputs, self._truth(case, seed, inputs, cacheable)

        self._ahead = (key, self._pool.submit(prepare))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        if self._side is not None:
            self._side.shutdown(wait=True)
            self._side = None

    def _prefetched(self, case: Case, seed: int) -> Any | None:
        """The truth `prefetch` made for this call (its inputs kept as the last ones), or None."""
        key = (case.name, case.case_set, seed)
        if self._ahead is None or self._ahead[0] != key:
            return None
        future, self._ahead = self._ahead[1], None
        started = time.monotonic()
        inputs, truth = future.result()  # its error, if any, is the one `check` would have raised
        self.oracle_seconds += time.monotonic() - started
        self._last = (key, inputs)
        return truth

    def inputs(self, case: Case, seed: int) -> dict[str, Any]:
        """The call's inputs, made again here; the last ones are kept, as the work count asks for them too."""
        key = (case.name, case.case_set, seed)
        if self._last is None or self._last[0] != key:
            self._last = (key, make_inputs(self.module, case, seed, self.generation_device))
        return self._last[1]

    def check(self, case: Case, seed: int, outcome: CallOutcome, outputs: dict[str, torch.Tensor], *,
              cacheable: bool, after_kernel: bool = False) -> CallCheck:
        """`after_kernel`: kernel_run has run in the child before this call."""
        truth = self._prefetched(case, seed)
        inputs = self.inputs(case, seed)
        mine = {k: fingerprint(v) for k, v in inputs.items() if isinstance(v, torch.Tensor)}
        if mine != outcome.digest_before:
            differ = ", ".join(sorted(k for k in mine.keys() | outcome.digest_before.keys()
                                      if mine.get(k) != outcome.digest_before.get(k)))
            if after_kernel and self.generation_device == "cpu":
                # One thread, the same code in both processes, and the child's first call matched:
                # only the kernel, changing the child's state between calls, makes them part.
                return CallCheck(Verdict.SV, f"case {case.name}: the runner's inputs {differ} differ from the "
                                 "judge's after the kernel had run: the kernel changed the runner's state between "
                                 "calls (its memory or its settings); a call must leave the process as it found it")
            return CallCheck(Verdict.IE, f"case {case.name}: the runner's inputs {differ} differ from "
                             "the judge's regeneration (non-deterministic generator, different numeric "
                             "settings in the two processes, or a tampered runner)")
        if truth is None:
            started = time.monotonic()
            truth = self._truth(case, seed, inputs, cacheable)
            self.oracle_seconds += time.monotonic() - started
        oracle, reference = truth
        missing = [name for name in oracle if name not in outputs]
        if missing:
            return CallCheck(Verdict.IE, f"case {case.name}: the runner sent no {', '.join(missing)}")
        # The pass rule runs where the oracle does: on a GPU host a benchmark case's outputs hold
        # ~10^8 elements, which the worker's CPU compares in tens of seconds, the GPU in a blink.
        outputs, oracle, reference = (_to(self.oracle_device, t) for t in (outputs, oracle, reference))
        # One torch thread, as the oracle (two threads on a busy 2-core host crawl); where there is a
        # side thread, half of each metric's chunks run there (judge/checking.py, `beside`).
        with _torch_threads(self.oracle_threads), beside(self._run_beside()):
            checks = self.module.check(case, outputs, oracle, reference)
        failed = [name for name, c in checks.items() if not c.passed]
        if failed:
            first = checks[failed[0]]
            return CallCheck(Verdict.WA, f"case {case.name}: output {failed[0]} is wrong: {first.reason}", checks)
        return CallCheck(Verdict.AC, "", checks)

    def _run_beside(self) -> Any:
        """How the pass rule's metrics put half their chunks on the side thread (None: no side thread)."""
        side = self._side
        if side is None:
            return None
        return lambda function, *args: side.submit(_on_one_thread, function, *args)

    def _truth(self, case: Case, seed: int, inputs: dict[str, Any], cacheable: bool) -> tuple[Any, Any]:
        def compute() -> tuple[Any, Any]:
            moved = {k: v.to(self.oracle_device) if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}
            side = self._side
            with _torch_threads(self.oracle_threads):
                # Left where they were computed: the check runs there too, and the cache stores CPU copies.
                if side is None:
                    return self.module.oracle(case, moved), self.module.reference(case, moved)
                # One torch thread each, so G and R are the very bits they are in sequence; both
                # are done before the check returns, so nothing runs on into the next timed call.
                reference = side.submit(_on_one_thread, self.module.reference, case, moved)
                try:
                    oracle = self.module.oracle(case, moved)
                except BaseException:
                    wait([reference])
                    raise
                return oracle, reference.result()

        if not cacheable or self.cache is None:
            return compute()
        key = [self.problem.slug, self.problem.definition_hash, case.name, case.dtype,
               json.dumps(case.params, sort_keys=True), list(case.flags), seed]
        return self.cache.get_or_compute(key, compute)


def _on_one_thread(function: Any, *args: Any) -> Any:
    """`function` on one torch thread, in a pool thread of the checker's own. torch's setting is the
    calling thread's under OpenMP (MKL's is the process's: the caller holds it at one meanwhile), and
    this thread does nothing else, so it is left at one."""
    torch.set_num_threads(1)
    return function(*args)


@contextlib.contextmanager
def _torch_threads(threads: int) -> Iterator[None]:
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def _to(device: str, tensors: dict[str, Any] | None) -> Any:
    return None if tensors is None else {k: v.to(device) if isinstance(v, torch.Tensor) else v
                                         for k, v in tensors.items()}


def worst_checks(current: dict[str, OutputCheck], new: dict[str, OutputCheck]) -> dict[str, OutputCheck]:
    """Per output, keep the check with the larger error (failures first)."""
    merged = dict(current)
    for name, check in new.items():
        old = merged.get(name)
        if old is None or (old.passed and not check.passed) or (
            old.passed == check.passed and check.max_abs_err > old.max_abs_err
        ):
            merged[name] = check
    return merged
