"""A call as the worker sees it: its outcome, what an untimed profiled pass probes around it, and
the worker's record of a call sent and not yet reported (judge/runner/session.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from judge.runner import protocol


@dataclass(frozen=True)
class CallOutcome(protocol.CallReport):
    """A call as the worker saw it: the child's report (judge/runner/protocol.py, checked there) and
    the worker's own measurements around it."""

    workspace_requested: int | None = None  # set when the request was refused: then the call was not made
    bracket_ns: int = 0  # the worker's own clock from "go" to "ran": the call plus message overhead
    worker_ns: int = 0  # the worker's clock from sending the call to its report: the whole call
    # The child's process tree's CPU time outside the bracket (from the call command to "armed", and
    # from "ran" to its report), read from outside it (judge/idle_watch.py); -1 when not metered.
    outside_cpu_ns: int = -1
    # Of it, the CPU time of threads other than the processes' main threads from "ran" to the report:
    # the kernel's threads (OpenMP's pool, a helper), which have nothing to do then; -1 when not metered.
    after_helper_cpu_ns: int = -1
    settle_ns: int = 0  # the worker's wait after "ran" for the kernel's threads to leave the CPU


class CallProbe(Protocol):
    """What an untimed profiled pass does right before "go" and right after "ran" (judge/profiling/).
    Never given to a timed call: a probe's reads would land inside the call's bracket."""

    def armed(self) -> None: ...

    def ran(self, bracket_ns: int) -> None: ...


@dataclass
class PendingCall:
    """A call sent (`RunnerSession.begin`) and not yet reported."""

    asked_ns: int
    cpu_asked: tuple[int, int]
    probe: CallProbe | None
    hold: bool
    hold_report: bool = False
    prepared_ns: int = 0  # when a held call's child said it had prepared it
    refused: int | None = None  # the workspace it asked for, when refused instead
    waited_ns: int = 0  # the worker's time on the other child of the pair while this one idled
    cpu_armed: tuple[int, int] = (0, 0)
    cpu_ran: tuple[int, int] = (0, 0)
    cpu_settled: tuple[int, int] = (0, 0)  # once the kernel's threads had left the CPU (idle_watch.py)
    running_at_ran: int = 0  # kernel threads still running when "ran" came
    settle_ns: int = 0
    bracket_ns: int = 0
    ran_ns: int = 0  # when "ran" came: the call has been timed


def refused_outcome(requested: int) -> CallOutcome:
    """A call the child did not make: the kernel asked for more workspace than the limit."""
    return CallOutcome(rc=0, elapsed_ns=0, digest_before={}, digest_after={}, new_threads=0, late_writes=[],
                       workspace_requested=requested)
