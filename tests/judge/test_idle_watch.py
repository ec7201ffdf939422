"""The submission's process tree stays idle while the baseline is timed (issue 31 item 2)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

from judge.idle_watch import BUSY_ALLOWANCE_NS, busy_during, tree_cpu_ns, tree_pids

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
