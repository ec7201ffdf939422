"""The timing loop of one case (docs/rules.md, "Timing").

Submission and baseline alternate (A B B A), each in its own runner child (see
judge/runner/baseline_session.py), so their ratio survives drift of the machine's speed; the ratio is
the interquartile mean over pairs (`ratio_estimate`).
Every call, warm-up included, gets fresh inputs from a seed nobody can predict. One call in
every block of four, at a random position, is checked against the oracle after the call, and
each other call of the block is checked by chance too, so checked and unchecked calls look the
same to the kernel, checks cover the whole phase, and spotting one check (the oracle's pause)
says nothing sure about the next calls. Only timed calls count towards the spec's minimum
(at least 1 in 4 and at least 3 per case): timing goes on until they reach it.

On the CPU track (`host_clock`) a call's time is the worker's own clock around it (go -> the first
bytes of ran, the child reads every output page inside it) less that child's message overhead,
measured by an empty call after every timed pair: nothing in the child's address space, which the
kernel can reach, decides a time. The child's own reading is kept only as a diagnostic (`Series.timer_gap_ns`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import secrets
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from judge.call_check import CallCheck, conduct, worst_checks
from judge.idle_watch import BUSY_CALLS_SV, OutsideWatch, busy_during
from judge.limits import Limits
from judge.problem import Case
from judge.ratio_stats import ratio_estimate, stats
from judge.results import OutputCheck, TimingStats
from judge.runner.session import CallOutcome
from judge.seeds import fresh_seed
from judge.verdict import Verdict

SUBMISSION, BASELINE = "submission", "baseline"
log = logging.getLogger("opjudge.judge")
LATE_WRITE_PROBE_MS = 50  # docs/rules.md anti-cheat: outputs re-read this long after return
# One submission call in every block of this many, at a secret position, gets the late-write probe.
# Its sleep is timing time (1 in 8 cost about 7 % of the sfag benchmarks' budget, 2026-12-02); a
# kernel that leaves work running after it returns must do so on every call to gain from it, and
# is probed several times in every case at 1 in 16 too.
LATE_WRITE_PROBE_BLOCK = 16
REWARM_CALLS = 1  # warm-up pairs, at least, of a case timed again (its first round had the full warm-up)


_CHANCE = secrets.SystemRandom()


class CheckSampler:
    """One checked call per block of `block` calls at a secret position; each other call of the
    block is checked with probability `extra`."""

    def __init__(self, block: int, extra: float = 0.0) -> None:
        self.block, self.extra = block, extra
        self.position = 0
        self.target = secrets.randbelow(block)

    def next(self) -> bool:
        chosen = self.position == self.target or _CHANCE.random() < self.extra
        self.position += 1
        if self.position == self.block:
            self.position, self.target = 0, secrets.randbelow(self.block)
        return chosen


def _enough_timed_checks(timing: CaseTiming, timed_calls: int, limits: Limits) -> bool:
    """docs/rules.md: at least 1 in 4 timed calls, and at least 3 per case, checked."""
    wanted = max(limits.min_checked_calls, math.ceil(timed_calls * limits.check_fraction))
    return timing.timed_checked_calls >= wanted


def trusted(outcome: CallOutcome) -> CallOutcome:
    """The baseline's call with only its own failures left to check (return code, workspace,
    inputs). The thread, late-work and clock checks are for untrusted code; in the baseline's
    child, which no submission code reaches, a runtime thread that starts lazily at a later case
    (a new dtype, a new operator) would only make a spurious IE."""
    return dataclasses.replace(outcome, new_threads=0, busy_threads=0, late_writes=[], openmp_level=0,
                               bracket_ns=0)


def below_physical_floor(flops: float, peak_flops: float, median_ns: float) -> bool:
    """docs/rules.md: a time below the case's work at the device's peak rate is impossible."""
    return peak_flops > 0 and flops > 0 and median_ns < flops / peak_flops * 1e9


# A submission's child is charged at most the baseline's child's overhead plus this (or the
# baseline's own spread): its empty calls run in its own process, which the kernel can reach.
OVERHEAD_SLACK_NS = 10_000


@dataclass
class Series:
    """What one case's timing measured so far; a case timed again later goes on from here."""

    brackets: dict[str, list[int]] = field(default_factory=lambda: {SUBMISSION: [], BASELINE: []})
    child_ns: dict[str, list[int]] = field(default_factory=lambda: {SUBMISSION: [], BASELINE: []})
    empties: dict[str, list[int]] = field(default_factory=lambda: {SUBMISSION: [], BASELINE: []})
    # The most kernel launches one timed call made, where the clock counts them (NPU device timing).
    launches: dict[str, int] = field(default_factory=dict)

    def overheads(self) -> dict[str, int]:
        """Each child's message overhead: the median of its empty calls' brackets. The submission's
        is capped at the baseline's plus `OVERHEAD_SLACK_NS` or the spread (interquartile range) of
        the baseline's own empty calls, whichever is more: a kernel that slows its own child's
        empty calls gains at most that, and an honest child is not charged for the two children's
        medians parting by chance on a loaded host (where the run is marked disturbed anyway)."""
        empties = self.empties
        base = int(statistics.median(empties[BASELINE])) if empties[BASELINE] else 0
        own = int(statistics.median(empties[SUBMISSION])) if empties[SUBMISSION] else 0
        spread = 0
        if len(empties[BASELINE]) >= 4:
            q1, _, q3 = statistics.quantiles(empties[BASELINE], n=4)
            spread = int(q3 - q1)
        return {BASELINE: base, SUBMISSION: min(own, base + max(OVERHEAD_SLACK_NS, spread))}

    def times(self, host_clock: bool) -> dict[str, list[int]]:
        """Each kernel's call times: on a host clock the worker's bracket less the child's overhead
        (the child's own reading is within the kernel's reach); on a device its events' time."""
        if not host_clock:
            return self.child_ns
        overhead = self.overheads()
        return {lib: [max(1, b - overhead[lib]) for b in self.brackets[lib]] for lib in (SUBMISSION, BASELINE)}

    def ratios(self, host_clock: bool) -> list[float]:
        times = self.times(host_clock)
        return [s / b for s, b in zip(times[SUBMISSION], times[BASELINE], strict=True) if b > 0]

    def timer_gap_ns(self) -> float:
        """How much more the worker's clock saw than the child's, the submission's against the
        baseline's (median over pairs): a diagnostic of a moved timer or a disturbed host, no verdict."""
        gaps = [(bs - cs) - (bb - cb) for bs, cs, bb, cb in zip(
            self.brackets[SUBMISSION], self.child_ns[SUBMISSION], self.brackets[BASELINE], self.child_ns[BASELINE],
            strict=True)]
        return float(statistics.median(gaps)) if gaps else 0.0


