"""What the worker knows about its GPU without touching CUDA: peak rates, device nodes, driver.

Everything here runs in the worker (the parent), which must not create a CUDA
context of its own: the GPU's name comes from `nvidia-smi`, the driver library's
path from loading it (a plain dlopen, no context). The runner child gets the
results as JSON options (judge/tracks/cuda/runtime.py).
"""

from __future__ import annotations

import ctypes
import glob
import os
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path


@dataclass(frozen=True)
class GpuPeak:
    """Vendor datasheet rates, dense (no 2:4 sparsity), in FLOP/s."""

    name: str  # substring of the device name that selects this row
    tensor16_flops: float  # fp16/bf16 inputs with fp32 accumulation on tensor cores
    tf32_flops: float  # TF32 tensor cores
    fp32_flops: float  # plain fp32 FMA on CUDA cores (counted as 2 FLOP)


# Most specific names first: "H100 PCIe" must win over "H100".
PEAK_TABLE: tuple[GpuPeak, ...] = (
    GpuPeak("GH200", 989.4e12, 494.7e12, 66.9e12),
    GpuPeak("H200 NVL", 835.5e12, 417.5e12, 60.0e12),
    GpuPeak("H200", 989.4e12, 494.7e12, 66.9e12),  # SXM: the H100 SXM's rates (H200.md)
    GpuPeak("H100 PCIe", 756.0e12, 378.0e12, 51.2e12),
    GpuPeak("H100 NVL", 835.5e12, 417.5e12, 60.0e12),
    GpuPeak("H100", 989.4e12, 494.7e12, 66.9e12),
    GpuPeak("H800", 989.4e12, 494.7e12, 66.9e12),
    GpuPeak("B200", 2250e12, 1100e12, 80.0e12),
    GpuPeak("A100", 312.0e12, 156.0e12, 19.5e12),
    GpuPeak("A800", 312.0e12, 156.0e12, 19.5e12),
    GpuPeak("L40S", 362.1e12, 183.0e12, 91.6e12),
    GpuPeak("RTX 4090", 165.2e12, 82.6e12, 82.6e12),
)


def find_peak(device_name: str) -> GpuPeak | None:
    """The table row for a device name such as "NVIDIA H200"; None for an unknown GPU."""
    for row in PEAK_TABLE:
        if row.name.lower() in device_name.lower():
            return row
    return None


def floor_peak_flops(row: GpuPeak | None, dtype: str | None) -> float:
    """The rate for the physical-floor check (docs/rules.md) of a case of `dtype`; 0 disables it.

    The floor must only catch the impossible, so each dtype gets the fastest rate at
    which a correct kernel could still work:
    - float16/bfloat16: the dense 16-bit tensor-core rate;
    - float32: the TF32 tensor-core rate. A float32 case may pass with split-TF32 or
      split-bf16 tricks on tensor cores (each needs at least three products, so at most
      a third of the 16-bit rate, under the TF32 rate); plain fp32 FMA is far below;
    - None (dtype unknown): the highest rate of the chip, the 16-bit one.
    """
    if row is None:
        return 0.0
    if dtype == "float32":
        return row.tf32_flops
    return row.tensor16_flops


@cache
def gpu_name(index: int | str = 0) -> str:
    """The name of GPU `index` (nvidia-smi's index, or a GPU UUID) as `nvidia-smi` reports it; "" when there is none."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", str(index)],
            capture_output=True, text=True, timeout=30, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.strip().splitlines()[0].strip() if out.strip() else ""


def nvidia_driver() -> str:
    """The NVIDIA driver's version as `nvidia-smi` reports it ("NVIDIA driver 550.54.15"); "" without one."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    return f"NVIDIA driver {out.split()[0]}" if out.strip() else ""


@cache
def driver_library() -> str | None:
    """The path of libcuda.so.1 as this process's loader finds it; None without a driver.

    The runner child starts with a cleared environment, so a driver found only through
    LD_LIBRARY_PATH (as in many CUDA images) would be missing there: the child preloads
    this exact file instead.
    """
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            if os.path.basename(path).startswith("libcuda.so"):
                return path
    return None


def device_nodes(dev: Path = Path("/dev")) -> list[str]:
    """The NVIDIA device nodes to bind into the sandbox: every GPU node, control and UVM."""
    gpus = sorted(glob.glob(str(dev / "nvidia[0-9]*")), key=lambda p: int(Path(p).name[6:] or 0))
    control = [str(dev / n) for n in ("nvidiactl", "nvidia-uvm", "nvidia-uvm-tools")]
    return [p for p in (*gpus, *control) if os.path.exists(p)]
