"""The resource limits of a run's runner children (judge/run.py), from the run's limits and the host."""

from __future__ import annotations

from judge.tracks import Track

RUNNER_START_CPU_S = 30.0


def runner_cpu_seconds(run_time_limit_s: float, threads: int) -> float:
    """RLIMIT_CPU of the runner child: the run's limit for each thread it may keep busy.

    The kernel's OpenMP pool (and a device's spinning synchronisation) all count towards one
    RLIMIT_CPU; a limit of the run's seconds alone would stop a 64-thread kernel after 10 s.
    The wall-clock limit of the run is `_within_run_time`'s; this one only stops runaway CPU use.
    The child's start-up (Python, torch, the cases) is not charged to the run's wall clock, so it
    gets CPU seconds of its own: without them a loaded host hit this limit before the run's.
    """
    return run_time_limit_s * max(1, threads) + RUNNER_START_CPU_S


def runner_process_limit(max_processes: int, threads: int) -> int:
    """RLIMIT_NPROC of the runner children: `max_processes` beyond the threads the run needs.

    The limit counts every thread of the user the children run as, not one process's: the
    worker's (its oracle may use every core), the submission's child and the baseline's child,
    each with an OpenMP pool of `threads`. A fixed 256 would stop the baseline's child on a
    large host (two pools of 128 threads), and that is the judge's failure. Forks are killed by
    the runner's lockdown anyway; this limit only bounds threads.
    """
    return max_processes + 3 * max(1, threads)


def address_space_mib(track: Track, memory_cgroup: bool) -> int | None:
    """RLIMIT_AS of a runner child on a track with a host memory limit (device tracks set none).
    With a memory cgroup the group is the memory limit and the
    address space only a backstop (four times the limit): reserved but untouched address space is
    no memory, and OpenMP threads' stacks and glibc's 64 MiB malloc arenas reserve a lot of it on a
    many-core host. Without a group the address space is the limit (docs/security.md, "Memory")."""
    if not track.limits.memory_limit_mib:
        return None
    return track.limits.memory_limit_mib * (4 if memory_cgroup else 1)