@dataclass
class CaseTiming:
    submission: TimingStats | None = None
    baseline: TimingStats | None = None
    ratio: float | None = None  # interquartile mean of the pairs' t_sub / t_base (ratio_estimate)
    ratio_half_width: float = math.inf  # relative half-width of the ratio's 95 % interval
    floor_ns: float = 0.0  # the submission's median with no overhead taken off: for the physical floor
    failure: CallCheck | None = None  # the first failed call, if any
    checked_calls: int = 0  # warm-up, timed and top-up calls checked
    timed_checked_calls: int = 0
    outputs: dict[str, OutputCheck] = field(default_factory=dict)
    series: Series = field(default_factory=Series)
    spent_s: float = 0.0  # timing time used on the case, the oracle's checks left out
    profile_ns: dict[str, int] = field(default_factory=dict)  # where the phase's time went (see _Profile)

    def conclude(self, host_clock: bool) -> None:
        times = self.series.times(host_clock)
        self.submission, self.baseline = stats(times[SUBMISSION]), stats(times[BASELINE])
        self.ratio, self.ratio_half_width = ratio_estimate(self.series.ratios(host_clock))
        raw = self.series.brackets[SUBMISSION] if host_clock else times[SUBMISSION]
        self.floor_ns = float(statistics.median(raw))


