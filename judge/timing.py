"""The timing loop of one case (judging.md, "Timing").

Submission and baseline alternate (A B B A), each in its own runner child (see
judge/runner/baseline.py), so their ratio survives drift of the machine's speed; the ratio is
the median over pairs.
Every call, warm-up included, gets fresh inputs from a seed nobody can predict. One call in
every block of four, at a random position, is checked against the oracle after the call, and
each other call of the block is checked by chance too, so checked and unchecked calls look the
same to the kernel, checks cover the whole phase, and spotting one check (the oracle's pause)
says nothing sure about the next calls. Only timed calls count towards the spec's minimum
(at least 1 in 4 and at least 3 per case): timing goes on until they reach it.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import secrets
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from judge.checker import CallCheck, conduct, worst_checks
from judge.limits import Limits
from judge.problem import Case
from judge.results import OutputCheck, TimingStats
from judge.runner.session import CallOutcome
from judge.seeds import fresh_seed
from judge.verdict import Verdict

SUBMISSION, BASELINE = "submission", "baseline"
log = logging.getLogger("opjudge.judge")
LATE_WRITE_PROBE_MS = 50  # judging.md anti-cheat: outputs re-read this long after return


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
    """judging.md: at least 1 in 4 timed calls, and at least 3 per case, checked."""
    wanted = max(limits.min_checked_calls, math.ceil(timed_calls * limits.check_fraction))
    return timing.timed_checked_calls >= wanted


def forged_timer(times: dict[str, list[int]], brackets: dict[str, list[int]]) -> str | None:
    """Why the submission's times cannot be real, or None.

    The child times each call; the worker brackets the same call on its own clock, which adds
    the message overhead: the same path, and so about the same gap, for both kernels. A kernel
    that reaches into the child's memory and moves the timer's readings shows as a gap much
    wider than the baseline's. The gaps are compared pair by pair (both calls of a pair meet
    the same load) and the median taken: to move its median time a forger must move most calls.
    The allowance (50 us, or 25 % of the call) bounds what a forger could still gain. An honest
    kernel's gap stays close to the baseline's, but not always within microseconds: on a loaded
    2-core host one child can wake up late for a whole case, so `time_case` times the case again
    before it believes this.
    """
    if not all(brackets[lib] and all(brackets[lib]) for lib in (SUBMISSION, BASELINE)):
        return None  # a session without brackets (tests, older children)
    gaps = {lib: [b - t for b, t in zip(brackets[lib], times[lib], strict=True)] for lib in (SUBMISSION, BASELINE)}
    wider = statistics.median(s - b for s, b in zip(gaps[SUBMISSION], gaps[BASELINE], strict=True))
    call_ns = statistics.median(brackets[SUBMISSION])
    allowance = max(FORGED_TIMER_MIN_NS, FORGED_TIMER_FRACTION * call_ns)
    if wider <= allowance:
        return None
    return (f"the kernel's calls took {call_ns / 1e3:.0f} us by the judge's own clock, but the timer inside "
            f"the runner saw {wider / 1e3:.0f} us less than the same path costs the baseline: the runner's "
            "timer was tampered with")


FORGED_TIMER_MIN_NS = 50_000
FORGED_TIMER_FRACTION = 0.25
# A case is timed this many times before its gap is called forged: a forger's gap is there every
# time, an honest kernel's late wake-ups on a loaded host are not.
FORGED_TIMER_ATTEMPTS = 3


def trusted(outcome: CallOutcome) -> CallOutcome:
    """The baseline's call with only its own failures left to check (return code, workspace,
    inputs). The thread, late-work and clock checks are for untrusted code; in the baseline's
    child, which no submission code reaches, a runtime thread that starts lazily at a later case
    (a new dtype, a new operator) would only make a spurious IE."""
    return dataclasses.replace(outcome, new_threads=0, busy_threads=0, late_writes=[], openmp_level=0,
                               bracket_ns=0)


def stats(samples_ns: list[int]) -> TimingStats:
    return TimingStats(
        median_ns=float(statistics.median(samples_ns)),
        mean_ns=float(statistics.fmean(samples_ns)),
        min_ns=float(min(samples_ns)),
        std_ns=float(statistics.pstdev(samples_ns)) if len(samples_ns) > 1 else 0.0,
        count=len(samples_ns),
    )


def paired_ratio(submission_ns: list[int], baseline_ns: list[int]) -> float:
    """Median over pairs of t_sub / t_base, each pair timed back to back.

    Steadier than a ratio of medians when the machine's speed comes and goes in
    bursts: both calls of a pair see the same conditions.
    """
    return float(statistics.median(s / b for s, b in zip(submission_ns, baseline_ns, strict=True) if b > 0))


def sem_ratio(samples_ns: list[int]) -> float:
    """Standard error of the mean over the mean."""
    if len(samples_ns) < 2:
        return math.inf
    mean = statistics.fmean(samples_ns)
    return statistics.stdev(samples_ns) / math.sqrt(len(samples_ns)) / mean if mean > 0 else math.inf


def below_physical_floor(flops: float, peak_flops: float, median_ns: float) -> bool:
    """judging.md: a time below the case's work at the device's peak rate is impossible."""
    return peak_flops > 0 and flops > 0 and median_ns < flops / peak_flops * 1e9


@dataclass
class CaseTiming:
    submission: TimingStats | None = None
    baseline: TimingStats | None = None
    ratio: float | None = None  # median of the pairs' t_sub / t_base (paired_ratio)
    failure: CallCheck | None = None  # the first failed call, if any
    checked_calls: int = 0  # warm-up, timed and top-up calls checked
    timed_checked_calls: int = 0
    outputs: dict[str, OutputCheck] = field(default_factory=dict)


Verify = Callable[[Case, int, CallOutcome], CallCheck]


class CallRunner(Protocol):
    """What timing needs of a runner child (RunnerSession, BaselineRunner)."""

    def set_case(self, case: Case, timeout_s: float) -> None: ...

    def call(self, lib: str, seed: int, *, timeout_s: float, recheck_ms: int = 0) -> CallOutcome: ...


def time_case(
    submission: CallRunner, baseline: CallRunner, case: Case, *, limits: Limits, verify: Verify,
    call_timeout_s: float, host_clock: bool = False, verify_baseline: Verify | None = None,
) -> CaseTiming:
    """Warm-up then timed calls, until the SEM target, the budget or the call cap is reached.

    With `host_clock` (the child times calls with the host's clock), the child's times are held
    against the worker's own bracket around each call (`forged_timer`); a case whose gap looks
    forged is timed again, and only a gap seen every time is a violation."""
    earlier = CaseTiming()  # the checks of attempts before this one count too
    for attempt in range(1, FORGED_TIMER_ATTEMPTS + 1):
        result, times, brackets = _timed_calls(submission, baseline, case, limits=limits, verify=verify,
                                               call_timeout_s=call_timeout_s, verify_baseline=verify_baseline)
        result.checked_calls += earlier.checked_calls
        result.outputs = worst_checks(earlier.outputs, result.outputs)
        if result.failure is not None:
            return result
        forged = forged_timer(times, brackets) if host_clock else None
        if forged is None:
            result.submission, result.baseline = stats(times[SUBMISSION]), stats(times[BASELINE])
            result.ratio = paired_ratio(times[SUBMISSION], times[BASELINE])
            return result
        log.warning("case %s, attempt %d of %d: %s", case.name, attempt, FORGED_TIMER_ATTEMPTS, forged)
        earlier = result
    result.failure = CallCheck(Verdict.SV, f"case {case.name}, timed {FORGED_TIMER_ATTEMPTS} times: {forged}")
    return result


def _timed_calls(
    submission: CallRunner, baseline: CallRunner, case: Case, *, limits: Limits, verify: Verify,
    call_timeout_s: float, verify_baseline: Verify | None = None,
) -> tuple[CaseTiming, dict[str, list[int]], dict[str, list[int]]]:
    """One timing of the case: the result so far (its failure, checks and worst outputs), and
    each kernel's times and the worker's brackets around them."""
    runners = {SUBMISSION: submission, BASELINE: baseline}
    for runner in runners.values():
        runner.set_case(case, timeout_s=call_timeout_s)
    result = CaseTiming()
    block = max(1, round(1 / limits.check_fraction))
    sampler = CheckSampler(block, limits.extra_check_probability)
    late_probe = CheckSampler(8)
    times: dict[str, list[int]] = {SUBMISSION: [], BASELINE: []}
    brackets: dict[str, list[int]] = {SUBMISSION: [], BASELINE: []}

    pairs_done = 0
    checking_s = 0.0  # spent in the oracle's checks: not part of the case's timing budget

    def pair(record: bool) -> bool:
        nonlocal pairs_done, checking_s
        # A B B A: alternating which goes first cancels any bias of call order.
        order = (SUBMISSION, BASELINE) if pairs_done % 2 == 0 else (BASELINE, SUBMISSION)
        pairs_done += 1
        for lib in order:
            seed = fresh_seed()
            probe = lib == SUBMISSION and late_probe.next()
            outcome = runners[lib].call(lib, seed, timeout_s=call_timeout_s,
                                        recheck_ms=LATE_WRITE_PROBE_MS if probe else 0)
            check = conduct(case, outcome if lib == SUBMISSION else trusted(outcome), limits.workspace_limit_bytes)
            if lib == SUBMISSION and check.verdict is Verdict.AC and sampler.next():
                verify_started = time.monotonic()
                check = verify(case, seed, outcome)
                checking_s += time.monotonic() - verify_started
                result.checked_calls += 1
                result.timed_checked_calls += record
                result.outputs = worst_checks(result.outputs, check.outputs)
            if lib == BASELINE and check.verdict is Verdict.AC and verify_baseline is not None:
                check = verify_baseline(case, seed, outcome)  # its first call of the case (baseline_check.py)
            if check.verdict is not Verdict.AC:
                if lib == BASELINE:  # its own child, out of the submission's reach: the judge's fault
                    check = CallCheck(Verdict.IE, f"the baseline failed on case {case.name}: {check.message}")
                result.failure = check
                return False
            if record:
                times[lib].append(outcome.elapsed_ns)
                brackets[lib].append(outcome.bracket_ns)
        return True

    started, warm = time.monotonic(), 0
    while warm < limits.min_warmup_calls or time.monotonic() - started < limits.min_warmup_s:
        if not pair(record=False):
            return result, times, brackets
        warm += 1
    started, checking_s = time.monotonic(), 0.0
    sampler = CheckSampler(block, limits.extra_check_probability)  # blocks line up with the timed calls
    while len(times[SUBMISSION]) < limits.max_timed_calls:
        if not pair(record=True):
            return result, times, brackets
        count = len(times[SUBMISSION])
        if count < limits.min_timed_calls or not _enough_timed_checks(result, count, limits):
            continue
        precise = all(sem_ratio(t) < limits.target_sem_ratio for t in times.values())
        if precise or time.monotonic() - started - checking_s > limits.case_time_budget_s:
            break
    # Only when the call cap cut the last block short: checked calls after the timing.
    while result.checked_calls < limits.min_checked_calls:
        seed = fresh_seed()
        outcome = submission.call(SUBMISSION, seed, timeout_s=call_timeout_s)
        check = conduct(case, outcome, limits.workspace_limit_bytes)
        if check.verdict is Verdict.AC:
            check = verify(case, seed, outcome)
        result.checked_calls += 1
        if check.verdict is not Verdict.AC:
            result.failure = check
            return result, times, brackets
    return result, times, brackets
