import dataclasses

import pytest

from judge.case_timing import CheckSampler
from judge.ratio_stats import stats


def test_sampler_checks_exactly_one_per_block():
    sampler = CheckSampler(4)
    picks = [sampler.next() for _ in range(400)]
    for block in range(100):
        assert sum(picks[block * 4 : block * 4 + 4]) == 1


def test_sampler_positions_vary():
    sampler = CheckSampler(4)
    positions = set()
    for _ in range(200):
        block = [sampler.next() for _ in range(4)]
        positions.add(block.index(True))
    assert positions == {0, 1, 2, 3}


def test_stats():
    s = stats([10, 20, 30, 40])
    assert (s.median_ns, s.mean_ns, s.min_ns, s.count) == (25, 25, 10, 4)


def test_physical_floor():
    from judge.case_timing import below_physical_floor

    # 1 GFLOP at 1 TFLOP/s takes at least 1 ms.
    assert below_physical_floor(1e9, 1e12, 0.9e6)
    assert not below_physical_floor(1e9, 1e12, 1.1e6)
    assert not below_physical_floor(1e9, 0.0, 1.0)  # no peak known: no floor


def test_sampler_with_extra_checks_keeps_one_per_block_and_adds_others():
    sampler = CheckSampler(4, extra=0.25)
    blocks = [[sampler.next() for _ in range(4)] for _ in range(400)]
    assert all(sum(b) >= 1 for b in blocks)
    assert 0.3 < sum(map(sum, blocks)) / 1600 < 0.5  # 1/4 + 3/4 * 1/4 = 0.4375 expected


class _SplitCalls:
    """A timed pair's calls as `time_case` makes them (begin, await_prepared, run, report), each made
    with the fake's own `call` when reported; `begun` records the order of the begins and
    `held_reports` the libraries whose report was held behind the other call."""

    def begin(self, lib, seed, *, recheck_ms=0, hold=False, hold_report=False):
        assert hold, "a timed pair's calls are held until both children have prepared"
        assert getattr(self, "_held", None) is None, "a call already under way"
        self._held = (lib, seed, recheck_ms)
        self.__dict__.setdefault("begun", []).append(lib)
        if hold_report:
            self.__dict__.setdefault("held_reports", []).append(lib)

    def await_prepared(self, timeout_s):
        assert self._held is not None

    def run(self, timeout_s, at_armed=None):
        assert self._held is not None
        if at_armed is not None:
            at_armed()

    def report(self, timeout_s):
        lib, seed, recheck_ms = self._held
        self._held = None
        return self.call(lib, seed, timeout_s=timeout_s, recheck_ms=recheck_ms)