Verify = Callable[[Case, int, CallOutcome], CallCheck]


class CallRunner(Protocol):
    """What timing needs of a runner child (RunnerSession, BaselineRunner)."""

    def set_case(self, case: Case, timeout_s: float) -> None: ...

    def call(self, lib: str, seed: int, *, timeout_s: float, recheck_ms: int = 0) -> CallOutcome: ...

    def begin(self, lib: str, seed: int, *, recheck_ms: int = 0, hold: bool = False,
              hold_report: bool = False) -> None: ...

    def await_prepared(self, timeout_s: float) -> None: ...

    def run(self, timeout_s: float, at_armed: Callable[[], None] | None = None) -> None: ...

    def report(self, timeout_s: float) -> CallOutcome: ...

    def empty_call(self, timeout_s: float) -> int: ...


def _profile(profile: dict[str, int], outcome: CallOutcome) -> None:
    """Add one call to the breakdown: the child's steps, and the worker's clock for the rest
    (messages, the worker's waits)."""
    for name, ns in outcome.phases_ns.items():
        profile[name] = profile.get(name, 0) + ns
    if outcome.settle_ns:
        profile["settle"] = profile.get("settle", 0) + outcome.settle_ns
    unaccounted = outcome.worker_ns - sum(outcome.phases_ns.values()) - outcome.settle_ns
    if outcome.worker_ns and outcome.phases_ns:
        profile["messages"] = profile.get("messages", 0) + max(0, unaccounted)


