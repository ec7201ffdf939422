"""The runner child's busy-thread probe (judge/runner/child/threads.py) on scripted schedstat readings.

The corpus entry exploit_busy_helper_thread (SV) runs the probe for real; these readings pin the
rule so that it cannot depend on the host's load: a spinning thread is seen whether it got the
whole window or a sliver of it, and an idle OpenMP thread is not, however long it waited.
"""

from __future__ import annotations

import threading
import time

from judge.runner.child.threads import BUSY_RUN_NS, count_busy_threads, schedstat

MS = 1_000_000
WINDOW = 150 * MS  # the correctness calls' late-write probe (pipeline.CORRECTNESS_LATE_PROBE_MS)


def _reading(**threads: tuple[int, int]) -> dict[str, tuple[int, int]]:
    return dict(threads)


def test_schedstat_is_run_time_and_run_plus_wait() -> None:
    assert schedstat("1500 2500 7\n") == (1500, 4000)


def test_a_spinning_thread_is_busy_on_a_quiet_and_on_a_loaded_host() -> None:
    before = _reading(a=(0, 0))
    quiet = _reading(a=(148 * MS, 149 * MS))  # had a core to itself
    loaded = _reading(a=(3 * MS, 149 * MS))  # load ~100 on two cores: ran 2 % of the window, queued the rest
    assert count_busy_threads(before, quiet, WINDOW) == 1
    assert count_busy_threads(before, loaded, WINDOW) == 1


def test_an_idle_pool_thread_is_not_busy_however_long_it_waited() -> None:
    before = _reading(a=(10 * MS, 20 * MS))
    # Spun its ~10 us after a very long wait for a CPU, then slept.
    after = _reading(a=(10 * MS + 10_000, 20 * MS + 140 * MS))
    assert count_busy_threads(before, after, WINDOW) == 0
    asleep = _reading(a=(10 * MS, 20 * MS))
    assert count_busy_threads(before, asleep, WINDOW) == 0


def test_a_thread_born_in_the_window_counts_from_its_birth() -> None:
    """Unknown before: its first reading is its own baseline (a new thread is caught elsewhere)."""
    assert count_busy_threads({}, _reading(b=(100 * MS, 140 * MS)), WINDOW) == 0


def test_the_run_floor_is_far_above_an_idle_spin() -> None:
    assert BUSY_RUN_NS >= 50 * 10_000  # 50x the pool's ~10 us spin (GOMP_SPINCOUNT=10000)


def test_a_real_sleeping_thread_reads_as_idle() -> None:
    """The parser on this host's /proc: a thread blocked on an event wants no CPU."""
    stop = threading.Event()
    ready = threading.Event()

    def idle() -> None:
        ready.set()
        stop.wait()

    thread = threading.Thread(target=idle)
    thread.start()
    ready.wait()
    tid = str(thread.native_id)
    path = f"/proc/self/task/{tid}/schedstat"
    try:
        with open(path) as fh:
            before = {tid: schedstat(fh.read())}
        started = time.monotonic_ns()
        time.sleep(0.05)
        with open(path) as fh:
            after = {tid: schedstat(fh.read())}
        assert count_busy_threads(before, after, time.monotonic_ns() - started) == 0
    finally:
        stop.set()
        thread.join()
