"""The timing phase of a run: every timed case, then more pairs where the ratio is least certain.

Each case first gets `FIRST_PASS_SHARE` of its timing budget (judge/case_timing.py stops it earlier
once its paired ratio is precise enough); what the cases leave of their budgets together is then
spent in rounds on the case where a round takes most off the score's variance (its ratio's
interval times the score's slope there, per second spent: `_uncertainty`), resuming its series.
The score is a mean over cases, so its spread comes from the least certain ones. The host's load
over the phase and where its time went are recorded with the result (judge/hostload.py).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from judge import hostload
from judge.baseline_trust import BASELINE_KERNEL, BaselineNames, first_call_verifier
from judge.call_check import CallCheck, OracleChecker, worst_checks
from judge.case_timing import BASELINE, SUBMISSION, CaseTiming, below_physical_floor, time_case
from judge.host_config import HostConfig
from judge.idle_watch import tree_cpu_ns
from judge.problem import Case
from judge.results import CaseResult, JudgeResult
from judge.runner.baseline_session import BaselineRunner
from judge.runner.calls import CallOutcome
from judge.runner.session import RunnerSession
from judge.scoring import score_half_width_percent, score_slope
from judge.verdict import Verdict

log = logging.getLogger("opjudge.judge")

# The first timed case warms up this many times longer: the baseline's child has been idle since
# it started, and the first case after an idle spell must time like the next one.
FIRST_CASE_WARMUP_FACTOR = 4
FIRST_PASS_SHARE = 0.75  # of each case's budget in the first pass; the rest goes where it is needed
MIN_ROUND_S = 0.25  # a round of the second pass is at least this long, or a quarter budget (it warms up again)


@dataclass
class TimingPhase:
    session: RunnerSession
    baseline: BaselineRunner
    checker: OracleChecker
    host: HostConfig
    runtime_options: dict[str, Any]
    host_clock: bool
    baseline_names: BaselineNames | None = None  # which baseline times a case (judge/baseline_trust.py)

    def __post_init__(self) -> None:
        checker, timeout_s = self.checker, self.host.limits.call_time_limit_s
        current = self._current = {"baseline": self.baseline}  # `use` swaps the pair

        def check_baseline(case: Case, seed: int, outcome: CallOutcome) -> CallCheck:
            checker.prefetch(case, seed, cacheable=False)  # beside the fetch: the call is over (`verify`)
            outputs = current["baseline"].fetch_outputs(timeout_s)
            # after_kernel False: inputs that differ are the judge's fault (IE), never the team's.
            return checker.check(case, seed, outcome, outputs, cacheable=False, after_kernel=False)

        # A closure over the parts, not over self: no cycle keeps the children's pipes alive.
        self.verify_baseline = first_call_verifier(check_baseline, self.baseline_names or (lambda c: BASELINE_KERNEL))
        self.use(self.session, self.baseline)

    def use(self, session: RunnerSession, baseline: BaselineRunner) -> None:
        """Time the next calls in this pair of children (judge/timing_children.py)."""
        self.session, self.baseline = session, baseline
        self._current["baseline"] = baseline
        if self.host_clock:  # both children's CPU time outside each call's bracket (judge/idle_watch.py)
            for child in (session, getattr(baseline, "session", None)):
                if child is not None:
                    child.meter_cpu = True

    def verify(self, case: Case, seed: int, outcome: CallOutcome) -> CallCheck:
        # The call has ended: the worker's inputs and truth are made while the child sends its outputs,
        # and `check` waits for them, so nothing of the check runs on into the next timed call.
        self.checker.prefetch(case, seed, cacheable=False)
        outputs = self.session.fetch_outputs(self.host.limits.call_time_limit_s)
        return self.checker.check(case, seed, outcome, outputs, cacheable=False,
                                  after_kernel=self.session.kernel_calls > 1)

    def time(self, case: Case, *, budget_s: float, warmup_s: float, earlier: CaseTiming | None = None) -> CaseTiming:
        limits = self.host.limits
        session = self.session
        return time_case(self.session, self.baseline, case, limits=limits, verify=self.verify,
                         call_timeout_s=limits.call_time_limit_s, host_clock=self.host_clock, budget_s=budget_s,
                         warmup_s=warmup_s, earlier=earlier, verify_baseline=self.verify_baseline,
                         # The host-clock track (CPU) only: a device runtime's own threads (driver, log
                         # and queue threads) have not been measured idle on a device yet.
                         submission_cpu_ns=(lambda: tree_cpu_ns(getattr(session, "process_id", None)))
                         if self.host_clock else None)


def time_cases(phase: TimingPhase, timed: list[tuple[CaseResult, Case]], result: JudgeResult, *,
               before_case: Callable[[Case], bool], after_case: Callable[[Case], None]) -> None:
    """Time every case (stopping at the first that fails), then spend the budget left over.
    `before_case` says whether the case is timed in children started for it (judge/timing_children.py),
    which warm up as long as the first case's."""
    limits = phase.host.limits
    load_before, cpu_before = hostload.load_average(), hostload.cpu_times()
    timings: list[tuple[CaseTiming, CaseResult, Case]] = []
    for index, (case_result, case) in enumerate(timed):
        fresh = before_case(case)
        warmup_s = limits.min_warmup_s * (FIRST_CASE_WARMUP_FACTOR if index == 0 or fresh else 1)
        timing = phase.time(case, budget_s=limits.case_time_budget_s * FIRST_PASS_SHARE, warmup_s=warmup_s)
        timings.append((timing, case_result, case))
        _record(phase, timing, case_result, case, checked_before=0)
        after_case(case)
        if not case_result.passed:
            break  # the verdict stands; later cases could only hide it (e.g. behind an IE)
    if all(r.passed for _, r, _ in timings):
        _second_pass(phase, timings, before_case)
    widths = _score_half_widths(timings)
    figures, disturbed = hostload.describe(
        load_before=load_before, before=cpu_before, after=hostload.cpu_times(), score_half_widths=widths,
        baseline_spreads=[hostload.spread_percent(t.baseline.std_ns, t.baseline.mean_ns)
                          for t, _, _ in timings if t.baseline is not None])
    # The public and the private cases are timed in two phases (two children): the score's
    # interval of each set is kept; the other figures are the last phase's.
    earlier = hostload.parse_widths(result.host.get(hostload.SCORE_WIDTH_KEY, ""))
    figures[hostload.SCORE_WIDTH_KEY] = hostload.format_widths({**earlier, **widths})
    result.host.update(figures)
    if disturbed:
        result.conditions = replace(result.conditions, disturbed=disturbed)
    result.timing_profile_s = _profile_seconds([t for t, _, _ in timings])


