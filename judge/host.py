"""What a judging host offers: limits, isolation, toolchain locations. Built by the caller.

judge/ never reads the environment: the CLI and the workers build a `HostConfig`
from their settings and pass it down.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from judge.limits import CPU_LIMITS, Limits


@dataclass(frozen=True)
class HostConfig:
    work_root: Path  # runs get a fresh folder below this one
    limits: Limits = CPU_LIMITS
    sandbox_mode: str = "auto"  # strict | auto | off (judge/sandbox/select.py)
    # A memory cgroup per runner child (judge/sandbox/memcg.py): auto (where the host allows one),
    # required (else every run is IE with the reason), off.
    memory_cgroup: str = "auto"
    cache_dir: Path | None = None  # oracle results and baseline builds; None disables caching
    # Bounds of the oracle cache (judge/oracle_cache.py); None: unbounded, max bytes 0: no oracle cache.
    oracle_cache_max_bytes: int | None = None
    oracle_cache_max_age_s: float | None = None
    problems_dir: Path | None = None  # None: the repository's problems/
    reference_dir: Path | None = None  # None: the repository's reference_kernels/
    cuda_home: Path | None = None  # where nvcc lives (CUDA track)
    cuda_arch: str | None = None  # e.g. "sm_90a"; None: from the device
    ascend_home: Path | None = None  # CANN toolkit root (NPU track)
    ascend_soc: str | None = None  # e.g. "Ascend910B3"
    extra: dict[str, str] = field(default_factory=dict)