class _ScriptedSession(_SplitCalls):
    """Stands in for the runner child: every call succeeds at a fixed time."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def set_case(self, case, timeout_s):
        pass

    def call(self, lib, seed, *, timeout_s, recheck_ms=0):
        from judge.runner.calls import CallOutcome

        self.calls.append(lib)
        return CallOutcome(rc=0, elapsed_ns=1000, digest_before={}, digest_after={}, new_threads=0, late_writes=[])


def _scripted_pair() -> tuple[_ScriptedSession, _ScriptedSession]:
    """The submission's and the baseline's children."""
    return _ScriptedSession(), _ScriptedSession()


def test_time_case_checks_a_quarter_of_the_timed_calls_and_at_least_three():
    from judge.backends import CaseSet
    from judge.call_check import CallCheck
    from judge.case_timing import time_case
    from judge.limits import Limits
    from judge.problem import Case
    from judge.verdict import Verdict

    case = Case(name="c", case_set=CaseSet.BENCHMARKS, dtype="float32", params={}, seed=1)
    for timed_calls in (10, 11, 13, 40):
        limits = Limits(min_timed_calls=timed_calls, max_timed_calls=1000, target_sem_ratio=1.0,
                        min_warmup_calls=7, min_warmup_s=0.0, extra_check_probability=0.0)
        for _ in range(20):
            checked: list[int] = []

            def verify(c, seed, outcome, checked=checked):
                checked.append(seed)
                return CallCheck(Verdict.AC)

            timing = time_case(*_scripted_pair(), case, limits=limits, call_timeout_s=1.0, verify=verify)
            n = timing.submission.count
            assert n >= timed_calls
            assert timing.timed_checked_calls >= max(3, -(-n // 4)), (n, timing.timed_checked_calls)
            assert timing.checked_calls == len(checked) >= timing.timed_checked_calls


def test_one_submission_call_in_every_block_gets_the_late_write_probe_and_no_baseline_call_does():
    from judge.backends import CaseSet
    from judge.call_check import CallCheck
    from judge.case_timing import LATE_WRITE_PROBE_BLOCK, LATE_WRITE_PROBE_MS, time_case
    from judge.limits import Limits
    from judge.problem import Case
    from judge.runner.calls import CallOutcome
    from judge.verdict import Verdict

    class Recording(_ScriptedSession):
        def __init__(self) -> None:
            super().__init__()
            self.rechecks: list[int] = []

        def call(self, lib, seed, *, timeout_s, recheck_ms=0):
            self.rechecks.append(recheck_ms)
            return CallOutcome(rc=0, elapsed_ns=1000, digest_before={}, digest_after={}, new_threads=0,
                               late_writes=[])

    case = Case(name="c", case_set=CaseSet.BENCHMARKS, dtype="float32", params={}, seed=1)
    blocks = 12
    # Warm-up and timed calls together make whole blocks: 4 warm-up pairs, the rest timed.
    timed = blocks * LATE_WRITE_PROBE_BLOCK - 4
    limits = Limits(min_timed_calls=timed, max_timed_calls=timed, target_sem_ratio=1.0, min_warmup_calls=4,
                    min_warmup_s=0.0, extra_check_probability=0.0)
    submission, baseline = Recording(), Recording()
    time_case(submission, baseline, case, limits=limits, call_timeout_s=1.0,
              verify=lambda c, seed, outcome: CallCheck(Verdict.AC))
    assert len(submission.rechecks) == blocks * LATE_WRITE_PROBE_BLOCK
    assert set(submission.rechecks) == {0, LATE_WRITE_PROBE_MS}
    for start in range(0, len(submission.rechecks), LATE_WRITE_PROBE_BLOCK):
        assert submission.rechecks[start : start + LATE_WRITE_PROBE_BLOCK].count(LATE_WRITE_PROBE_MS) == 1
    assert baseline.rechecks and set(baseline.rechecks) == {0}


def test_a_security_violation_outranks_a_bad_return_code():
    from judge.backends import CaseSet
    from judge.call_check import conduct
    from judge.problem import Case
    from judge.runner.calls import CallOutcome
    from judge.verdict import Verdict

    case = Case(name="c", case_set=CaseSet.TESTS, dtype="float32", params={}, seed=1)
    outcome = CallOutcome(rc=3, elapsed_ns=1, digest_before={}, digest_after={}, new_threads=1, late_writes=[])
    assert conduct(case, outcome, 1 << 20).verdict is Verdict.SV


def test_the_oracles_checks_do_not_use_up_the_timing_budget(monkeypatch):
    """A slow oracle must not cut the timed calls short: the budget is for timing."""
    from types import SimpleNamespace

    from judge import case_timing
    from judge.backends import CaseSet
    from judge.call_check import CallCheck
    from judge.case_timing import time_case
    from judge.limits import Limits
    from judge.problem import Case
    from judge.verdict import Verdict

    # The timing loop's clock is scripted: only the checks take time (50 ms each), the scripted calls
    # none, so the outcome cannot hang on how fast this host runs the loop itself.
    now = [0.0]
    monkeypatch.setattr(case_timing, "time", SimpleNamespace(monotonic=lambda: now[0],
                                                             perf_counter_ns=lambda: int(now[0] * 1e9)))

    def slow_check(case, seed, outcome):
        now[0] += 0.05
        return CallCheck(Verdict.AC)

    case = Case(name="c", case_set=CaseSet.BENCHMARKS, dtype="float32", params={}, seed=1)
    limits = Limits(min_timed_calls=10, max_timed_calls=100, target_sem_ratio=0.0, case_time_budget_s=0.5,
                    min_warmup_calls=1, min_warmup_s=0.0, extra_check_probability=0.0)
    timing_ = time_case(*_scripted_pair(), case, limits=limits, call_timeout_s=1.0, verify=slow_check)
    # 25 checks take 1.25 s, far over the budget; the calls themselves take no time.
    assert now[0] >= 1.25 and timing_.submission.count == 100


def test_a_failure_in_the_baselines_own_child_is_the_judges():
    """The baseline runs in a child the submission never reaches: its own failure (a return code)
    is IE; the checks meant for untrusted code (threads, late work) are not applied to it, where
    a runtime thread started late would only make a spurious IE; and the submission's child is
    never asked to run the baseline."""
    from judge.backends import CaseSet
    from judge.call_check import CallCheck
    from judge.case_timing import time_case
    from judge.limits import Limits
    from judge.problem import Case
    from judge.runner.calls import CallOutcome
    from judge.verdict import Verdict

    class Baseline(_ScriptedSession):
        def __init__(self, failing_rc: int) -> None:
            super().__init__()
            self.failing_rc = failing_rc

        def call(self, lib, seed, *, timeout_s, recheck_ms=0):
            self.calls.append(lib)
            late = len(self.calls) > 6
            return CallOutcome(rc=self.failing_rc if late else 0, elapsed_ns=1000, digest_before={},
                               digest_after={}, new_threads=int(late), busy_threads=int(late),
                               late_writes=["y"] if late else [])

    case = Case(name="c", case_set=CaseSet.BENCHMARKS, dtype="float32", params={}, seed=1)
    passing = lambda c, seed, outcome: CallCheck(Verdict.AC)  # noqa: E731
    submission, threads_only = _ScriptedSession(), Baseline(failing_rc=0)
    timing = time_case(submission, threads_only, case, limits=Limits(min_warmup_s=0.0), call_timeout_s=1.0,
                       verify=passing)
    assert timing.failure is None and timing.ratio == 1.0
    assert set(submission.calls) == {"submission"} and set(threads_only.calls) == {"baseline"}
    failing = Baseline(failing_rc=2)
    timing = time_case(_ScriptedSession(), failing, case, limits=Limits(min_warmup_s=0.0), call_timeout_s=1.0,
                       verify=passing)
    assert timing.failure is not None and timing.failure.verdict is Verdict.IE
    assert "the baseline failed" in timing.failure.message and "returned 2" in timing.failure.message


class _BracketedSession(_SplitCalls):
    """A runner child whose calls take `call_ns` by the worker's clock around them, plus a message
    overhead of `overhead_ns` that its empty calls show too; its own timer reads `child_ns` (a
    kernel that moved it makes that anything)."""

    def __init__(self, *, call_ns: int, overhead_ns: int, child_ns: int | None = None,
                 empty_extra_ns: int = 0) -> None:
        self.call_ns, self.overhead_ns, self.empty_extra_ns = call_ns, overhead_ns, empty_extra_ns
        self.child_ns = call_ns if child_ns is None else child_ns
        self.calls = self.empties = 0

    def set_case(self, case, timeout_s):
        pass

    def call(self, lib, seed, *, timeout_s, recheck_ms=0):
        from judge.runner.calls import CallOutcome

        self.calls += 1
        jitter = 1_000 * (self.calls % 3)
        return CallOutcome(rc=0, elapsed_ns=self.child_ns, digest_before={}, digest_after={}, new_threads=0,
                           late_writes=[], bracket_ns=self.call_ns + self.overhead_ns + jitter)

    def empty_call(self, timeout_s):
        self.empties += 1
        return self.overhead_ns + self.empty_extra_ns + 1_000 * (self.empties % 3)


def _time_bracketed(submission, baseline, host_clock: bool = True):
    from judge.backends import CaseSet
    from judge.call_check import CallCheck
    from judge.case_timing import time_case
    from judge.limits import Limits
    from judge.problem import Case
    from judge.verdict import Verdict

    case = Case(name="c", case_set=CaseSet.BENCHMARKS, dtype="float32", params={}, seed=1)
    limits = Limits(min_timed_calls=12, max_timed_calls=12, min_warmup_calls=1, min_warmup_s=0.0,
                    extra_check_probability=0.0)
    return time_case(submission, baseline, case, limits=limits, call_timeout_s=1.0,
                     verify=lambda c, seed, outcome: CallCheck(Verdict.AC), host_clock=host_clock)


def test_a_call_is_timed_by_the_workers_clock_less_its_childs_overhead():
    """The child's own timer is within the kernel's reach: on a host clock it decides nothing."""
    sub = _BracketedSession(call_ns=1_000_000, overhead_ns=40_000, child_ns=300_000)  # timer moved
    base = _BracketedSession(call_ns=800_000, overhead_ns=30_000)
    timing = _time_bracketed(sub, base)
    assert timing.failure is None
    assert timing.submission.median_ns == 1_000_000 and timing.baseline.median_ns == 800_000
    assert timing.ratio == pytest.approx(1.25, rel=1e-5)  # the child's jitter averaged in the middle half
    assert sub.empties == base.empties == 12  # one empty call per child after every timed pair
    assert timing.series.timer_gap_ns() == 700_000 + 10_000  # the moved timer shows, as a diagnostic only
    assert timing.floor_ns == 1_041_000  # the bracket itself, for the physical floor


def test_a_kernel_that_slows_its_own_childs_empty_calls_gains_at_most_the_slack():
    from judge.case_timing import OVERHEAD_SLACK_NS

    honest = _time_bracketed(_BracketedSession(call_ns=1_000_000, overhead_ns=30_000),
                             _BracketedSession(call_ns=1_000_000, overhead_ns=30_000))
    cheat = _time_bracketed(_BracketedSession(call_ns=1_000_000, overhead_ns=30_000, empty_extra_ns=500_000),
                            _BracketedSession(call_ns=1_000_000, overhead_ns=30_000))
    assert honest.ratio == 1.0
    assert cheat.submission.median_ns == 1_000_000 - OVERHEAD_SLACK_NS


def test_device_tracks_keep_the_devices_own_clock():
    """A device's events leave out the host-side work the bracket includes: the child's time is used."""
    sub = _BracketedSession(call_ns=1_000_000, overhead_ns=40_000, child_ns=500_000)
    timing = _time_bracketed(sub, _BracketedSession(call_ns=1_000_000, overhead_ns=40_000), host_clock=False)
    assert timing.failure is None and timing.ratio == 0.5 and sub.empties == 0


def test_the_ratio_is_the_interquartile_mean_of_the_pairs():
    from judge.ratio_stats import ratio_estimate

    # A burst that hits one side of a few pairs moves it no more than it moves the median.
    ratios = [1.20, 1.21, 1.19, 1.20, 1.22, 1.18, 1.20, 3.0, 0.4, 1.20, 1.21, 1.19]
    center, half = ratio_estimate(ratios)
    assert center == pytest.approx(1.20, abs=0.005) and half < 0.02
    assert ratio_estimate([1.0, 2.0, 3.0]) == (2.0, float("inf"))  # too few pairs to say
    assert ratio_estimate([0.5] * 10) == (0.5, 0.0)


def test_the_interquartile_mean_is_steadier_than_the_median_and_its_interval_holds():
    import random
    import statistics

    from judge.ratio_stats import ratio_estimate

    chance = random.Random(15)
    judgings = [[1.2 * (1 + chance.gauss(0, 0.02)) for _ in range(40)] for _ in range(300)]
    estimates = [ratio_estimate(pairs) for pairs in judgings]
    iqm = statistics.pstdev(c for c, _ in estimates)
    median = statistics.pstdev(statistics.median(pairs) for pairs in judgings)
    assert iqm < 0.92 * median  # about 0.88 for bell-shaped noise: fewer pairs for the same precision
    covered = sum(abs(c / 1.2 - 1) <= h for c, h in estimates) / len(estimates)
    assert 0.9 <= covered <= 0.99  # a 95 % interval


def test_a_precise_ratio_stops_the_timing_early_and_a_noisy_one_uses_the_budget():
    from judge.backends import CaseSet
    from judge.call_check import CallCheck
    from judge.case_timing import time_case
    from judge.limits import Limits
    from judge.problem import Case
    from judge.verdict import Verdict

    case = Case(name="c", case_set=CaseSet.BENCHMARKS, dtype="float32", params={}, seed=1)
    limits = Limits(min_timed_calls=10, max_timed_calls=400, min_warmup_calls=1, min_warmup_s=0.0,
                    target_sem_ratio=0.005, extra_check_probability=0.0)
    passing = lambda c, seed, outcome: CallCheck(Verdict.AC)  # noqa: E731
    steady = time_case(_BracketedSession(call_ns=1_000_000, overhead_ns=0),
                       _BracketedSession(call_ns=1_000_000, overhead_ns=0), case, limits=limits,
                       call_timeout_s=1.0, verify=passing, host_clock=True)
    assert steady.submission.count < 40 and steady.ratio_half_width < 0.005

    class Noisy(_BracketedSession):
        def call(self, lib, seed, *, timeout_s, recheck_ms=0):
            outcome = super().call(lib, seed, timeout_s=timeout_s)
            return dataclasses.replace(outcome, bracket_ns=outcome.bracket_ns + 300 * (self.calls * 7919 % 1000))

    noisy = time_case(Noisy(call_ns=1_000_000, overhead_ns=0), _BracketedSession(call_ns=1_000_000, overhead_ns=0),
                      case, limits=limits, call_timeout_s=1.0, verify=passing, host_clock=True)
    assert noisy.submission.count == 400  # never precise enough: the call cap (or the budget) ends it


def test_a_case_timed_again_goes_on_from_its_earlier_pairs():
    from judge.backends import CaseSet
    from judge.call_check import CallCheck
    from judge.case_timing import time_case
    from judge.limits import Limits
    from judge.problem import Case
    from judge.verdict import Verdict

    case = Case(name="c", case_set=CaseSet.BENCHMARKS, dtype="float32", params={}, seed=1)
    limits = Limits(min_timed_calls=12, max_timed_calls=12, min_warmup_calls=1, min_warmup_s=0.0,
                    extra_check_probability=0.0, target_sem_ratio=0.0)
    sub, base = _BracketedSession(call_ns=1_000_000, overhead_ns=0), _BracketedSession(call_ns=500_000, overhead_ns=0)
    kwargs = dict(limits=limits, call_timeout_s=1.0, verify=lambda c, seed, o: CallCheck(Verdict.AC), host_clock=True)
    first = time_case(sub, base, case, **kwargs)
    checked = first.checked_calls
    again = time_case(sub, base, case, earlier=first, **dict(kwargs, limits=Limits(
        **{**limits.__dict__, "max_timed_calls": 24})))
    assert again is first and again.submission.count == 24 and again.ratio == pytest.approx(2.0, rel=1e-5)
    assert again.checked_calls > checked


def test_a_call_longer_than_the_bracket_around_it_is_a_tampered_timer():
    from judge.backends import CaseSet
    from judge.call_check import conduct
    from judge.problem import Case
    from judge.runner.calls import CallOutcome
    from judge.verdict import Verdict

    case = Case(name="c", case_set=CaseSet.BENCHMARKS, dtype="float32", params={}, seed=1)
    ok = CallOutcome(rc=0, elapsed_ns=900_000, digest_before={}, digest_after={}, new_threads=0, late_writes=[],
                     bracket_ns=950_000)
    assert conduct(case, ok, 1 << 20).verdict is Verdict.AC
    inflated = CallOutcome(rc=0, elapsed_ns=2_000_000, digest_before={}, digest_after={}, new_threads=0,
                           late_writes=[], bracket_ns=950_000)
    assert conduct(case, inflated, 1 << 20).verdict is Verdict.SV


def test_a_failure_the_submission_earned_is_not_hidden_behind_a_later_internal_error():
    from judge.backends import Backend, CaseSet
    from judge.pipeline import _conclude
    from judge.results import CaseResult, JudgeResult
    from judge.verdict import Verdict

    def run(*verdicts: Verdict) -> JudgeResult:
        result = JudgeResult(verdict=Verdict.AC, problem="p", backend=Backend.CPU, message="")
        result.cases = [CaseResult(name=f"c{i}", case_set=CaseSet.TESTS, passed=v is Verdict.AC, verdict=v,
                                   message=f"case c{i}: {v.value}") for i, v in enumerate(verdicts)]
        _conclude(result)
        return result

    wrong_then_internal = run(Verdict.AC, Verdict.WA, Verdict.IE, Verdict.WA)
    assert wrong_then_internal.verdict is Verdict.WA and wrong_then_internal.message == "case c1: WA"
    assert run(Verdict.IE, Verdict.WA).verdict is Verdict.IE  # nothing earned before it: the judge's failure
    assert run(Verdict.WA, Verdict.SV, Verdict.IE).verdict is Verdict.SV  # docs/rules.md's order among the earned
    assert run(Verdict.AC, Verdict.AC).verdict is Verdict.AC


def test_the_budget_the_cases_leave_goes_to_the_least_certain_case(tmp_path):
    """judge/timing_phase.py: a steady case stops on its interval; a noisy one gets the rounds after."""
    from judge.backends import Backend, CaseSet
    from judge.call_check import CallCheck
    from judge.host_config import HostConfig
    from judge.limits import Limits
    from judge.problem import Case
    from judge.results import CaseResult, JudgeResult
    from judge.timing_phase import TimingPhase, time_cases
    from judge.verdict import Verdict

    class Session(_BracketedSession):
        kernel_calls = 2

        def set_case(self, case, timeout_s):
            self.case = case.name

        def call(self, lib, seed, *, timeout_s, recheck_ms=0):
            outcome = super().call(lib, seed, timeout_s=timeout_s)
            if self.case == "noisy" and lib == "submission":
                outcome = dataclasses.replace(outcome, bracket_ns=outcome.bracket_ns + 300 * (self.calls * 7919 % 1000))
            return outcome

        def fetch_outputs(self, timeout_s):
            return {}

    class Checker:
        def prefetch(self, case, seed, *, cacheable):
            pass

        def check(self, case, seed, outcome, outputs, **kwargs):
            return CallCheck(Verdict.AC)

    limits = Limits(min_timed_calls=10, max_timed_calls=100_000, min_warmup_calls=1, min_warmup_s=0.0,
                    case_time_budget_s=0.2, target_sem_ratio=0.005, extra_check_probability=0.0)
    phase = TimingPhase(Session(call_ns=1_000_000, overhead_ns=0), Session(call_ns=1_000_000, overhead_ns=0),
                        Checker(), HostConfig(work_root=tmp_path, limits=limits), {}, True)
    cases = [Case(name=n, case_set=CaseSet.BENCHMARKS, dtype="float32", params={}, seed=1) for n in ("steady", "noisy")]
    results = [CaseResult(name=c.name, case_set=c.case_set, passed=True) for c in cases]
    result = JudgeResult(verdict=Verdict.AC, problem="p", backend=Backend.CPU, message="")
    seen: list[str] = []
    time_cases(phase, list(zip(results, cases, strict=True)), result, before_case=lambda c: seen.append(c.name),
               after_case=lambda c: None)
    steady, noisy = results
    assert seen[:2] == ["steady", "noisy"] and set(seen[2:]) == {"noisy"} and len(seen) > 2
    assert steady.timing.count < 40 and noisy.timing.count > 4 * steady.timing.count
    assert noisy.checked_calls >= max(3, noisy.timing.count // 4)
    assert "load_average_timing_start" in result.host and "baseline_spread_percent" in result.host
    assert result.host["score_half_width_percent"].startswith("benchmarks ")  # one set timed: one figure
    assert result.timing_profile_s["timed_pairs"] == steady.timing.count + noisy.timing.count


def test_spare_rounds_go_where_they_take_most_off_the_scores_variance():
    from judge.case_timing import CaseTiming
    from judge.timing_phase import _uncertainty

    near_one = CaseTiming(ratio=1.0, ratio_half_width=0.01, spent_s=1.0)
    far = CaseTiming(ratio=3.0, ratio_half_width=0.01, spent_s=1.0)
    assert _uncertainty(near_one) > _uncertainty(far)  # the score is steeper near r = 1
    assert _uncertainty(CaseTiming(ratio=1.0, ratio_half_width=0.01, spent_s=0.5)) > _uncertainty(near_one)
    assert _uncertainty(CaseTiming(ratio=1.0, ratio_half_width=0.02, spent_s=1.0)) > _uncertainty(near_one)
    assert _uncertainty(CaseTiming()) == 1e9  # no interval yet: first in line


def test_the_submissions_overhead_cap_follows_the_baselines_own_spread():
    """On a loaded host the children's empty calls spread widely: an honest child whose median
    lands higher by chance is not charged for it; a quiet baseline keeps the cap at the slack."""
    from judge.case_timing import BASELINE, OVERHEAD_SLACK_NS, SUBMISSION, Series

    quiet = Series(empties={SUBMISSION: [100_000] * 20, BASELINE: [30_000 + 1_000 * (i % 3) for i in range(20)]})
    assert quiet.overheads()[SUBMISSION] == quiet.overheads()[BASELINE] + OVERHEAD_SLACK_NS
    loaded = Series(empties={SUBMISSION: [400_000] * 20, BASELINE: [100_000 * (1 + i % 5) for i in range(20)]})
    assert loaded.overheads()[SUBMISSION] == 400_000  # within the baseline's own spread


def test_a_checks_truth_is_started_before_the_outputs_are_fetched_and_waited_for_by_the_check(tmp_path):
    """judge/timing_phase.py: once a call has ended, the worker's inputs and truth are made while the child
    sends its outputs (the submission's checked calls and the baseline's first call of a case alike)."""
    from judge.backends import CaseSet
    from judge.call_check import CallCheck
    from judge.host_config import HostConfig
    from judge.limits import Limits
    from judge.problem import Case
    from judge.runner.calls import CallOutcome
    from judge.timing_phase import TimingPhase
    from judge.verdict import Verdict

    steps: list[tuple[str, object]] = []

    class Session:
        kernel_calls = 2

        def __init__(self, name: str) -> None:
            self.name = name

        def fetch_outputs(self, timeout_s):
            steps.append(("fetch", self.name))
            return {"y": self.name}

    class Baseline(Session):
        def __init__(self) -> None:
            super().__init__("baseline")
            self.session = None

    class Checker:
        def prefetch(self, case, seed, *, cacheable):
            steps.append(("prefetch", seed))
            assert cacheable is False  # a timed call's fresh inputs are never cached

        def check(self, case, seed, outcome, outputs, **kwargs):
            steps.append(("check", (seed, outputs["y"])))
            return CallCheck(Verdict.AC)

    phase = TimingPhase(Session("submission"), Baseline(), Checker(),
                        HostConfig(work_root=tmp_path, limits=Limits()), {}, False)
    case = Case(name="c", case_set=CaseSet.BENCHMARKS, dtype="float32", params={}, seed=1)
    outcome = CallOutcome(rc=0, elapsed_ns=1, digest_before={}, digest_after={}, new_threads=0, late_writes=[])
    assert phase.verify(case, 11, outcome).verdict is Verdict.AC
    assert phase.verify_baseline(case, 12, outcome).verdict is Verdict.AC
    assert steps == [("prefetch", 11), ("fetch", "submission"), ("check", (11, "submission")),
                     ("prefetch", 12), ("fetch", "baseline"), ("check", (12, "baseline"))]


def test_both_children_prepare_a_pair_before_either_call_and_the_calls_run_in_the_pairs_order():
    from judge.backends import CaseSet
    from judge.call_check import CallCheck
    from judge.case_timing import time_case
    from judge.limits import Limits
    from judge.problem import Case
    from judge.verdict import Verdict

    events: list[tuple[str, str]] = []

    class Logged(_ScriptedSession):
        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

        def begin(self, lib, seed, *, recheck_ms=0, hold=False, hold_report=False):
            events.append(("begin", self.name, hold_report))
            super().begin(lib, seed, recheck_ms=recheck_ms, hold=hold, hold_report=hold_report)

        def await_prepared(self, timeout_s):
            events.append(("prepared", self.name))

        def run(self, timeout_s):
            events.append(("run", self.name))

        def report(self, timeout_s):
            events.append(("report", self.name))
            return super().report(timeout_s)

    case = Case(name="c", case_set=CaseSet.BENCHMARKS, dtype="float32", params={}, seed=1)
    limits = Limits(min_timed_calls=10, max_timed_calls=10, target_sem_ratio=1.0, min_warmup_calls=3,
                    min_warmup_s=0.0)
    time_case(Logged("s"), Logged("b"), case, limits=limits, call_timeout_s=1.0,
              verify=lambda c, seed, outcome: CallCheck(Verdict.AC))
    pairs = [events[i : i + 8] for i in range(0, len(events), 8)]
    assert len(pairs) >= 13  # 3 warm-up and 10 timed pairs (and no other call)
    for index, pair in enumerate(pairs):
        first, second = ("s", "b") if index % 2 == 0 else ("b", "s")  # A B B A
        # Both prepare, both run back to back, and only then both report (the first's was held).
        assert pair == [("begin", first, True), ("begin", second, False), ("prepared", first), ("prepared", second),
                        ("run", first), ("run", second), ("report", first), ("report", second)], (index, pair)


def test_a_child_that_fails_in_a_pair_leaves_the_other_child_no_call_half_made():
    import pytest

    from judge.backends import CaseSet
    from judge.call_check import CallCheck
    from judge.case_timing import time_case
    from judge.limits import Limits
    from judge.problem import Case
    from judge.runner.failures import RunnerDied
    from judge.verdict import Verdict

    class Dying(_ScriptedSession):
        def run(self, timeout_s):
            self._held = None
            raise RunnerDied("the child died", returncode=-9, timed_out=False, stderr="")

        def report(self, timeout_s):
            assert self._held is None, "a call that failed is not reported"
            raise RunnerDied("the child died", returncode=-9, timed_out=False, stderr="")

    baseline = _ScriptedSession()
    case = Case(name="c", case_set=CaseSet.BENCHMARKS, dtype="float32", params={}, seed=1)
    with pytest.raises(RunnerDied):
        time_case(Dying(), baseline, case, limits=Limits(min_warmup_s=0.0), call_timeout_s=1.0,
                  verify=lambda c, seed, outcome: CallCheck(Verdict.AC))
    assert baseline.begun == ["baseline"] and baseline.calls == ["baseline"]  # begun, and finished
    assert baseline._held is None


def test_a_case_timed_again_warms_up_with_one_pair_and_a_first_timing_with_all():
    from judge.backends import CaseSet
    from judge.call_check import CallCheck
    from judge.case_timing import REWARM_CALLS, time_case
    from judge.limits import Limits
    from judge.problem import Case
    from judge.verdict import Verdict

    case = Case(name="c", case_set=CaseSet.BENCHMARKS, dtype="float32", params={}, seed=1)
    limits = Limits(min_timed_calls=10, max_timed_calls=10, target_sem_ratio=1.0, min_warmup_calls=3,
                    min_warmup_s=0.0, extra_check_probability=0.0)
    submission, baseline = _scripted_pair()
    ok = lambda c, seed, outcome: CallCheck(Verdict.AC)  # noqa: E731
    first = time_case(submission, baseline, case, limits=limits, call_timeout_s=1.0, verify=ok)
    timed = first.submission.count
    assert len(baseline.calls) - timed == 3  # the baseline's calls are warm-up and timed pairs only
    again = Limits(min_timed_calls=timed + 10, max_timed_calls=timed + 10, target_sem_ratio=1.0,
                   min_warmup_calls=3, min_warmup_s=0.0, extra_check_probability=0.0)
    before = len(baseline.calls)
    time_case(submission, baseline, case, limits=again, call_timeout_s=1.0, verify=ok, earlier=first)
    assert first.submission.count == timed + 10
    assert REWARM_CALLS == 1 and len(baseline.calls) - before == REWARM_CALLS + 10  # one warm-up pair
