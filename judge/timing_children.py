"""The runner children a group's timing phase times its cases in (docs/rules.md, "Timing").

One pair of processes (the submission's child and the baseline's) may draw things for its whole
life that move every call it makes alike: where its buffers and its flush buffer land in memory,
its threads' placement. Timed in one pair, every case of a score would share that draw. With
`every` > 0 a group's first pass starts a fresh pair every `every` timed cases, so that such a
draw is averaged over the cases as their own noise is. Measured, it did not narrow a score's
spread on the host tried (a 2-vCPU AMD VM) and costs a child start-up a pair, so it is off by default
(docs/benchmarks.md, "Fresh children for the timing": the shared part of a judging's error came
from the host's state, not from its processes).

The order keeps the run's rules: the old submission child has exited (none of the team's code
runs) before the new one gets its hello; the new baseline child is ready before any of the team's
code loads in the new submission child (judge/runner/baseline_session.py); a private group's
fresh children are as new as its first, never having seen a public case. The seconds spent
starting them are the judge's, not the run's (`seconds`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from judge.problem import Case
from judge.runner.baseline_session import BaselineRunner
from judge.runner.session import RunnerSession

log = logging.getLogger("opjudge.judge")


class TimingChildren:
    """The current pair of a group's timing phase, renewed every `every` cases of an attempt's first pass."""

    def __init__(self, child: RunnerSession, baseline: BaselineRunner, *, every: int, public: bool,
                 new_child: Callable[[int], RunnerSession], new_baseline: Callable[[int], BaselineRunner]) -> None:
        self.child, self.baseline = child, baseline
        self.every, self.public = every, public
        self._new_child, self._new_baseline = new_child, new_baseline
        self.pairs = 1  # pairs the group has used so far
        self.seconds = 0.0  # spent starting fresh pairs (the judge's time)
        self.retired_output: list[str] = []  # what the public group's earlier submission children wrote
        self._timed: set[str] = set()  # cases this attempt's first pass has begun

    def begin_attempt(self) -> None:
        """A timing attempt (judge/retime.py) starts its first pass in the current pair."""
        self._timed.clear()

    def before(self, case: Case) -> bool:
        """Called before `case` is timed; whether it is timed in a pair started for it. Only a first
        pass renews the pair, at every `every`-th case after the first; a second-pass round (a case
        seen already) goes on in the current pair."""
        if not self.every or case.name in self._timed:
            return False
        due = bool(self._timed) and len(self._timed) % self.every == 0
        self._timed.add(case.name)
        if due:
            self._renew()
        return due

    def _renew(self) -> None:
        started = time.monotonic()
        old_child, old_baseline = self.child, self.baseline
        old_child.__exit__()  # after this no code of the team runs until the new child's hello
        if self.public:
            self.retired_output.append(old_child.output_text())
        old_baseline.__exit__()
        baseline = self._new_baseline(self.pairs)
        baseline.vendor_failures = old_baseline.vendor_failures  # the organisers' list, kept across pairs
        baseline.__enter__()  # launched with its hello: it loads only the baseline
        child = self._new_child(self.pairs)
        try:
            child.start()  # imports its runtime beside the baseline's start-up
            baseline.ready()  # ready before any of the team's code loads
            child.__enter__()  # its hello: the submission loads
        except BaseException:
            child.__exit__()
            baseline.__exit__()
            raise
        self.child, self.baseline = child, baseline
        self.pairs += 1
        spent = time.monotonic() - started
        self.seconds += spent
        log.debug("timing children renewed (pair %d, %.2f s)", self.pairs, spent)

    def output_text(self) -> str:
        """The public group's submission children's output, in the order they ran."""
        return "".join(self.retired_output) + self.child.output_text()

    def close(self) -> None:
        """End the current pair's submission child (the baseline's may time the next group)."""
        self.child.__exit__()
