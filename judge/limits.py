"""Explicit limits passed down to the engine; judge/ never reads the environment."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Limits:
    compile_time_limit_s: float = 60.0  # wall clock for one build
    compile_log_limit_bytes: int = 64 * 1024  # docs/rules.md: log cut to 64 KiB
    call_time_limit_s: float = 10.0  # one kernel_run call (TLE)
    run_time_limit_s: float = 600.0  # the whole judge run (TLE)
    case_time_budget_s: float = 2.0  # timing budget per case and kernel (the oracle checks are not counted)
    min_timed_calls: int = 10
    max_timed_calls: int = 1000
    # stop once the 95 % interval of the paired ratio is within 0.5 % of it (judge/case_timing.py)
    target_sem_ratio: float = 0.005
    min_warmup_calls: int = 3
    min_warmup_s: float = 0.1  # 100 ms on CPU, 25 ms on devices
    check_fraction: float = 0.25  # at least 1 in 4 timed outputs checked
    min_checked_calls: int = 3
    # Each other call of a block is checked too with this chance, so a kernel that spots a check
    # (the oracle's pause) learns nothing sure about the calls after it.
    extra_check_probability: float = 0.125
    memory_limit_mib: int = 8192  # address space of the runner child on the CPU track
    # A runner child's memory cgroup: what its processes hold, shared memory and tmpfs files
    # included, swap counted with it (judge/sandbox/memcg.py); 0: none. On every track.
    child_memory_mib: int = 8192
    workspace_limit_bytes: int = 1 << 30  # the largest kernel_workspace_bytes honoured
    max_processes: int = 256  # RLIMIT_NPROC inside the sandbox
    max_file_size_bytes: int = 64 * 1024 * 1024  # RLIMIT_FSIZE inside the sandbox
    max_open_files: int = 256
    stdout_limit_bytes: int = 1024 * 1024  # the kernel's stdout/stderr kept for the report
    source_limit_bytes: int = 512 * 1024  # one source file
    max_source_files: int = 16
    threads: int = 0  # OpenMP threads for the kernel; 0 = all cores the host gives
    # torch threads of the worker's float64 oracle when it runs on the CPU; 0 = all cores. One on
    # shared hosts (docs/benchmarks.md, "Oracle"); all where the oracle's cases are large (NPU).
    oracle_threads: int = 1
    # A timing phase the host disturbed (judge/hostload.py) is run again, within the run and outside
    # its time limit, up to this many phases in all, after pauses of backoff, 2 x backoff, ...
    # (judge/retime.py). 1: never again, the engine's default; the service's workers set 3
    # (OPJUDGE_DISTURBED_TIMING_ATTEMPTS, workers/settings.py).
    disturbed_timing_attempts: int = 1
    disturbed_backoff_s: float = 15.0
    # The timing phase starts a fresh pair of runner children (the submission's and the baseline's)
    # every this many timed cases, so that what one pair of processes draws (where its memory lands)
    # is not shared by every case of the score (judge/timing_children.py); 0: one pair a group, the
    # default (measured, fresh pairs cost a start-up each and did not narrow the score's spread).
    cases_per_timing_pair: int = 0


# 3.8 s a case: the `benchmarks` set's judge takes about 35 s of its 45 s target, but a ranked
# run times the private cases too, and that whole judge is near its 60 s target (docs/benchmarks.md,
# "Whole judge": 76.8 s at 4.5 s a case, about 66 s at 3.5 s on a slow host). It was 3.5 s until the
# runner children started during the build (judge/pipeline.py), which took about 4 s off a whole
# judge; those seconds went to pairs (the score's spread falls as 1 / sqrt(pairs)), not to the total.
CPU_LIMITS = Limits(case_time_budget_s=3.8)
# Device runtimes map large host buffers of their own (driver, pinned staging): more room on the host.
DEVICE_LIMITS = Limits(min_warmup_s=0.025, memory_limit_mib=0, child_memory_mib=16384)

# A track's runtime options may name the host memory its runtime holds in each child for the judge's
# own use (the CPU track's cache-flush buffer): it is added to `child_memory_mib`, never taken from
# the team's share (docs/security.md, "Memory").
RUNTIME_HOST_BYTES = "runtime_host_bytes"


def runtime_host_mib(runtime_options: dict[str, Any]) -> int:
    """The host memory the judge's runtime holds in each child, in MiB (rounded up)."""
    return -(-int(runtime_options.get(RUNTIME_HOST_BYTES, 0) or 0) // (1 << 20))


def child_memory_limit_mib(limits: Limits, runtime_options: dict[str, Any]) -> int | None:
    """A runner child's memory cgroup limit: the team's `child_memory_mib` and the judge's own
    buffers; None where the limits set no group."""
    return limits.child_memory_mib + runtime_host_mib(runtime_options) if limits.child_memory_mib else None
