"""Run modes (docs/rules.md "Run modes"): what a run judges, and whether it can rank.

A team picks the mode of each submission. `test` is the quick check (policy,
build, correctness on `tests`), `benchmark` adds the timing of `benchmarks`
against the baseline, `ranked` judges every set and is the only mode whose
results reach the board. The engine narrows the case sets it was asked for to
the mode's (`RunMode.select`), so a caller cannot time private cases in a
test run by mistake.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from judge.backends import CaseSet


class RunMode(StrEnum):
    TEST = "test"
    BENCHMARK = "benchmark"
    RANKED = "ranked"

    @property
    def case_sets(self) -> tuple[CaseSet, ...]:
        """Every set a run of this mode may judge."""
        if self is RunMode.TEST:
            return (CaseSet.TESTS,)
        if self is RunMode.BENCHMARK:
            return (CaseSet.TESTS, CaseSet.BENCHMARKS)
        return (CaseSet.TESTS, CaseSet.BENCHMARKS, CaseSet.PRIVATE)

    @property
    def ranked(self) -> bool:
        """Whether a run of this mode counts on the board."""
        return self is RunMode.RANKED

    @property
    def timed(self) -> bool:
        return self is not RunMode.TEST

    def select(self, wanted: Iterable[CaseSet]) -> tuple[CaseSet, ...]:
        """The sets of `wanted` this mode judges, in `wanted`'s order."""
        return tuple(s for s in wanted if s in self.case_sets)
