"""The runner child's watch on its own threads: which appeared or ended around a call, and which
kept working while the runner slept (the late-work probe), from /proc/self/task (proc(5))."""

from __future__ import annotations

import os
import threading


def thread_ids() -> set[str]:
    return set(os.listdir("/proc/self/task"))


def thread_cpu_ns() -> dict[str, tuple[int, int]]:
    """(ns on a CPU, ns wanting one) of each thread of this process but the calling one (`schedstat`)."""
    own = str(threading.get_native_id())
    found = {}
    for tid in thread_ids() - {own}:
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as fh:
                found[tid] = schedstat(fh.read())
        except (OSError, ValueError, IndexError):
            continue
    return found


def own_schedstat() -> tuple[int, int]:
    """The calling thread's ns on a CPU and ns runnable but waiting for one (profiled calls only)."""
    try:
        with open("/proc/thread-self/schedstat") as fh:
            on_cpu, waiting = fh.read().split()[:2]
        return int(on_cpu), int(waiting)
    except (OSError, ValueError):
        return 0, 0


def schedstat(text: str) -> tuple[int, int]:
    """(ns the thread ran on a CPU, ns it ran or waited in a run queue for one), from the first two
    fields of /proc/<pid>/task/<tid>/schedstat (proc(5)). The second is the time it wanted a CPU: a
    thread that spins is runnable the whole window whatever the host's load, while on a loaded host
    it runs for only part of it. Run time alone fell under the share there (CI at load 50 and more),
    and a busy helper thread passed unseen."""
    fields = text.split()
    return int(fields[0]), int(fields[0]) + int(fields[1])


# A thread that wanted a CPU for more than this share of the late-write probe's sleep, and ran for
# more than BUSY_RUN_NS of it, is working off the clock: the runner is asleep and no kernel is
# running. An OpenMP pool's idle spin lasts about 10 us (GOMP_SPINCOUNT, judge/pipeline.py); on a
# loaded host such a thread may wait long in the run queue for that spin, but never runs 1 ms. A
# thread spinning the whole window runs more than that up to a load of about 300 on two cores.
BUSY_SHARE = 0.5
BUSY_RUN_NS = 1_000_000


def count_busy_threads(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]],
                       window_ns: int) -> int:
    """Threads that were busy (above) between two readings of `thread_cpu_ns`, `window_ns` apart."""
    busy = 0
    for tid, (ran, wanted) in after.items():
        ran_before, wanted_before = before.get(tid, (ran, wanted))
        busy += ran - ran_before > BUSY_RUN_NS and wanted - wanted_before > BUSY_SHARE * window_ns
    return busy


class ThreadWatch:
    """New threads around each call of one library. An OpenMP pool is made on a library's first
    calls and then reused, never ended; so a thread that appears after its second call, or one
    that appeared and has since ended, was started by the kernel to work off the clock."""

    def __init__(self) -> None:
        self.known: set[str] = set()
        self.recent: set[str] = set()  # appeared around a call; must never end
        self.calls: dict[str, int] = {}

    def start(self) -> None:
        """The threads the runner has before any kernel code runs."""
        self.known = thread_ids()

    def after_call(self, lib: str) -> tuple[int, set[str]]:
        """(threads counted as new for this call of `lib`, the threads that appeared around it)."""
        threads = thread_ids()
        count = self.calls[lib] = self.calls.get(lib, 0) + 1
        appeared = threads - self.known
        vanished = self.recent - threads
        self.recent = (self.recent | appeared) - vanished
        self.known |= threads
        return len(vanished) + (len(appeared) if count > 2 else 0), appeared

    def ended(self, appeared: set[str]) -> int:
        """How many of the threads that appeared around a call have ended since (the late-write
        probe's reading, after its sleep)."""
        return len(appeared - thread_ids())
