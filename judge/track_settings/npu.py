"""The NPU track's settings (base.py: how a setting is declared), among them the CANN root and SoC,
read as a shell where CANN's set_env.sh was sourced names them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from judge.track_settings.base import TrackSettings, setting

DEFAULT_DRIVER_DIR = Path("/usr/local/Ascend/driver")
ENV_VARIABLES = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME")  # exported by CANN's set_env.sh
NO_SOC = "default"  # OPJUDGE_NPU_SOC's value for a worker that names no SoC


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
    # OPJUDGE_ASCEND_HOME wins over the set_env.sh variables; an empty variable counts as unset.
    ascend_home: Path | None = setting(None, env=("OPJUDGE_ASCEND_HOME", *ENV_VARIABLES),
                                       meaning="the CANN toolkit's root (its set_env.sh's ASCEND_HOME_PATH)")
    # OPJUDGE_NPU_SOC is also the worker's queue suffix (api/settings.py); "default" there names none.
    soc: str | None = setting(None, env=("OPJUDGE_NPU_SOC", "SOC_VERSION"),
                              meaning="the SoC to compile for, as CANN spells it (e.g. Ascend910B3)")

    def __post_init__(self) -> None:
        if self.soc == NO_SOC:
            object.__setattr__(self, "soc", None)
        super().__post_init__()


SETTINGS = NpuSettings