def _score_half_widths(timings: list[tuple[CaseTiming, CaseResult, Case]]) -> dict[str, float]:
    """Each timed set's score interval, in % of the score, from its cases' ratio intervals."""
    by_set: dict[str, list[tuple[float, float]]] = {}
    for timing, _, case in timings:
        if timing.ratio:
            by_set.setdefault(case.case_set.value, []).append((timing.ratio, timing.ratio_half_width))
    return {name: score_half_width_percent(cases) for name, cases in by_set.items()}


def _second_pass(phase: TimingPhase, timings: list[tuple[CaseTiming, CaseResult, Case]],
                 before_case: Callable[[Case], bool]) -> None:
    """Rounds on the least certain case until the budget the cases left is spent."""
    limits = phase.host.limits
    left = sum(limits.case_time_budget_s - t.spent_s for t, _, _ in timings)
    min_round = min(MIN_ROUND_S, limits.case_time_budget_s / 4)
    while left >= min_round:
        open_cases = [entry for entry in timings if entry[0].ratio_half_width >= limits.target_sem_ratio
                      and len(entry[0].series.brackets[SUBMISSION]) < limits.max_timed_calls]
        if not open_cases:
            return
        timing, case_result, case = max(open_cases, key=lambda e: _uncertainty(e[0]))
        before_case(case)
        spent, checked = timing.spent_s, timing.checked_calls
        phase.time(case, budget_s=max(min_round, min(left, limits.case_time_budget_s / 2)),
                   warmup_s=limits.min_warmup_s, earlier=timing)
        _record(phase, timing, case_result, case, checked_before=checked)
        left -= max(timing.spent_s - spent, min_round / 4)
        if not case_result.passed:
            return


def _uncertainty(timing: CaseTiming) -> float:
    """What one more round on the case takes off the score's variance, per second: the score is a
    mean over cases, each case's share of its variance is (score slope x the ratio's relative
    half-width)^2, and that falls as 1 / pairs, i.e. as 1 / the seconds spent on the case."""
    if not math.isfinite(timing.ratio_half_width) or not timing.ratio:
        return 1e9
    points = score_slope(timing.ratio) * timing.ratio_half_width
    return points**2 / max(timing.spent_s, 1e-3)


def _record(phase: TimingPhase, timing: CaseTiming, case_result: CaseResult, case: Case, *,
            checked_before: int) -> None:
    """The case's result from its timing so far (a second round overwrites the first's figures)."""
    case_result.checked_calls += timing.checked_calls - checked_before
    case_result.outputs = worst_checks(case_result.outputs, timing.outputs)
    if timing.failure is not None:
        case_result.passed = False
        case_result.verdict, case_result.message = timing.failure.verdict, timing.failure.message
        return
    assert timing.submission is not None and timing.baseline is not None
    gap_ns = timing.series.timer_gap_ns()
    if phase.host_clock and abs(gap_ns) > 0.1 * timing.submission.median_ns:
        log.warning("case %s: the gap between the worker's clock and the runner's own timer is %+.0f us wider "
                    "for the submission than for the baseline (a moved timer or a disturbed host; a diagnostic "
                    "only: the worker's clock is the one used)", case.name, gap_ns / 1e3)
    case_result.timing, case_result.baseline_timing = timing.submission, timing.baseline
    case_result.launches = timing.series.launches.get(SUBMISSION)
    case_result.baseline_launches = timing.series.launches.get(BASELINE)
    case_result.ratio = timing.ratio
    if case_result.flops:
        case_result.gflops = case_result.flops / timing.submission.median_ns
    if case_result.min_bytes:
        case_result.gbytes_per_s = case_result.min_bytes / timing.submission.median_ns
    options = phase.runtime_options
    by_dtype = options.get("peak_flops_by_dtype") or {}
    peak = float(by_dtype.get(case.dtype) or options.get("peak_flops") or 0.0)
    # Held against the worker's clock with no overhead taken off: only a time that even the bracket
    # around the call (which holds the call) undercuts is impossible, however noisy the host.
    if below_physical_floor(case_result.flops, peak, timing.floor_ns):
        case_result.passed, case_result.verdict = False, Verdict.SV
        case_result.message = (f"case {case.name}: {timing.floor_ns:.0f} ns is faster than the "
                               "hardware allows for this much work")


def _profile_seconds(timings: list[CaseTiming]) -> dict[str, float]:
    """Where the timing phase's time went, summed over its cases (bench/ranking_fidelity.py)."""
    total: dict[str, float] = {}
    for timing in timings:
        for name, ns in timing.profile_ns.items():
            total[name] = total.get(name, 0.0) + ns / 1e9
    total["timed_pairs"] = float(sum(len(t.series.brackets[SUBMISSION]) for t in timings))
    return total