def time_case(
    submission: CallRunner, baseline: CallRunner, case: Case, *, limits: Limits, verify: Verify,
    call_timeout_s: float, host_clock: bool = False, budget_s: float | None = None,
    warmup_s: float | None = None, earlier: CaseTiming | None = None, verify_baseline: Verify | None = None,
    submission_cpu_ns: Callable[[], int] | None = None,
) -> CaseTiming:
    """Warm-up, then timed pairs until the paired ratio is precise enough (`limits.target_sem_ratio`
    as the relative half-width of its 95 % interval), the budget is spent or the call cap is reached.

    With `host_clock` each call is timed by the worker's own clock around it less the child's
    message overhead, measured by an empty call on each child after every timed pair. With
    `earlier`, the case is timed again from where that timing stopped (more pairs for a case
    whose ratio is least certain).

    `submission_cpu_ns` reads the submission's process tree's CPU time from outside it
    (judge/idle_watch.py): around every baseline call it must stay idle, or the case is SV."""
    result = earlier or CaseTiming()
    result.failure = None
    runners = {SUBMISSION: submission, BASELINE: baseline}
    for runner in runners.values():
        runner.set_case(case, timeout_s=call_timeout_s)
    block = max(1, round(1 / limits.check_fraction))
    sampler = CheckSampler(block, limits.extra_check_probability)
    late_probe = CheckSampler(LATE_WRITE_PROBE_BLOCK)
    series, profile = result.series, result.profile_ns
    pairs_done = 0
    checking_s = 0.0  # spent in the oracle's checks: not part of the case's timing budget
    busy_calls: list[int] = []  # the submission's CPU ns during each baseline call it was not idle in
    outside = OutsideWatch(limits.workspace_limit_bytes)  # CPU time outside the brackets (idle_watch.py)

    def pair(record: bool) -> bool:
        nonlocal pairs_done, checking_s
        # A B B A: alternating which goes first cancels any bias of call order.
        order = (SUBMISSION, BASELINE) if pairs_done % 2 == 0 else (BASELINE, SUBMISSION)
        pairs_done += 1
        seeds = {lib: fresh_seed() for lib in order}
        probe = late_probe.next()  # the submission's call of this pair
        outcomes, used = _run_pair(runners, order, seeds, call_timeout_s,
                                   recheck_ms=LATE_WRITE_PROBE_MS if probe else 0, submission_cpu_ns=submission_cpu_ns)
        if submission_cpu_ns is not None:
            if busy_during(used, outcomes[BASELINE].bracket_ns):
                busy_calls.append(used)
            if len(busy_calls) >= BUSY_CALLS_SV:
                result.failure = CallCheck(Verdict.SV, (
                    f"case {case.name}: your process used the CPU while the baseline was being timed "
                    f"({len(busy_calls)} of its calls, up to {max(busy_calls) / 1e6:.1f} ms each): a runner must "
                    "do nothing between its calls (no threads left working after kernel_run returns)"))
                return False
        for lib in order:
            seed, outcome = seeds[lib], outcomes[lib]
            probed = probe and lib == SUBMISSION
            outside.record(lib, outcome.outside_cpu_ns, helper_ns=outcome.after_helper_cpu_ns, probed=probed,
                           workspace_bytes=outcome.workspace_bytes)
            if message := outside.sv_message(case.name):
                result.failure = CallCheck(Verdict.SV, message)
                return False
            _profile(profile, outcome)
            check = conduct(case, outcome if lib == SUBMISSION else trusted(outcome), limits.workspace_limit_bytes)
            if lib == SUBMISSION and check.verdict is Verdict.AC and sampler.next():
                verify_started = time.monotonic()
                check = verify(case, seed, outcome)
                checking_s += time.monotonic() - verify_started
                profile["checks"] = profile.get("checks", 0) + int((time.monotonic() - verify_started) * 1e9)
                result.checked_calls += 1
                result.timed_checked_calls += record
                result.outputs = worst_checks(result.outputs, check.outputs)
            if lib == BASELINE and check.verdict is Verdict.AC and verify_baseline is not None:
                verify_started = time.monotonic()
                check = verify_baseline(case, seed, outcome)  # its first call of the case (baseline_trust.py)
                checking_s += time.monotonic() - verify_started
            if check.verdict is not Verdict.AC:
                if lib == BASELINE:  # its own child, out of the submission's reach: the judge's fault
                    check = CallCheck(Verdict.IE, f"the baseline failed on case {case.name}: {check.message}")
                result.failure = check
                return False
            if record:
                series.brackets[lib].append(outcome.bracket_ns)
                series.child_ns[lib].append(outcome.elapsed_ns)
                if outcome.launches >= 0:
                    series.launches[lib] = max(series.launches.get(lib, 0), outcome.launches)
        if record and host_clock:
            empty_started = time.perf_counter_ns()
            for lib in reversed(order):
                series.empties[lib].append(runners[lib].empty_call(call_timeout_s))
            profile["empty_calls"] = profile.get("empty_calls", 0) + time.perf_counter_ns() - empty_started
        return True

    # A case timed again (`earlier`) had its whole warm-up in its first round: one pair and the
    # time floor warm it again (docs/rules.md, "Timing"; 8 s of a full judge's 41 s were warm-ups
    # on a host whose flush takes 76 ms, docs/benchmarks.md "Cheaper flushes tried").
    min_calls = REWARM_CALLS if earlier is not None else limits.min_warmup_calls
    if not _warm_up(pair, min_calls, limits.min_warmup_s if warmup_s is None else warmup_s):
        return result
    started, checking_s = time.monotonic(), 0.0
    sampler = CheckSampler(block, limits.extra_check_probability)  # blocks line up with the timed calls
    budget = limits.case_time_budget_s if budget_s is None else budget_s
    spent_before = result.spent_s
    while len(series.brackets[SUBMISSION]) < limits.max_timed_calls:
        if not pair(record=True):
            return result
        result.spent_s = spent_before + time.monotonic() - started - checking_s
        count = len(series.brackets[SUBMISSION])
        if count < limits.min_timed_calls or not _enough_timed_checks(result, count, limits):
            continue
        precise = ratio_estimate(series.ratios(host_clock))[1] < limits.target_sem_ratio
        if precise or time.monotonic() - started - checking_s > budget:
            break
    if outside.reference:
        log.info("case %s: CPU outside the brackets %s", case.name, outside.figures())
    if excess := outside.steady_excess_ns():  # a diagnostic: too noisy to decide (idle_watch.py)
        log.warning("case %s: the submission's CPU time outside the brackets passed the baseline's by %.1f ms "
                    "more than the case-level allowance (%s)", case.name, excess / 1e6, outside.figures())
    if message := outside.sv_message(case.name, case_over=True):
        result.failure = CallCheck(Verdict.SV, message)
        return result
    if not _top_up_checks(submission, case, result, limits, verify, call_timeout_s):
        return result
    result.conclude(host_clock)
    return result


