"""Where the runner's main thread runs: on its OpenMP place for a call, anywhere between calls.

The CPU track binds the runner's OpenMP threads one to a core (judge/tracks/cpu). libgomp binds
the process's initial thread too, to the first core, when it loads, and keeps it there for the
process's life. Inside a call that is what timing wants (the kernel's thread 0 on its own core).
Between calls it is not: the runner's own work (drawing the next inputs, digests, the outputs'
copies) is single-threaded and would queue on that one core while the others idle, and every
runner of every judging on the host would queue on the same core. So the main thread is moved to
its place just before the cache flush that precedes a call, and given back every CPU the worker
allows right after the call's bracket. Where nothing narrowed the thread (no binding, one CPU),
this does nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterable


class MainThreadPlacement:
    """`for_call()` before a timed bracket, `between_calls()` after it.

    `allowed` is the CPUs the worker may use (sent in the hello); where the thread runs now,
    when this is made, is taken as its place for calls. A kernel that moves the thread itself is
    put back before the next call."""

    def __init__(self, allowed: Iterable[int] | None) -> None:
        self.call_cpus = frozenset(os.sched_getaffinity(0))
        self.free_cpus = frozenset(allowed or ()) or self.call_cpus
        self.active = self.call_cpus < self.free_cpus

    def for_call(self) -> None:
        self._move(self.call_cpus)

    def between_calls(self) -> None:
        self._move(self.free_cpus)

    def _move(self, cpus: frozenset[int]) -> None:
        if not self.active:
            return
        try:
            os.sched_setaffinity(0, cpus)
        except OSError:  # a CPU gone offline, a tighter cgroup: leave the thread where it is
            self.active = False
