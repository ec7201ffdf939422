"""The runner child's small clocks: where a call's time goes, and the brief poll for "go"."""

from __future__ import annotations

import select
import time

# The worker answers "armed" with "go" at once; the child polls for it this long before it blocks.
GO_SPIN_S = 0.002


def poll_briefly(fd: int, seconds: float) -> None:
    """Return once `fd` is readable or `seconds` have passed (the commands come one at a time, after
    each answer, so nothing waits in the file object's buffer)."""
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        if select.select([fd], [], [], 0)[0]:
            return


class Phases:
    """Where a call's time goes in the child, for the timing breakdown (bench/ranking_fidelity.py)."""

    def __init__(self) -> None:
        self.laps: dict[str, int] = {}
        self._last = time.perf_counter_ns()

    def lap(self, name: str) -> None:
        now = time.perf_counter_ns()
        self.laps[name] = self.laps.get(name, 0) + now - self._last
        self._last = now

    def skip(self) -> None:
        """Leave the time since the last lap out (a held call's wait for the worker)."""
        self._last = time.perf_counter_ns()
