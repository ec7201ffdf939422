"""A disturbed timing phase is timed again, and a run that stays disturbed says so (docs/rules.md, "Disturbed hosts").

`judge/hostload.py` marks a timing phase `disturbed` when the host's load, CPU steal or the baseline's
own spread say its ratios are less to be trusted. Such a score must not stand silently: the timing
phase alone (the children are warm, the checks already done) is run again after a pause, a few
times with a growing backoff, within the run. The run is one run for the team's quota whatever the
attempts. The last attempt's figures stand; the run's conditions (judge/conditions.py) record every
attempt (`retimed_attempts`, `disturbed_attempts`), and `disturbed` remains only when the last attempt
was disturbed too: the service then shows it on the report, the board, the API, the exports and the
admin views, and leaves the run out of a final ranking until an organiser re-times it
(docs/rules.md, "Disturbed hosts").

The attempts after the first are the judge's time, not the team's: the caller leaves them out of the
run's time limit (`judge_seconds`), and one is started only when the run's limit leaves room for it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from judge.results import JudgeResult

log = logging.getLogger("opjudge.judge")


@dataclass(frozen=True)
class RetimePolicy:
    attempts: int = 3  # timing phases at most, the first included
    backoff_s: float = 15.0  # pause before the second; each further pause is `growth` times the last
    growth: float = 2.0

    def pause_before(self, attempt: int) -> float:
        """Seconds to wait before attempt `attempt` (2, 3, ...)."""
        return self.backoff_s * self.growth ** (attempt - 2)


@dataclass
class RetimeOutcome:
    attempts: int = 0
    judge_seconds: float = 0.0  # wall time of the attempts after the first, pauses included


def time_until_calm(time_phase: Callable[[], None], result: JudgeResult, policy: RetimePolicy, *,
                    room_for: Callable[[float], bool], passed: Callable[[], bool],
                    sleep: Callable[[float], None] = time.sleep,
                    clock: Callable[[], float] = time.monotonic) -> RetimeOutcome:
    """Run `time_phase` (which sets `result.conditions.disturbed` when the host was) until an attempt is
    calm, the attempts are spent, a case fails, or `room_for(seconds)` says the run has no room left."""
    outcome = RetimeOutcome()
    history: list[str] = []
    last_s = 0.0
    for attempt in range(1, max(1, policy.attempts) + 1):
        pause = policy.pause_before(attempt) if attempt > 1 else 0.0
        if attempt > 1:
            if not room_for(pause + 1.5 * last_s):
                log.warning("timing stayed disturbed (%s) and the run has no room for another attempt",
                            history[-1])
                break
            sleep(pause)
        began = clock()
        result.conditions = replace(result.conditions, disturbed=None)
        time_phase()
        last_s = clock() - began
        if attempt > 1:
            outcome.judge_seconds += pause + last_s
        outcome.attempts = attempt
        reason = result.conditions.disturbed
        if reason is None or not passed():
            break
        history.append(reason)
    result.conditions = replace(result.conditions, retimed_attempts=outcome.attempts,
                                disturbed_attempts=tuple(history))
    if outcome.attempts > 1:
        log.info("timing phase run %d times on a disturbed host; last attempt %s", outcome.attempts,
                 "disturbed too" if result.conditions.disturbed else "calm")
    return outcome
