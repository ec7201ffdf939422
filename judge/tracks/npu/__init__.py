"""The NPU track: Ascend C built with CANN, run on an Ascend NPU through torch_npu.

Built from CANN's documentation and not yet run on NPU hardware (docs/npu-worker.md says
what has and has not been checked). Besides the `Track` fields, this module offers what
the engine needs for a device host that the `Track` dataclass has no field for yet:
- `runner_env(host)`: environment the runner child needs (CANN's libraries, device visibility);
- `readonly_paths(host)`: folders to bind read-only into the sandbox (driver, CANN);
- `python_baseline`: the vendor-operator baseline seam (judge/tracks/npu/baseline.py).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from judge.backends import Backend
from judge.errors import ToolchainUnavailableError
from judge.host_config import HostConfig
from judge.limits import DEVICE_LIMITS
from judge.track_settings.npu import NpuSettings
from judge.tracks import HostReport, Track
from judge.tracks.npu.baseline import python_baseline
from judge.tracks.npu.cann import cann_version, soc_family
from judge.tracks.npu.doctor import doctor_checks
from judge.tracks.npu.policy import RULES
from judge.tracks.npu.runtime import DEFAULT_FLUSH_BYTES, NpuRuntime
from judge.tracks.npu.seal import DECISIONS
from judge.tracks.npu.toolchain import AscendToolchain

# ascendc_library runs several CMake sub-builds (precompile, device, host stub): minutes, not seconds.
# The float64 oracle runs on the host (NPUs have no float64): on every core, or a benchmark case
# (about 5*10^8 query-key pairs) takes minutes per checked call.
NPU_LIMITS = dataclasses.replace(DEVICE_LIMITS, compile_time_limit_s=300.0, oracle_threads=0)

# A generous ceiling per SoC family (dense fp16 on the Cube units, rounded up): only a time no
# chip of the family could reach trips the physical-floor check (docs/rules.md).
PEAK_FLOPS = {"ascend910b": 1.0e15, "ascend910": 5.0e14, "ascend310p": 2.0e14, "ascend310b": 5.0e13}

DEVICE_NODES = ("/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc")


def device_index(host: HostConfig) -> int:
    """The physical NPU this worker judges on (its `NpuSettings.device`, default 0)."""
    return int(host.track_settings(NpuSettings).device)


def logical_index(physical: int, dev: Path = Path("/dev")) -> int:
    """The runtime's id of physical NPU `physical`, as ASCEND_RT_VISIBLE_DEVICES takes it: its
    place among the davinci nodes this host or container shows (a container given only
    /dev/davinci5 calls it 0). Without its node, `physical` itself, and the runtime says so."""
    present = sorted(int(p.name[7:]) for p in dev.glob("davinci[0-9]*") if p.name[7:].isdigit())
    return present.index(physical) if physical in present else physical


def device_nodes(host: HostConfig) -> list[str]:
    """The character devices the runner child needs: its own davinciN and the shared managers."""
    return [f"/dev/davinci{device_index(host)}", *DEVICE_NODES]


def readonly_paths(host: HostConfig) -> list[Path]:
    """Folders and files the child reads: the driver (first: doctor reads it), the install record, the CANN tree.

    The CANN tree is `cann.read_only_paths`: `latest/` alone would leave its links into the
    version folder dangling in the sandbox, and the runtime libraries and the OPP tree with them.
    """
    from judge.tracks.npu.cann import read_only_paths as cann_read_only_paths

    settings = host.track_settings(NpuSettings)
    paths = [settings.driver, Path("/etc/ascend_install.info")]
    if settings.ascend_home is not None:
        paths += [p for p in cann_read_only_paths(settings.ascend_home) if p not in paths]
    return paths


def runner_env(host: HostConfig) -> dict[str, str]:
    """What CANN's set_env.sh would export for the runner child (torch_npu and the kernel need it).

    The sandbox shows the child only /dev/davinci<N>; ASCEND_RT_VISIBLE_DEVICES (which takes the
    runtime's logical id, `logical_index`) makes that device the child's npu:0, which is the
    index `runtime_options` gives the runtime.
    """
    settings = host.track_settings(NpuSettings)
    driver = settings.driver
    libraries = [driver / "lib64" / "common", driver / "lib64" / "driver", driver / "lib64"]
    # TASK_QUEUE_ENABLE=0: torch_npu enqueues on the stream itself, not from its task thread, so the
    # timing events sit right around kernel_run (runtime.py).
    env = {"ASCEND_RT_VISIBLE_DEVICES": str(logical_index(device_index(host))), "TASK_QUEUE_ENABLE": "0"}
    if settings.ascend_home is not None:
        root = settings.ascend_home
        libraries = [root / "lib64", root / "runtime" / "lib64", *libraries]
        env.update(ASCEND_HOME_PATH=str(root), ASCEND_TOOLKIT_HOME=str(root), ASCEND_OPP_PATH=str(root / "opp"),
                   ASCEND_AICPU_PATH=str(root))
    env["LD_LIBRARY_PATH"] = ":".join(str(p) for p in libraries)
    return env


def runtime_options(host: HostConfig) -> dict[str, Any]:
    """JSON options for `NpuRuntime` in the runner child."""
    settings = host.track_settings(NpuSettings)
    soc = settings.soc or ""
    family = soc_family(soc) if soc else None
    home = settings.ascend_home
    return {
        "device_index": 0,  # the child sees only its own device (runner_env)
        "flush_bytes": DEFAULT_FLUSH_BYTES,
        "peak_flops": PEAK_FLOPS.get(family or "", 0.0),
        "soc": soc,
        "cann_version": cann_version(home) if home and home.is_dir() else "unknown",
        # The clock (runtime.py): "events" or "device" (profiler, launches counted); the competition's
        # setting, else the worker's default (judge/track_settings/npu.py), else events.
        "timing": settings.timing,
        "max_launches": settings.max_launches,
    }


def under_profiler(host: HostConfig, env: dict[str, str],
                   options: dict[str, Any]) -> tuple[dict[str, str], dict[str, Any]]:
    """The child under `msprof op`: no ASCEND_RT_VISIBLE_DEVICES, the device named by its runtime id instead.

    msprof op does not support ASCEND_RT_VISIBLE_DEVICES (CANN 8.0's msprof op guide, atlasopdev_16_0082:
    "当前不支持设置ASCEND_RT_VISIBLE_DEVICES环境变量后,使用msProf工具") and has no device option of its own
    (msopprof's options: the application picks the device). So the profiled child sets the device
    itself, by the id the runtime gives it among the devices this host or container shows
    (`logical_index`); docs/npu-worker.md, "Profiling with msprof op".
    """
    env = {k: v for k, v in env.items() if k != "ASCEND_RT_VISIBLE_DEVICES"}
    return env, {**options, "device_index": logical_index(device_index(host))}


def pin_environment(device: str) -> dict[str, str]:
    """A worker pinned to NPU `device`: OPJUDGE_DEVICE names the physical NPU (/dev/davinci<N>), the runtime
    counts the ones it sees (`logical_index`)."""
    return {"ASCEND_RT_VISIBLE_DEVICES": str(logical_index(int(device))) if device.isdigit() else device}


def vendor_release(options: dict[str, Any]) -> tuple[str, str] | None:
    """The CANN release `runtime_options` read on this worker, which the vendor operators' contracts are per."""
    version = options.get("cann_version")
    return ("CANN", str(version)) if version else None


def make_runtime(options: dict[str, Any]) -> NpuRuntime:
    """The runtime for the runner child; ToolchainUnavailableError when torch_npu is missing."""
    return NpuRuntime(options)


def make_toolchain(host: HostConfig) -> AscendToolchain:
    return AscendToolchain(host)


def profile_case(ctx: Any) -> list[Any]:
    """The NPU track's profiler (msprof op, profile.py), imported on first use: it imports the runner's session,
    which neither the runner child nor the service loads with the track."""
    from judge.tracks.npu.profile import profile_case as profile

    return profile(ctx)


TRACK = Track(
    backend=Backend.NPU,
    settings=NpuSettings,
    limits=NPU_LIMITS,
    make_toolchain=make_toolchain,
    make_runtime=make_runtime,
    runtime_options=runtime_options,
    device_nodes=device_nodes,
    runner_env=runner_env,
    readonly_paths=readonly_paths,
    python_baseline=python_baseline,
    generation_device="npu",
    oracle_device="cpu",  # docs/rules.md allows the host; NPUs have no float64 units
    # Ascend's matmul and reductions are not run-to-run reproducible unless asked: the child
    # and the worker both make every input (with the forward pass) and must agree bit for bit.
    deterministic_generation=True,
    policy_rules=RULES,
    seal_decisions=DECISIONS,  # judge/tracks/npu/seal.py
    profiler=profile_case,
    doctor_checks=doctor_checks,
    queue_device_setting="npu_soc",  # judge.npu.<kind>
    under_profiler=under_profiler,
    pin_environment=pin_environment,
    vendor_release=vendor_release,
    device_setting="npu_device",  # the worker's OPJUDGE_DEVICE, judged on by `device_index`
    host_report=HostReport(toolchain="CANN toolkit", device="torch_npu", driver="driver"),  # doctor.py's checks
)

__all__ = ["TRACK", "AscendToolchain", "NpuRuntime", "ToolchainUnavailableError", "device_nodes",
           "logical_index", "pin_environment", "python_baseline", "readonly_paths", "runner_env", "runtime_options",
           "under_profiler"]
