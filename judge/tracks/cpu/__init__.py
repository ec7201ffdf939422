"""The CPU track: g++ with the judge's flags, host memory, OpenMP threads."""

from __future__ import annotations

import os
import platform
import tempfile
from pathlib import Path
from typing import Any

from judge.backends import Backend
from judge.host_config import HostConfig
from judge.limits import CPU_LIMITS, RUNTIME_HOST_BYTES
from judge.policy.cpu import RULES
from judge.track_settings.cpu import CpuSettings
from judge.tracks import HostReport, Track
from judge.tracks.cpu.doctor import cpu_model, doctor_checks
from judge.tracks.cpu.evict import helper_for
from judge.tracks.cpu.runtime import CpuRuntime, last_level_cache_bytes
from judge.tracks.cpu.seal import DECISIONS
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


def _helper_folder(host: HostConfig) -> Path:
    return (host.cache_dir or host.work_root / ".opjudge") / "native"


def _flush(host: HostConfig) -> tuple[str, Path | None]:
    """The cache flush (docs/rules.md, "Timing"): the buffer by default; `CpuSettings.flush = "lines"`
    (OPJUDGE_CPU_FLUSH) evicts the call's lines instead where the helper builds. Not the default:
    the calls it leaves cold ran 1-2 % faster than after the buffer, whose dirty lines the call writes
    back (bench/flush_methods.py, docs/benchmarks.md "The cache flush"), and the two must agree to 0.5 %.
    The helper is built either way: untimed calls evict only their own lines with it."""
    wanted = host.track_settings(CpuSettings).flush  # one of its declared choices: the record checks
    helper = helper_for(_helper_folder(host))
    return ("lines" if wanted == "lines" and helper is not None else "buffer"), helper


def _peak_flops(threads: int) -> float:
    """A generous ceiling (5 GHz, 64 FLOP/cycle: two AVX-512 FMA units per core): only a time
    faster than any x86 core could manage trips docs/rules.md's physical floor."""
    return threads * 5e9 * 64


def _runtime_options(host: HostConfig) -> dict[str, Any]:
    threads = _threads(host)
    method, helper = _flush(host)
    flush_bytes = max(2 * last_level_cache_bytes(), 16 << 20)
    return {
        "flush": method,
        "evict_library": str(helper) if helper is not None else "",
        # The buffer flush: at least twice the last-level cache (docs/rules.md, "Timing").
        "flush_bytes": flush_bytes,
        # Host memory the runtime holds for the judge in each child (the flush buffer: 960 MiB on a
        # host whose L3 is 480 MiB), added to the child's memory limit rather than taken from it.
        RUNTIME_HOST_BYTES: flush_bytes if method == "buffer" else 0,
        "threads": threads,
        "peak_flops": _peak_flops(threads),
        "cpu_model": platform.processor() or platform.machine(),
    }


def _known_peaks(device: str | None, same_host: bool) -> tuple[float, float | None, str] | None:
    """The ceiling `_runtime_options` gives the engine, for a run judged on this very host only."""
    if not same_host:
        return None
    host = HostConfig(work_root=Path(tempfile.gettempdir()), limits=CPU_LIMITS)
    ceiling = _peak_flops(_threads(host))
    return (ceiling, None, "the judge's generous CPU ceiling for this host") if ceiling > 0 else None


def profile_case(ctx: Any) -> list[Any]:
    """The CPU track's profiler (judge/profiling/cpu.py), imported on first use: it imports the runner's session,
    which neither the runner child nor the service loads with the track."""
    from judge.tracks.cpu.profile import profile_case as profile

    return profile(ctx)


TRACK = Track(
    backend=Backend.CPU,
    settings=CpuSettings,
    limits=CPU_LIMITS,
    make_toolchain=lambda host: GccToolchain(),
    make_runtime=CpuRuntime,
    runtime_options=_runtime_options,
    readonly_paths=lambda host: [_helper_folder(host)],  # the line-flush helper, loaded by the child
    device_nodes=lambda host: [],
    host_clock=True,
    early_submission_start=True,
    no_ipc=True,  # its seal refuses IPC objects too
    runner_env=lambda host: dict(RUNNER_OPENMP_ENV),
    policy_rules=RULES,
    seal_decisions=DECISIONS,  # judge/tracks/cpu/seal.py
    profiler=profile_case,
    doctor_checks=doctor_checks,
    host_report=HostReport(device_probe=cpu_model),  # the compiler's check names the toolchain
    known_peaks=_known_peaks,
)
