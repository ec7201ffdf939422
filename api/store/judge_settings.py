"""How a competition's runs are judged beyond its problems: the tracks' settings organisers may set.

Which settings those are, their types and bounds, is declared once, in each track's settings record
(judge/track_settings/; for now the NPU clock, `npu_timing` and `npu_max_launches`). They are stored
in `Competition.judge_settings` (JSON), set by organisers through the admin API (the same names on a
competition's create or update, api/web/schemas/competitions.py), handed to the worker with each claimed
run (`ClaimedRun.judge_settings`), and applied to the run's track's settings over the worker's own
defaults (judge/host.py `host_from_env`; e.g. OPJUDGE_NPU_TIMING, else "events"). What timed a run
is recorded with it either way (its report's "Clock").
"""

from __future__ import annotations

from typing import Any

from api.store.errors import InvalidInputError
from judge.track_settings import overridable

FIELDS = tuple(overridable())  # the public keys, e.g. "npu_timing"


def apply_judge_settings(stored: dict[str, Any] | None, changes: dict[str, Any]) -> dict[str, Any]:
    """`stored` with the organiser's `changes` (keys of FIELDS) merged in; InvalidInputError if bad."""
    declared = overridable()
    merged = dict(stored or {})
    for key, value in changes.items():
        if key not in declared:
            raise InvalidInputError(f"unknown judging setting {key!r}; settable: {', '.join(FIELDS)}")
        try:
            declared[key].check(value)
        except ValueError as exc:
            raise InvalidInputError(str(exc)) from None
        merged[key] = value
    return merged


def run_settings(stored: dict[str, Any] | None) -> dict[str, Any]:
    """The settings a claimed run carries to its worker (only those a track still declares)."""
    return {key: value for key, value in (stored or {}).items() if key in FIELDS}
