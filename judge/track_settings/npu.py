"""The NPU track's settings (base.py: how a setting is declared), and the CANN root and SoC
a shell where CANN's set_env.sh was sourced names (`ascend_host_fields`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from judge.track_settings.base import TrackSettings, setting

DEFAULT_DRIVER_DIR = Path("/usr/local/Ascend/driver")
ENV_VARIABLES = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME")  # exported by CANN's set_env.sh


@dataclass(frozen=True)
class NpuSettings(TrackSettings):
    track: ClassVar[str] = "npu"

    # OPJUDGE_DEVICE as the workers read it; OPJUDGE_NPU_DEVICE is its earlier name. Text, not a
    # number: on a CUDA host the same variable names a GPU, maybe by its UUID.
    device: str = setting("0", env=("OPJUDGE_DEVICE", "OPJUDGE_NPU_DEVICE"),
                          meaning="the physical NPU this worker judges on (/dev/davinci<N>)")
    # The clock (judge/tracks/npu/runtime.py): the worker's environment gives only its default; a
    # competition's own value, sent with each run, wins; each run records which clock timed it.
    timing: str = setting(
        "events", env="OPJUDGE_NPU_TIMING", choices=("events", "device"), overridable=True,
        meaning="the NPU clock: events around the call, or the device time of its tasks (launches counted)")
    max_launches: int = setting(
        0, env="OPJUDGE_NPU_MAX_LAUNCHES", ge=0, le=1000, overridable=True,
        meaning="under device timing, the launches one timed call of a team's kernel may make (0: any number)")
    driver: Path = setting(DEFAULT_DRIVER_DIR, meaning="the Ascend driver's folder (its libraries, bound read-only)")
    cmake: str = setting("cmake", meaning="the cmake that runs CANN's ascendc_library build")
    build_jobs: int = setting(0, ge=0, meaning="parallel jobs of the NPU build (0: one per core)")


def ascend_host_fields(environ: Mapping[str, str]) -> dict[str, Path | str]:
    """`HostConfig`'s `ascend_home` and `ascend_soc` as an environment the caller passes in gives them.

    OPJUDGE_ASCEND_HOME wins over the set_env.sh variables; OPJUDGE_NPU_SOC (the worker's queue
    suffix) gives the SoC, "default" none. Absent values are left out.
    """
    fields: dict[str, Path | str] = {}
    for name in ("OPJUDGE_ASCEND_HOME", *ENV_VARIABLES):
        if environ.get(name):
            fields["ascend_home"] = Path(environ[name])
            break
    soc = environ.get("OPJUDGE_NPU_SOC") or environ.get("SOC_VERSION")
    if soc and soc != "default":
        fields["ascend_soc"] = soc
    return fields


SETTINGS = NpuSettings
