"""A disturbed timing phase is timed again, and one that stays disturbed says so (docs/rules.md, "Disturbed hosts")."""

from __future__ import annotations

import dataclasses

from judge.backends import Backend
from judge.results import JudgeResult
from judge.retime import RetimePolicy, time_until_calm
from judge.verdict import Verdict


def _result() -> JudgeResult:
    return JudgeResult(verdict=Verdict.AC, problem="p", backend=Backend.CPU, message="")


class _Host:
    """A timing phase whose host is disturbed for the first `loaded` attempts."""

    def __init__(self, result: JudgeResult, loaded: int) -> None:
        self.result, self.loaded, self.calls = result, loaded, 0

    def __call__(self) -> None:
        self.calls += 1
        if self.calls <= self.loaded:
            reason = f"load average {5 + self.calls}.00 on 2 CPUs"
            self.result.conditions = dataclasses.replace(self.result.conditions, disturbed=reason)


def test_a_calm_phase_runs_once() -> None:
    result = _result()
    phase, pauses = _Host(result, 0), []
    outcome = time_until_calm(phase, result, RetimePolicy(3, 10.0), room_for=lambda s: True, passed=lambda: True,
                              sleep=pauses.append)
    assert phase.calls == outcome.attempts == 1 and pauses == [] and result.conditions.disturbed is None
    assert result.conditions.retimed_attempts == 1 and result.conditions.disturbed_attempts == ()


def test_a_disturbed_phase_is_timed_again_with_backoff_until_calm() -> None:
    result = _result()
    phase, pauses = _Host(result, 2), []
    outcome = time_until_calm(phase, result, RetimePolicy(4, 10.0), room_for=lambda s: True, passed=lambda: True,
                              sleep=pauses.append)
    assert phase.calls == outcome.attempts == 3 and pauses == [10.0, 20.0]
    assert result.conditions.disturbed is None  # the last attempt was calm: its figures stand, unmarked
    first, second = result.conditions.disturbed_attempts
    assert first.startswith("load average 6.00") and second.startswith("load average 7.00")
    assert result.conditions.retimed_attempts == 3 and outcome.judge_seconds >= 30.0


def test_a_phase_that_stays_disturbed_keeps_the_mark() -> None:
    result = _result()
    phase = _Host(result, 99)
    time_until_calm(phase, result, RetimePolicy(3, 0.0), room_for=lambda s: True, passed=lambda: True,
                    sleep=lambda s: None)
    assert phase.calls == 3 and (result.conditions.disturbed or "").startswith("load average 8.00")
    assert len(result.conditions.disturbed_attempts) == 3 and result.conditions.timing_attempts == 3


def test_no_attempt_without_room_and_none_after_a_failure() -> None:
    result = _result()
    phase = _Host(result, 99)
    time_until_calm(phase, result, RetimePolicy(3, 5.0), room_for=lambda s: False, passed=lambda: True,
                    sleep=lambda s: None)
    assert phase.calls == 1 and result.conditions.disturbed is not None
    result = _result()
    phase = _Host(result, 99)
    time_until_calm(phase, result, RetimePolicy(3, 5.0), room_for=lambda s: True, passed=lambda: False,
                    sleep=lambda s: None)
    assert phase.calls == 1  # a failed case's verdict stands; timing again could only hide it
