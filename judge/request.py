"""What the engine is asked to judge, and where its progress goes: the records every stage
shares (the pipeline, the builds), apart from the entry point that runs them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from judge.backends import Backend, CaseSet, Stage
from judge.modes import RunMode
from judge.problem import Problem
from judge.toolchains.base import SourceFile


class Reporter(Protocol):
    """Progress goes through this, so the engine never touches a UI or a database."""

    def stage(self, stage: Stage) -> None:
        """A stage of the run starts."""
        ...

    def note(self, message: str) -> None:
        """A line of progress, e.g. "case 3/8 timed"."""
        ...


class SilentReporter:
    def stage(self, stage: Stage) -> None:
        pass

    def note(self, message: str) -> None:
        pass


@dataclass(frozen=True)
class JudgeRequest:
    problem: Problem
    backend: Backend
    sources: list[SourceFile]
    case_sets: tuple[CaseSet, ...] = (CaseSet.TESTS, CaseSet.BENCHMARKS, CaseSet.PRIVATE)
    secret: bytes = b""  # mixed into every case seed; never reaches the runner child's environment
    mode: RunMode = RunMode.RANKED  # narrows `case_sets` to the mode's (judge/modes.py)

    @property
    def judged_sets(self) -> tuple[CaseSet, ...]:
        """The case sets this run judges: those asked for that the mode allows."""
        return self.mode.select(self.case_sets)
