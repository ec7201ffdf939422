"""What a run was judged under that the judge and the service read back: typed fields, not strings.

`JudgeResult.host` describes the host in its runtime's own words (device, driver, clock, load
figures) for people to read. The entries that code acts on are the fields of `RunConditions`: the
toolchain's version, the vendor operator and clock overheads of the baseline's child, the device's
peak rates (the roof of the report's chart), and how the timing phase went on a disturbed host
(docs/rules.md, "Disturbed hosts"; judge/retime.py).

The store keeps `RunConditions.to_dict()` under `runs.worker_info["conditions"]` (docs/architecture.md).
Runs stored before kept these as flat strings in `worker_info` (`retimed_attempts: "3"`,
`baseline_python_baseline`, ...): `conditions_from_host` reads that shape, for rows a worker of the
previous release still writes; migration 0009 converted the rows stored before it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

CONDITIONS_KEY = "conditions"  # where the store keeps them in `runs.worker_info`


@dataclass(frozen=True)
class RunConditions:
    toolchain: str | None = None  # the compiler's version, e.g. "g++ 12.2.0" (judge/builds.py)
    python_baseline: str | None = None  # the vendor operator the baseline's child reported; None: none
    # The clock overheads the baseline's child measured, by the runtime's name (e.g. "event_overhead_ns")
    baseline_overheads_ns: Mapping[str, float] = field(default_factory=dict)
    peak_flops: float | None = None  # the device's peak rate, recorded since workers differ
    peak_bytes_per_s: float | None = None  # its peak bandwidth
    retimed_attempts: int | None = None  # timing phases run (judge/retime.py); None: nothing was timed
    disturbed_attempts: tuple[str, ...] = ()  # why each attempt that was timed again was disturbed, in order
    disturbed: str | None = None  # why the last attempt's host was disturbed too: the run is marked
    # The same, where the worker marks no run (OPJUDGE_MARK_DISTURBED_RUNS off, workers/settings.py)
    disturbed_unmarked: str | None = None

    @property
    def timing_attempts(self) -> int:
        """Timing phases the run's figures took, 1 where none was timed again."""
        return self.retimed_attempts if self.retimed_attempts and self.retimed_attempts > 0 else 1

    def to_dict(self) -> dict[str, Any]:
        """The JSON the store keeps (plain types only)."""
        return {
            "toolchain": self.toolchain, "python_baseline": self.python_baseline,
            "baseline_overheads_ns": dict(self.baseline_overheads_ns), "peak_flops": self.peak_flops,
            "peak_bytes_per_s": self.peak_bytes_per_s, "retimed_attempts": self.retimed_attempts,
            "disturbed_attempts": list(self.disturbed_attempts), "disturbed": self.disturbed,
            "disturbed_unmarked": self.disturbed_unmarked,
        }  # fmt: skip


def conditions_from_dict(data: Mapping[str, Any] | None) -> RunConditions:
    """Inverse of `RunConditions.to_dict`; a value of the wrong type reads as absent."""
    data = data or {}
    overheads = data.get("baseline_overheads_ns")
    attempts = data.get("disturbed_attempts")
    return RunConditions(
        toolchain=_text(data.get("toolchain")), python_baseline=_text(data.get("python_baseline")),
        baseline_overheads_ns=overheads_ns(overheads) if isinstance(overheads, Mapping) else {},
        peak_flops=positive(data.get("peak_flops")), peak_bytes_per_s=positive(data.get("peak_bytes_per_s")),
        retimed_attempts=_count(data.get("retimed_attempts")),
        disturbed_attempts=tuple(str(a) for a in attempts) if isinstance(attempts, list | tuple) else (),
        disturbed=_text(data.get("disturbed")), disturbed_unmarked=_text(data.get("disturbed_unmarked")),
    )  # fmt: skip


def conditions_from_host(host: Mapping[str, Any]) -> RunConditions:
    """The conditions of a run stored as flat strings (the shape before migration 0009)."""
    numbered = sorted((int(k.rpartition("_")[2]), str(v)) for k, v in host.items()
                      if k.startswith("disturbed_attempt_") and k.rpartition("_")[2].isdigit())
    return RunConditions(
        toolchain=_text(host.get("toolchain")), python_baseline=_text(host.get("baseline_python_baseline")),
        baseline_overheads_ns=overheads_ns({k.removeprefix("baseline_"): v for k, v in host.items()
                                            if k.startswith("baseline_") and k.endswith("overhead_ns")}),
        peak_flops=positive(host.get("peak_flops")), peak_bytes_per_s=positive(host.get("peak_bytes_per_s")),
        retimed_attempts=_count(host.get("retimed_attempts")), disturbed_attempts=tuple(v for _, v in numbered),
        disturbed=_text(host.get("disturbed")), disturbed_unmarked=_text(host.get("disturbed_unmarked")),
    )  # fmt: skip


def is_legacy_key(key: str) -> bool:
    """Whether a flat `host` entry of the old shape is one that `RunConditions` now holds."""
    return (key in ("toolchain", "baseline_python_baseline", "peak_flops", "peak_bytes_per_s", "retimed_attempts",
                    "disturbed", "disturbed_unmarked") or key.startswith("disturbed_attempt_")
            or (key.startswith("baseline_") and key.endswith("overhead_ns")))  # fmt: skip


def stored_conditions(info: Mapping[str, Any] | None) -> RunConditions:
    """A stored run's conditions from its `worker_info`, in either shape."""
    info = info or {}
    nested = info.get(CONDITIONS_KEY)
    return conditions_from_dict(nested) if isinstance(nested, Mapping) else conditions_from_host(info)


def overheads_ns(described: Mapping[str, Any]) -> dict[str, float]:
    """The clock overheads among what a runtime says of its device (`*overhead_ns`), as numbers."""
    numbers = {k: _float(v) for k, v in described.items() if str(k).endswith("overhead_ns")}
    return {str(k): v for k, v in numbers.items() if v is not None}


def positive(value: Any) -> float | None:
    """A rate as a number; None for a missing, unreadable or non-positive one (as unknown)."""
    number = _float(value)
    return number if number is not None and number > 0 else None


def _float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _count(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value if value > 0 else None
    return int(value) if isinstance(value, str) and value.isdigit() and int(value) > 0 else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
