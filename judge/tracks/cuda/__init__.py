"""The CUDA track: nvcc, torch CUDA tensors on a judge-owned stream, CUDA-event timing (docs/rules.md, "Timing").

Host settings read from `HostConfig`, its `CudaSettings` (judge/track_settings/cuda.py):
- `home`, `arch` (OPJUDGE_CUDA_HOME, OPJUDGE_CUDA_ARCH; default sm_90a, the H200/H100 target);
- the worker's own CUDA_VISIBLE_DEVICES,
  CUDA_DEVICE_ORDER and cuBLAS settings, read at the edge. The runner child, whose environment
  starts empty, gets the same, so it sees the very GPU the worker's own torch calls "cuda" (where
  the checker regenerates inputs and runs the oracle) and uses the first one. Unset: both see
  every GPU and use the first. `gpu_name`: the GPU's name when `nvidia-smi` cannot tell (peak table).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judge.backends import Backend
from judge.errors import InternalJudgeError
from judge.host_config import HostConfig
from judge.limits import DEVICE_LIMITS
from judge.policy.cuda import RULES
from judge.track_settings.cuda import CudaSettings
from judge.tracks import HostReport, Track
from judge.tracks.cuda.device import device_nodes, driver_library, find_peak, floor_peak_flops, gpu_name, nvidia_driver
from judge.tracks.cuda.doctor import doctor_checks
from judge.tracks.cuda.runtime import MIN_FLUSH_BYTES, CudaRuntime
from judge.tracks.cuda.seal import DECISIONS
from judge.tracks.cuda.toolchain import DEFAULT_CUDA_ARCH, CudaToolchain

# No RLIMIT_AS (memory_limit_mib = 0): CUDA reserves far more address space than it uses.
CUDA_LIMITS = DEVICE_LIMITS


def refuse_tf32_override(settings: CudaSettings) -> None:
    """Refuse a host whose torch is forced to compute float32 matmuls in TF32.

    The pass rule's same-dtype reference R is "true float32, no TF32" (the problem spec): with
    TORCH_ALLOW_TF32_CUBLAS_OVERRIDE set, torch's float32 matmuls use TF32 whatever the code asks,
    R's error grows and the bound for 16-bit kernels loosens. No code in the process can undo it.
    """
    value = (settings.torch_allow_tf32_cublas_override or "").strip()
    if value not in ("", "0"):
        raise InternalJudgeError(
            f"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE={value} forces TF32 in float32 matmuls, so the reference"
            " the pass rule compares with would not be true float32; unset it for this worker"
        )


def _smi_id(host: HostConfig) -> str:
    """The id `nvidia-smi -i` takes for the worker's first visible GPU (for its name only).

    nvidia-smi counts in PCI bus order; an index under CUDA's default order may name another GPU
    of the host, which only matters on hosts that mix GPU kinds (pin those with PCI_BUS_ID).
    """
    visible = (host.track_settings(CudaSettings).visible_devices or "").split(",")[0].strip()
    return visible or "0"


def runner_env(host: HostConfig) -> dict[str, str]:
    """The runner child's CUDA environment (its environment starts empty).

    The worker's own GPU view and numeric settings, so the child and the worker's checker use
    the same GPU and make the same inputs: both make every input (the forward pass is a matmul),
    and with different cuBLAS settings their bytes differ and every call ends as IE.
    LD_LIBRARY_PATH names the driver's folder, for the libraries libcuda itself loads by name
    (the JIT compiler, NVML) where they are not in the loader's cache.
    """
    env = host.track_settings(CudaSettings).child_environment()
    driver = driver_library()
    if driver is not None:
        env["LD_LIBRARY_PATH"] = str(Path(driver).parent)
    return env


def readonly_paths(host: HostConfig) -> list[Path]:
    """What CUDA reads besides the device nodes: the driver's folder and the PCI topology in /sys."""
    paths = [Path("/sys/bus/pci"), Path("/sys/devices")]
    driver = driver_library()
    if driver is not None:
        paths.insert(0, Path(driver).parent)
    return paths


def runtime_options(host: HostConfig) -> dict[str, Any]:
    """The child's runtime options (JSON), computed in the worker without a CUDA context.

    `peak_flops` is what the pipeline's physical-floor check reads: the chip's highest
    dense rate, safe for every dtype; `peak_flops_by_dtype` holds the per-dtype rates of
    `floor_peak_flops` for a check that knows the case's dtype.
    """
    settings = host.track_settings(CudaSettings)
    refuse_tf32_override(settings)
    name = settings.gpu_name or gpu_name(_smi_id(host))
    row = find_peak(name)
    return {
        "device_index": 0,  # the first GPU of the view the child shares with the worker
        "min_flush_bytes": MIN_FLUSH_BYTES,
        "gpu_name": name,
        "peak_flops": floor_peak_flops(row, None),
        "peak_flops_by_dtype": {d: floor_peak_flops(row, d) for d in ("float32", "float16", "bfloat16")},
        "driver_library": driver_library(),
    }


def pin_environment(device: str) -> dict[str, str]:
    """A worker pinned to GPU `device` (an index in PCI bus order, as nvidia-smi's, or a UUID) sees it alone;
    its runner children get the same view (`runner_env`)."""
    return {"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": device}


def make_toolchain(host: HostConfig) -> CudaToolchain:
    """nvcc from the settings' `home` (or the usual places) for their `arch` (default sm_90a)."""
    settings = host.track_settings(CudaSettings)
    return CudaToolchain(cuda_home=settings.home, arch=settings.arch or DEFAULT_CUDA_ARCH)


def profile_case(ctx: Any) -> list[Any]:
    """The CUDA track's profiler (ncu, profile.py), imported on first use: it imports the runner's session,
    which neither the runner child nor the service loads with the track."""
    from judge.tracks.cuda.profile import profile_case as profile

    return profile(ctx)


def known_peaks(device: str | None, same_host: bool) -> tuple[float, float | None, str] | None:
    """The datasheet table the engine's physical-floor check uses, for the run's GPU by name."""
    row = find_peak(device) if device else None
    return None if row is None else (row.fp32_flops, None, f"{row.name} fp32 datasheet rate")


TRACK = Track(
    backend=Backend.CUDA,
    settings=CudaSettings,
    limits=CUDA_LIMITS,
    make_toolchain=make_toolchain,
    make_runtime=CudaRuntime,
    runtime_options=runtime_options,
    device_nodes=lambda host: device_nodes(),
    runner_env=runner_env,
    readonly_paths=readonly_paths,
    generation_device="cuda",
    oracle_device="cuda",
    policy_rules=RULES,
    seal_decisions=DECISIONS,  # judge/tracks/cuda/seal.py
    profiler=profile_case,
    doctor_checks=doctor_checks,
    queue_device_setting="cuda_gpu",  # judge.cuda.<kind>
    pin_environment=pin_environment,
    source_language="cuda",  # machine review's lexer
    host_report=HostReport(device="device", driver_probe=nvidia_driver),
    known_peaks=known_peaks,
)
