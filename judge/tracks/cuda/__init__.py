"""The CUDA track: nvcc, torch CUDA tensors on a judge-owned stream, CUDA-event timing (issue 7).

Host settings read from `HostConfig`:
- `cuda_home`, `cuda_arch` (default sm_90a, the H200/H100 target);
- `extra["cuda_device"]`: the CUDA ordinal the runner child uses (default "0");
- `extra["cuda_gpu_name"]`: the GPU's name when `nvidia-smi` cannot tell (peak table).
"""

from __future__ import annotations

from typing import Any

from judge.backends import Backend
from judge.host import HostConfig
from judge.limits import DEVICE_LIMITS
from judge.tracks import Track
from judge.tracks.cuda.device import device_nodes, driver_library, find_peak, floor_peak_flops, gpu_name
from judge.tracks.cuda.runtime import MIN_FLUSH_BYTES, CudaRuntime
from judge.tracks.cuda.toolchain import DEFAULT_CUDA_ARCH, CudaToolchain

# No RLIMIT_AS (memory_limit_mib = 0): CUDA reserves far more address space than it uses.
CUDA_LIMITS = DEVICE_LIMITS


def _device_index(host: HostConfig) -> int:
    return int(host.extra.get("cuda_device", "0"))


def runtime_options(host: HostConfig) -> dict[str, Any]:
    """The child's runtime options (JSON), computed in the worker without a CUDA context.

    `peak_flops` is what the pipeline's physical-floor check reads: the chip's highest
    dense rate, safe for every dtype; `peak_flops_by_dtype` holds the per-dtype rates of
    `floor_peak_flops` for a check that knows the case's dtype.
    """
    name = host.extra.get("cuda_gpu_name") or gpu_name(_device_index(host))
    row = find_peak(name)
    return {
        "device_index": _device_index(host),
        "min_flush_bytes": MIN_FLUSH_BYTES,
        "gpu_name": name,
        "peak_flops": floor_peak_flops(row, None),
        "peak_flops_by_dtype": {d: floor_peak_flops(row, d) for d in ("float32", "float16", "bfloat16")},
        "driver_library": driver_library(),
    }


def make_toolchain(host: HostConfig) -> CudaToolchain:
    """nvcc from `host.cuda_home` (or the usual places) for `host.cuda_arch` (default sm_90a)."""
    return CudaToolchain(cuda_home=host.cuda_home, arch=host.cuda_arch or DEFAULT_CUDA_ARCH)


TRACK = Track(
    backend=Backend.CUDA,
    limits=CUDA_LIMITS,
    make_toolchain=make_toolchain,
    make_runtime=CudaRuntime,
    runtime_options=runtime_options,
    device_nodes=lambda host: device_nodes(),
)
