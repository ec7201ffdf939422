"""Per-thread CPU accounting of a process, for the CPU profile of a timed case
(docs/user-guide.md, "Reading the profile").

Linux keeps each thread's user and system time in /proc/<pid>/task/<tid>/stat. Read from the
worker before and after a block of calls of the runner child, the difference is each kernel
thread's busy time during those calls, read outside them (nothing runs inside the timed calls).
From it: the load balance (the busiest thread over the mean) and the idle share of the threads'
wall time, which is what uneven sparse blocks do to a kernel's cores.

Where the kernel offers it, each thread's schedstat (nanoseconds on a CPU) is read instead of
stat's clock ticks (10 ms): a profiled pass adds up calls of a millisecond or less. The profile of
a case (judge/profiling/cpu.py) reads these around each call of its untimed pass.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class ThreadTime:
    tid: int
    name: str
    busy_s: float  # user + system CPU time
    wait_s: float = 0.0  # runnable but waiting for a CPU (schedstat's run delay; 0 where unknown)


@dataclass(frozen=True)
class LoadBalance:
    threads: int
    busy_s: tuple[float, ...]  # per thread, busiest first
    mean_s: float
    imbalance: float  # busiest / mean: 1.0 is perfectly even
    idle_share: float  # of threads x wall time, the share no thread was busy


def parse_stat(text: str) -> tuple[str, float]:
    """(thread name, user + system seconds) from one /proc/.../stat line.

    The name sits in parentheses and may itself hold spaces and parentheses: the fields
    start after the last ')'. utime and stime are fields 14 and 15 (proc(5)).
    """
    open_at, close_at = text.index("("), text.rindex(")")
    fields = text[close_at + 2 :].split()
    utime, stime = int(fields[11]), int(fields[12])
    return text[open_at + 1 : close_at], (utime + stime) / CLOCK_TICKS


def thread_times(pid: int, proc: Path = Path("/proc"), *, precise: bool = True) -> dict[int, ThreadTime]:
    """Every live thread of `pid` with its CPU time so far (threads that exit meanwhile are skipped).

    `precise`: the time from schedstat (ns) where the kernel keeps it, else from stat (ticks).
    """
    found = {}
    for task in (proc / str(pid) / "task").iterdir():
        if (thread := task_time(task, precise=precise)) is not None:
            found[thread.tid] = thread
    return found


def task_time(task: Path, *, precise: bool = True) -> ThreadTime | None:
    """One thread's CPU time so far, from its /proc/<pid>/task/<tid> folder; None once it has ended."""
    try:
        name, busy = parse_stat((task / "stat").read_text())
        wait = 0.0
        if precise:
            busy, wait = _schedstat_s(task, busy)
        return ThreadTime(int(task.name), name, busy, wait)
    except (OSError, ValueError, IndexError):
        return None  # the thread ended while we read


def _schedstat_s(task: Path, fallback: float) -> tuple[float, float]:
    """schedstat's first two fields: s on a CPU, and s runnable but waiting for one (proc(5);
    absent without CONFIG_SCHED_INFO: then stat's busy time and no wait)."""
    try:
        on_cpu, waiting = (task / "schedstat").read_text().split()[:2]
        return int(on_cpu) / 1e9, int(waiting) / 1e9
    except (OSError, ValueError, IndexError):
        return fallback, 0.0


def subtree_pids(root: int, proc: Path = Path("/proc")) -> list[int]:
    """`root` and every process below it (a sandbox puts one or two of its own above the runner)."""
    parents: dict[int, int] = {}
    for stat in proc.glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            parents[int(stat.parent.name)] = int(text[text.rindex(")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    found, frontier = [root], [root]
    while frontier:
        frontier = [pid for pid, parent in parents.items() if parent in frontier and pid not in found]
        found += frontier
    return found


def busiest_process(root: int, proc: Path = Path("/proc")) -> int:
    """The process of `root`'s subtree with the most threads: the runner child, whose kernel has a pool."""
    def threads(pid: int) -> int:
        try:
            return len(list((proc / str(pid) / "task").iterdir()))
        except OSError:
            return 0
    return max(subtree_pids(root, proc), key=threads)


def busy_between(before: dict[int, ThreadTime], after: dict[int, ThreadTime]) -> list[ThreadTime]:
    """Each thread's CPU (and run-queue) time between two snapshots (a thread born meanwhile counts from 0)."""
    deltas = []
    for tid, now in after.items():
        start = before.get(tid, ThreadTime(tid, now.name, 0.0))
        deltas.append(ThreadTime(tid, now.name, max(0.0, now.busy_s - start.busy_s),
                                 max(0.0, now.wait_s - start.wait_s)))
    return deltas


def load_balance(deltas: list[ThreadTime], wall_s: float, *, min_busy_s: float = 0.0) -> LoadBalance | None:
    """The balance of the threads that worked (busier than `min_busy_s`) over `wall_s` of calls."""
    busy = sorted((d.busy_s for d in deltas if d.busy_s > min_busy_s), reverse=True)
    if not busy or wall_s <= 0:
        return None
    mean = sum(busy) / len(busy)
    idle = max(0.0, 1.0 - sum(busy) / (len(busy) * wall_s))
    return LoadBalance(len(busy), tuple(busy), mean, busy[0] / mean if mean else 1.0, idle)