def _run_pair(runners: dict[str, CallRunner], order: tuple[str, str], seeds: dict[str, int], timeout_s: float, *,
              recheck_ms: int, submission_cpu_ns: Callable[[], int] | None) -> tuple[dict[str, CallOutcome], int]:
    """Both children prepare their calls at once (inputs made and placed: the host's other CPU
    does the second child's share), then the two calls run back to back, each child armed (its
    caches flushed) only once the other is idle: the first child holds its after-call checks until
    the second call has run, and the two children then check and report at once. Calls close in
    time see more of the same host: measured on a 2-vCPU VM, two calls 4 ms apart correlate about
    0.6, 20 ms apart 0.25 (docs/benchmarks.md, "Where a score's spread comes from"), and the ratio
    keeps what they share out. Returns each call's outcome and the submission's CPU time during the
    baseline's call, from its "armed" to its "ran" (judge/idle_watch.py; 0 unmetered). Whatever
    fails, neither child is left holding a call."""
    outcomes: dict[str, CallOutcome] = {}
    busy_ns = 0
    try:
        for lib in order:
            runners[lib].begin(lib, seeds[lib], recheck_ms=recheck_ms if lib == SUBMISSION else 0, hold=True,
                               hold_report=lib == order[0])
        for lib in order:
            runners[lib].await_prepared(timeout_s)
        for lib in order:
            if lib == BASELINE and submission_cpu_ns is not None:
                # From the baseline's "armed" (its flush done) to its "ran": the timed call, which a
                # helper thread of the submission would slow. Not from the arm command: the first
                # child of a pair digests its outputs right after its own "ran", while the second
                # flushes, and 16 MiB of them cost an honest kernel 3 ms there on a loaded CI host.
                marks: list[int] = []  # none where the child refused the call (no call ran)
                runners[lib].run(timeout_s, at_armed=lambda marks=marks: marks.append(submission_cpu_ns()))
                busy_ns = submission_cpu_ns() - marks[-1] if marks else 0
            else:
                runners[lib].run(timeout_s)
        for lib in order:
            outcomes[lib] = runners[lib].report(timeout_s)
    finally:
        for lib in order:
            if lib not in outcomes:
                with contextlib.suppress(Exception):  # the first failure is the one raised
                    runners[lib].report(timeout_s)
    return outcomes, busy_ns


def _warm_up(pair: Callable[[bool], bool], min_calls: int, warmup_s: float) -> bool:
    """docs/rules.md: at least `min_calls` pairs and `warmup_s`, prepared like timed calls."""
    started, warm = time.monotonic(), 0
    while warm < min_calls or time.monotonic() - started < warmup_s:
        if not pair(False):
            return False
        warm += 1
    return True


def _top_up_checks(submission: CallRunner, case: Case, result: CaseTiming, limits: Limits, verify: Verify,
                   call_timeout_s: float) -> bool:
    """Only when the call cap cut the last block short: checked calls after the timing."""
    while result.checked_calls < limits.min_checked_calls:
        seed = fresh_seed()
        outcome = submission.call(SUBMISSION, seed, timeout_s=call_timeout_s)
        check = conduct(case, outcome, limits.workspace_limit_bytes)
        if check.verdict is Verdict.AC:
            check = verify(case, seed, outcome)
        result.checked_calls += 1
        if check.verdict is not Verdict.AC:
            result.failure = check
            return False
    return True
