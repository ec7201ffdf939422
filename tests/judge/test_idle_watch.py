"""The submission's process tree stays idle while the baseline is timed (docs/security.md, layer 5)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from math import comb

from judge.idle_watch import (
    BUSY_ALLOWANCE_NS,
    HELPER_ALLOWANCE_NS,
    HELPER_CALLS_SV,
    HELPER_GROSS_NS,
    OUTSIDE_CALLS_SV,
    SETTLE_TAIL_NS,
    OutsideWatch,
    busy_during,
    helper_cpu_ns,
    kernel_threads_running,
    more_often_than_chance,
    tree_cpu_ns,
    tree_cpu_split,
    tree_pids,
    wait_until_settled,
)

# A parent that starts a child, which starts a thread that spins once told to (a line on stdin).
TREE = r"""
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", '''
import sys, threading, time
go = threading.Event()
def spin():
    go.wait()
    while True:
        pass
threading.Thread(target=spin, daemon=True).start()
print("ready", flush=True)
sys.stdin.readline()
go.set()
time.sleep(30)
'''], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
print(child.stdout.readline().strip(), child.pid, flush=True)
line = sys.stdin.readline()
child.stdin.write(line); child.stdin.flush()
child.wait()
"""


def test_an_idle_tree_uses_nothing_and_a_busy_helper_thread_is_seen() -> None:
    parent = subprocess.Popen([sys.executable, "-c", TREE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    child_pid = ""
    try:
        assert parent.stdout is not None and parent.stdin is not None
        word, child_pid = parent.stdout.readline().split()
        assert word == "ready" and int(child_pid) in tree_pids(parent.pid)
        before = tree_cpu_ns(parent.pid)
        time.sleep(0.3)
        idle = tree_cpu_ns(parent.pid) - before
        assert idle < BUSY_ALLOWANCE_NS, idle  # both processes wait on a pipe
        parent.stdin.write("go\n")
        parent.stdin.flush()
        time.sleep(0.05)
        before = tree_cpu_ns(parent.pid)
        time.sleep(0.3)
        busy = tree_cpu_ns(parent.pid) - before
        # The grandchild's thread spins: CPU time however loaded the host (a share of 0.3 s, not a timing).
        assert busy > BUSY_ALLOWANCE_NS, busy
    finally:
        if child_pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(child_pid), signal.SIGKILL)
        parent.kill()
        parent.wait()


def test_a_gone_process_and_no_process_count_nothing() -> None:
    assert tree_cpu_ns(None) == 0
    assert tree_cpu_ns(2**22 + 12345) == 0


def test_what_counts_as_busy_during_one_baseline_call() -> None:
    assert not busy_during(BUSY_ALLOWANCE_NS // 2, 1_000)  # an idle runner's wake-ups
    assert not busy_during(BUSY_ALLOWANCE_NS * 2, 100 * BUSY_ALLOWANCE_NS)  # small against a long call
    assert busy_during(BUSY_ALLOWANCE_NS * 2, BUSY_ALLOWANCE_NS * 4)


def _watch_with_reference(base_ms: float, calls: int = 8, workspace: int = 0) -> OutsideWatch:
    watch = OutsideWatch(workspace_limit_bytes=1 << 30)
    for lib in ("baseline", "submission"):  # each child's first call of the case is left out
        watch.record(lib, 10**9, helper_ns=10**9, workspace_bytes=workspace if lib == "submission" else 0)
    for _ in range(calls):
        watch.record("baseline", int(base_ms * 1e6), helper_ns=100_000)
    return watch


def test_outside_watch_passes_the_runners_own_spread_and_fails_work_moved_out_of_the_bracket() -> None:
    honest = _watch_with_reference(30.0)
    for ms in (28, 33, 35, 31, 29, 34, 36, 30):  # the runner's own cost, a seventh either way
        honest.record("submission", int(ms * 1e6), helper_ns=200_000)
    assert not honest.worked_outside() and not honest.worked_outside(case_over=True)
    assert not honest.helpers_worked() and honest.steady_excess_ns() == 0

    early = _watch_with_reference(30.0)  # a fifth of a 40 ms kernel's work moved before "armed"
    for ms in (38, 39, 37, 40, 38, 39):
        early.record("submission", int(ms * 1e6))
    assert not early.worked_outside(case_over=True)  # within the rule's leniency: only the log sees it
    assert early.steady_excess_ns() > 0  # 38.5 ms median against 30 * 1.15 + 3

    moved = _watch_with_reference(44.0)  # the red team's rebinding kernel as measured: 136 ms a call
    for _ in range(OUTSIDE_CALLS_SV + 5):
        moved.record("submission", int(136e6))
    assert not moved.worked_outside()  # not far enough out to stop mid-case
    assert moved.worked_outside(case_over=True)

    far = _watch_with_reference(30.0)  # all of a heavy kernel's work moved out: stopped at once
    for _ in range(OUTSIDE_CALLS_SV - 1):
        far.record("submission", int(200e6))
    assert not far.worked_outside()
    far.record("submission", int(200e6))
    assert far.worked_outside()

    busy_moment = _watch_with_reference(30.0)  # the host was busy: the baseline's latest call cost 60 ms too
    for _ in range(OUTSIDE_CALLS_SV + 2):
        busy_moment.record("baseline", int(60e6))
        busy_moment.record("submission", int(90e6))
    assert not busy_moment.worked_outside()


def test_a_few_honest_spikes_of_cpu_outside_the_bracket_pass() -> None:
    # Measured on a loaded CI host: an honest add_mul_relu kernel (baseline's runner 28 ms a call) had
    # three calls of 81 ms or so in one case, which the earlier rule (three calls over 2x + 5 ms) made SV.
    spiky = _watch_with_reference(28.0)
    for call in range(20):
        spiky.record("submission", int((81 if call in (2, 5, 9) else 30) * 1e6))
    assert len(spiky.over) == 3
    assert not spiky.worked_outside() and not spiky.worked_outside(case_over=True)

    trimmed = _watch_with_reference(28.0)  # a third of the calls: more than the scores' trim cuts off
    for call in range(21):
        trimmed.record("baseline", int(28e6))
        trimmed.record("submission", int((81 if call % 3 == 0 else 30) * 1e6))
    assert not trimmed.worked_outside() and trimmed.sv_message("b01") == ""
    assert trimmed.worked_outside(case_over=True)
    message = trimmed.sv_message("b01", case_over=True)
    assert message.startswith("case b01: your process used the CPU outside the timed call")
    assert "7 of 21 calls" in message

    noisy_host = _watch_with_reference(28.0)  # the baseline's child had as many such calls: the host's doing
    for call in range(21):
        noisy_host.record("baseline", int((81 if call % 4 == 1 else 28) * 1e6))
        noisy_host.record("submission", int((81 if call % 3 == 0 else 30) * 1e6))
    assert noisy_host.baseline_over() >= 5 and len(noisy_host.over) >= 6
    assert not noisy_host.worked_outside(case_over=True)

    few_calls = _watch_with_reference(28.0, calls=1)  # a short case: 3 spikes in 9 calls, the baseline's 0
    for call in range(9):
        few_calls.record("baseline", int(28e6))
        few_calls.record("submission", int((81 if call in (1, 4, 7) else 30) * 1e6))
    assert len(few_calls.over) == 3 and not few_calls.worked_outside(case_over=True)


def test_more_often_than_chance_is_fishers_one_sided_exact_test() -> None:
    assert more_often_than_chance(3, 9, 0, 9) == comb(9, 3) / comb(18, 3)
    assert more_often_than_chance(1, 2, 1, 2) == 5 / 6  # 1 or 2 of the 2 events on the first side of 4 calls
    assert more_often_than_chance(0, 5, 0, 5) == 1.0
    assert more_often_than_chance(21, 21, 0, 21) < 1e-11


def test_outside_watch_leaves_out_probed_calls_and_allows_a_workspace_fill() -> None:
    probed = _watch_with_reference(30.0)
    for _ in range(10):
        probed.record("submission", int(200e6), probed=True)  # the late-write probe copies and sleeps
    assert not probed.worked_outside(case_over=True) and probed.steady_excess_ns() == 0

    big = _watch_with_reference(30.0, workspace=256 << 20)  # 256 MiB of garbage filled each call
    for _ in range(8):
        big.record("submission", int((30 + 256 * 1.048576 * 0.9) * 1e6), workspace_bytes=256 << 20)
    assert not big.worked_outside(case_over=True) and big.steady_excess_ns() == 0


def test_kernel_threads_working_after_ran_are_counted() -> None:
    watch = _watch_with_reference(30.0)
    for _ in range(HELPER_CALLS_SV - 1):
        watch.record("submission", int(30e6), helper_ns=HELPER_GROSS_NS * 2)
    assert not watch.helpers_worked()
    watch.record("submission", int(30e6), helper_ns=HELPER_GROSS_NS * 2)
    assert watch.helpers_worked()  # far past the allowance: at once, mid-case


def test_a_few_honest_spikes_pass_and_steady_work_after_ran_fails_at_the_cases_end() -> None:
    # Measured: an honest kernel on a busy VM passed 1 ms after "ran" in 3 of a case's ~60 calls (2.2 and
    # 2.9 ms); the rule that decided on the third such call rejected it.
    spiky = _watch_with_reference(30.0)
    for call in range(60):
        spiky.record("submission", int(30e6), helper_ns=2_900_000 if call in (7, 30, 51) else 150_000)
    assert not spiky.helpers_worked() and not spiky.helpers_worked(case_over=True)

    steady = _watch_with_reference(30.0)  # a helper thread that works after every call, a few ms each
    for _ in range(60):
        steady.record("submission", int(30e6), helper_ns=HELPER_ALLOWANCE_NS * 3)
    assert not steady.helpers_worked()  # not gross: decided at the case's end
    assert steady.helpers_worked(case_over=True)
    assert "threads of your kernel worked after kernel_run returned" in steady.sv_message("t1", case_over=True)

    noisy_host = _watch_with_reference(30.0)  # the baseline's child passed it as often: the host's doing
    for call in range(40):
        noisy_host.record("baseline", int(30e6), helper_ns=2_000_000 if call % 8 == 0 else 150_000)
        noisy_host.record("submission", int(30e6), helper_ns=2_000_000 if call % 8 == 1 else 150_000)
    assert not noisy_host.helpers_worked(case_over=True)


def test_tree_cpu_split_counts_a_spinning_helper_thread_apart_from_the_main_thread() -> None:
    spinner = subprocess.Popen([sys.executable, "-c", (
        "import threading, time\n"
        "threading.Thread(target=lambda: [None for _ in iter(int, 1)], daemon=True).start()\n"
        "time.sleep(30)\n")])
    try:
        time.sleep(0.1)
        main0, others0 = tree_cpu_split(spinner.pid)
        time.sleep(0.3)
        main1, others1 = tree_cpu_split(spinner.pid)
        assert others1 - others0 > 50_000_000  # the helper thread spins (CPU time, not a timing)
        assert main1 - main0 < others1 - others0  # the main thread sleeps
    finally:
        spinner.kill()
        spinner.wait()


# A process whose second thread spins for `spin_s` seconds once started, then sleeps.
SPIN_THEN_SLEEP = (
    "import sys, threading, time\n"
    "def work():\n"
    "    end = time.monotonic() + float(sys.argv[1])\n"
    "    print('spinning', flush=True)\n"
    "    while time.monotonic() < end:\n"
    "        pass\n"
    "    time.sleep(30)\n"
    "threading.Thread(target=work, daemon=True).start()\n"
    "time.sleep(30)\n")


def _spinning(seconds: str) -> subprocess.Popen[str]:
    process = subprocess.Popen([sys.executable, "-c", SPIN_THEN_SLEEP, seconds], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "spinning"
    return process


def test_the_wait_after_ran_ends_when_the_kernels_threads_sleep_and_not_before() -> None:
    spinner = _spinning("0.2")
    try:
        assert kernel_threads_running(spinner.pid) == 1  # spinning: running or waiting for a CPU
        first, waited = wait_until_settled(spinner.pid, limit_ns=60 * 10**9)
        assert first == 1 and waited > 0
        assert kernel_threads_running(spinner.pid) == 0  # asleep now: the main thread never counts
    finally:
        spinner.kill()
        spinner.wait()


def test_the_wait_after_ran_is_bounded_for_a_thread_that_never_sleeps() -> None:
    spinner = _spinning("60")
    try:
        first, waited = wait_until_settled(spinner.pid, limit_ns=30_000_000)
        assert first == 1 and waited >= 30_000_000  # it gave up at the limit; the thread still runs
        assert kernel_threads_running(spinner.pid) == 1
    finally:
        spinner.kill()
        spinner.wait()
    assert wait_until_settled(None)[0] == 0 and kernel_threads_running(None) == 0  # no process: no wait


def test_the_helper_figure_counts_after_the_settled_reading_and_past_the_tail_before_it() -> None:
    # Settled at once, nothing after: a tail within the allowance of the one thread running is not work.
    assert helper_cpu_ns(ran=0, settled=SETTLE_TAIL_NS, reported=SETTLE_TAIL_NS, running_at_ran=1) == 0
    # The same tail with no thread running at "ran" cannot be a tail: it all counts.
    assert helper_cpu_ns(ran=0, settled=SETTLE_TAIL_NS, reported=SETTLE_TAIL_NS, running_at_ran=0) == SETTLE_TAIL_NS
    # Work past the tail, and all work after the settled reading, counts.
    assert helper_cpu_ns(ran=0, settled=SETTLE_TAIL_NS + 7, reported=SETTLE_TAIL_NS + 7 + 11, running_at_ran=1) == 18
    after = 2 * HELPER_ALLOWANCE_NS
    assert helper_cpu_ns(ran=0, settled=3, reported=3 + after, running_at_ran=2) == after
