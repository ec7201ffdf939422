"""How a competition's runs are judged beyond its problems: for now the NPU track's clock.

Stored in `Competition.judge_settings` (JSON), set by organisers through the admin API
(`npu_timing`, `npu_max_launches` on a competition's create or update), handed to the worker with
each claimed run (`ClaimedRun.judge_settings`), and passed to the judge as `HostConfig.extra`
(judge/tracks/npu/__init__.py `runtime_options`). A key the competition leaves unset falls back to
the worker's own default (OPJUDGE_NPU_TIMING / OPJUDGE_NPU_MAX_LAUNCHES), then to "events"; what
timed a run is recorded with it either way (its report's "Clock").
"""

from __future__ import annotations

from typing import Any

from api.store.errors import InvalidInputError

NPU_TIMINGS = ("events", "device")  # judge/tracks/npu/runtime.py TIMING_EVENTS, TIMING_DEVICE
MAX_LAUNCHES = 1000  # judge/tracks/npu/runtime.py MAX_LAUNCH_CAP
FIELDS = ("npu_timing", "npu_max_launches")


def apply_judge_settings(stored: dict[str, Any] | None, changes: dict[str, Any]) -> dict[str, Any]:
    """`stored` with the organiser's `changes` (keys of FIELDS) merged in; InvalidInputError if bad."""
    merged = dict(stored or {})
    for key, value in changes.items():
        if key == "npu_timing":
            if value not in NPU_TIMINGS:
                raise InvalidInputError(f"npu_timing must be one of {', '.join(NPU_TIMINGS)}, not {value!r}")
        elif key == "npu_max_launches":
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_LAUNCHES:
                raise InvalidInputError(f"npu_max_launches must be a whole number from 0 (any number) to "
                                        f"{MAX_LAUNCHES}, not {value!r}")
        else:
            raise InvalidInputError(f"unknown judging setting {key!r}; settable: {', '.join(FIELDS)}")
        merged[key] = value
    return merged


def host_extra(stored: dict[str, Any] | None) -> dict[str, str]:
    """The settings a worker adds to the judge's `HostConfig.extra`, as the strings it holds."""
    return {key: str(value) for key, value in (stored or {}).items() if key in FIELDS}
