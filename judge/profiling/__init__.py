"""Profiles of timed cases (docs/profiles.md): the shape every backend's profiler returns.

A profile is taken after timing, from one untimed pass (or from the accounting of calls that were
already timed), never inside a timed call, and only for public cases. Each backend's profiler
(CPU threads and counters, CUDA Nsight Compute, NPU msprof op) fills the same small structure, so
the report, the API and the pages render them alike: a few headline figures, an optional table
(per thread, per block, per stall reason) and the reason when the tool could not run.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Metric:
    """One headline figure: `name` as a person reads it, `value`, its `unit` ("%", "ms", "" ...)."""

    name: str
    value: float | int | str
    unit: str = ""
    hint: str = ""  # one line on what the figure means for the kernel


@dataclass(frozen=True)
class Table:
    """Rows of one kind (threads, blocks, stall reasons): `columns` names the keys of each row."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[dict[str, Any], ...]
    # A column of shares in per cent (0 to 100) that the report draws as bars, one per row, labelled
    # by the row's first column; "" draws no chart.
    chart: str = ""


@dataclass(frozen=True)
class ProfileSection:
    """What one tool said about one case. `available` False carries the person-readable `reason`."""

    tool: str  # "threads", "perf", "ncu", "msprof", "profile"
    available: bool
    reason: str = ""  # why the tool could not run, when not available
    metrics: tuple[Metric, ...] = ()
    tables: tuple[Table, ...] = ()
    raw_name: str = ""  # a file kept beside the report (the tool's CSV), when there is one

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class CaseProfile:
    case: str
    backend: str
    sections: tuple[ProfileSection, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        return {"case": self.case, "backend": self.backend, "sections": [s.to_json() for s in self.sections]}


def unavailable(tool: str, reason: str) -> ProfileSection:
    return ProfileSection(tool=tool, available=False, reason=reason)
