"""Run modes in the service: each mode's quota per competition, and the queue priority of a run.

docs/rules.md "Run modes": `test`, `benchmark` and `ranked` each have their own daily
quota, minimum interval and runs in flight. A competition's three quota columns
are the ranked mode's (they predate the modes); `Competition.mode_quotas` holds
the test and benchmark ones where an organiser changed them from the defaults.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import IntEnum
from typing import Any

from api.store.enums import RunKind
from api.store.errors import InvalidInputError
from api.store.models import Competition
from api.store.types import INT_MAX
from judge.modes import RunMode

QUOTA_FIELDS = ("per_day", "min_interval_s", "max_in_flight")


@dataclass(frozen=True)
class ModeQuota:
    per_day: int  # charged submissions of this mode in a rolling 24 hours
    min_interval_s: int  # between two submissions of this mode
    max_in_flight: int  # runs of this mode pending, queued or running at once

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


DEFAULT_QUOTAS = {
    RunMode.TEST: ModeQuota(200, 10, 2),
    RunMode.BENCHMARK: ModeQuota(100, 30, 2),
    RunMode.RANKED: ModeQuota(50, 90, 2),
}


class QueuePriority(IntEnum):
    """A run's place on its queue: lower goes first (Redis's priority steps 0, 3, 6, 9 in kombu).

    A team's quick test never waits behind full judgings, and organisers' rejudges
    and reproductions wait behind every team's own runs.
    """

    TEST = 0
    BENCHMARK = 3
    RANKED = 6
    ORGANISER = 9

    @classmethod
    def of(cls, kind: RunKind, mode: RunMode) -> QueuePriority:
        if kind is not RunKind.JUDGE:
            return cls.ORGANISER
        return {RunMode.TEST: cls.TEST, RunMode.BENCHMARK: cls.BENCHMARK}.get(mode, cls.RANKED)


def mode_quota(comp: Competition, mode: RunMode) -> ModeQuota:
    """The quota of `mode` in competition `comp`."""
    if mode is RunMode.RANKED:
        return ModeQuota(comp.quota_per_day, comp.min_interval_s, comp.max_in_flight)
    stored = (comp.mode_quotas or {}).get(mode.value) or {}
    default = DEFAULT_QUOTAS[mode]
    return ModeQuota(**{name: int(stored.get(name, getattr(default, name))) for name in QUOTA_FIELDS})


def all_mode_quotas(comp: Competition) -> dict[RunMode, ModeQuota]:
    return {mode: mode_quota(comp, mode) for mode in RunMode}


def apply_mode_quotas(comp: Competition, changes: Any) -> None:
    """Merge an organiser's `{"test": {"per_day": 300}, ...}` into `comp` (InvalidInputError if bad).

    `ranked` writes the competition's own quota columns, so both spellings agree.
    """
    if not isinstance(changes, dict):
        raise InvalidInputError("mode_quotas maps a mode (test, benchmark, ranked) to its quota fields")
    merged = dict(comp.mode_quotas or {})
    for key, fields in changes.items():
        try:
            mode = RunMode(key)
        except ValueError:
            raise InvalidInputError(f"mode_quotas: unknown mode {key!r}; modes: test, benchmark, ranked") from None
        quota = _checked(mode, mode_quota(comp, mode), fields)
        if mode is RunMode.RANKED:
            comp.quota_per_day, comp.min_interval_s, comp.max_in_flight = (
                quota.per_day, quota.min_interval_s, quota.max_in_flight)
        else:
            merged[mode.value] = quota.to_dict()
    comp.mode_quotas = merged


def _checked(mode: RunMode, current: ModeQuota, fields: Any) -> ModeQuota:
    if not isinstance(fields, dict) or set(fields) - set(QUOTA_FIELDS):
        raise InvalidInputError(f"mode_quotas.{mode.value}: give any of {', '.join(QUOTA_FIELDS)}")
    values = {**current.to_dict(), **fields}
    for name in ("per_day", "max_in_flight"):
        value = values[name]
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= INT_MAX:
            raise InvalidInputError(f"mode_quotas.{mode.value}.{name} must be a whole number from 1 to {INT_MAX}")
    interval = values["min_interval_s"]
    if isinstance(interval, bool) or not isinstance(interval, int) or not 0 <= interval <= 24 * 3600:
        raise InvalidInputError(f"mode_quotas.{mode.value}.min_interval_s must be from 0 to a day (86400 s)")
    return ModeQuota(**values)
