"""The CPU track: g++ with the judge's flags, host memory, OpenMP threads."""

from __future__ import annotations

import os
import platform
from typing import Any

from judge.backends import Backend
from judge.host import HostConfig
from judge.limits import CPU_LIMITS
from judge.sandbox.seal_tracks import runtime_rules
from judge.tracks import Track
from judge.tracks.cpu.runtime import CpuRuntime, last_level_cache_bytes
from judge.tracks.cpu.toolchain import GccToolchain


def _threads(host: HostConfig) -> int:
    return host.limits.threads or len(os.sched_getaffinity(0))


# Each OpenMP thread of the runner (the kernel's, torch's) bound to a core of its own. Unbound, a
# woken thread was often placed on its waker's core and the two shared it for a while: interleaved
# on this project's 2-vCPU host, eight judgings each way, a timed pair's spread fell from 16.6-33.5 %
# (mean 22.5) to 10.2-21.9 % (mean 16.0), and the ratios came out as the kernels measure alone
# (docs/benchmarks.md, 2026-12-02). The runner's main thread is OpenMP's thread 0: libgomp binds it
# to the first core when it loads, for the process's life, so two runs judged at once on one host
# would draw their inputs on that core too (workers judge one at a time; moving the thread per call
# was tried and bought nothing measurable, docs/benchmarks.md).
RUNNER_OPENMP_ENV = {"OMP_PROC_BIND": "spread", "OMP_PLACES": "cores"}


def _runtime_options(host: HostConfig) -> dict[str, Any]:
    # judging.md: a buffer of at least twice the last-level cache.
    threads = _threads(host)
    return {
        "flush_bytes": max(2 * last_level_cache_bytes(), 16 << 20),
        "threads": threads,
        # A generous ceiling (5 GHz, 64 FLOP/cycle: two AVX-512 FMA units per core): only
        # a time faster than any x86 core could manage trips judging.md's physical floor.
        "peak_flops": threads * 5e9 * 64,
        "cpu_model": platform.processor() or platform.machine(),
    }


TRACK = Track(
    backend=Backend.CPU,
    limits=CPU_LIMITS,
    make_toolchain=lambda host: GccToolchain(),
    make_runtime=CpuRuntime,
    runtime_options=_runtime_options,
    device_nodes=lambda host: [],
    host_clock=True,
    runner_env=lambda host: dict(RUNNER_OPENMP_ENV),
    runtime_rules=runtime_rules("cpu"),  # every rule (judge/sandbox/seal_tracks.py)
)
