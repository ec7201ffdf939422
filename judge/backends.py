"""Backends (device kinds) and case sets: enums, never bare strings across seams."""

from __future__ import annotations

from enum import StrEnum


class Backend(StrEnum):
    CPU = "cpu"
    CUDA = "cuda"
    NPU = "npu"


class CaseSet(StrEnum):
    TESTS = "tests"  # correctness only, errors shown to teams
    BENCHMARKS = "benchmarks"  # timed and scored on the public board
    PRIVATE = "private"  # timed and scored for the final ranking; seeds from the judge's secret

    @property
    def timed(self) -> bool:
        return self is not CaseSet.TESTS


class Stage(StrEnum):
    """Stages of a run (docs/rules.md, "What happens to a submission"), reported as they start."""

    QUEUED = "queued"
    POLICY = "policy"
    BUILDING = "building"
    CHECKING = "checking"
    TIMING = "timing"
    SCORING = "scoring"
    DONE = "done"


class Isolation(StrEnum):
    """How strongly the submission was isolated; recorded on every result."""

    STRICT = "strict"  # namespaces + rlimits + seccomp
    DEGRADED = "degraded"  # rlimits + seccomp without namespaces
    OFF = "off"  # development only: no isolation at all
