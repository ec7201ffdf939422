"""The profiled pass of a run: after timing, every public timed case that passed.

Only benchmark and ranked runs time cases, and only their `benchmarks` cases are public: a private
case is never profiled (its sizes and behaviour are not shown to teams). A profile never changes a
verdict: a child that fails in the pass ends the profile with the reason, and the run's result
stands as timed. Only a tampered result channel (ProtocolViolation) goes on to the pipeline: that is
SV wherever it happens.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from judge.backends import Backend, CaseSet
from judge.errors import JudgeError
from judge.modes import RunMode
from judge.problem import Case
from judge.profiling import CaseProfile, unavailable
from judge.profiling.context import ProfileContext, track_profiler
from judge.results import CaseResult, JudgeResult
from judge.runner.protocol import ProtocolViolation

log = logging.getLogger("opjudge.judge")


def profiled(mode: RunMode, case: Case, case_result: CaseResult) -> bool:
    """Whether this case gets a profile: a public timed case of a timed run that passed."""
    return mode.timed and case.case_set is CaseSet.BENCHMARKS and case_result.passed and case_result.timing is not None


def profile_cases(result: JudgeResult, timed: list[tuple[CaseResult, Case]],
                  make_context: Callable[[Case], ProfileContext]) -> None:
    """Append each profiled case's `CaseProfile` (as JSON) to `result.profiles`."""
    profiler = track_profiler(Backend(result.backend))
    started = time.monotonic()
    for case_result, case in timed:
        if not profiled(result.mode, case, case_result):
            continue
        try:
            sections = profiler(make_context(case))
        except ProtocolViolation:
            raise
        except (JudgeError, OSError) as exc:  # RunnerDied and RunnerFailed are JudgeErrors
            log.warning("the profiled pass of case %s stopped: %s", case.name, exc)
            reason = f"the profiled pass stopped: {type(exc).__name__}: {str(exc)[:300]}"
            result.profiles.append(CaseProfile(case.name, result.backend.value, (unavailable("profile", reason),))
                                   .to_json())  # fmt: skip
            break  # the child may be gone: the cases after it keep no profile
        result.profiles.append(CaseProfile(case.name, result.backend.value, tuple(sections)).to_json())
    if result.profiles:
        result.stage_times_s["profile"] = time.monotonic() - started
