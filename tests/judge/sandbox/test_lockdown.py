"""restrict_runner(): threads still work, no process or program can start (docs/security.md, layer 4)."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

PRELUDE = (
    "import os, threading, torch\n"
    "torch.set_num_threads(2)\n"
    "from judge.sandbox.lockdown import restrict_runner\n"
    "restrict_runner()\n"
)


def run_locked(code: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-c", PRELUDE + code], capture_output=True, timeout=120)


@pytest.mark.slow
def test_threads_and_torch_work_after_lockdown() -> None:
    code = (
        "out = []\n"
        "t = threading.Thread(target=lambda: out.append(1)); t.start(); t.join()\n"
        "a = torch.randn(256, 256)\n"
        "print(out, float((a @ a).sum()) == float((a @ a).sum()), torch.get_num_threads())\n"
    )
    result = run_locked(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(b"[1] True 2")


@pytest.mark.slow
@pytest.mark.parametrize(
    "action",
    [
        "os.fork()",
        "import subprocess; subprocess.run(['/bin/true'])",
        "os.execv('/bin/true', ['true'])",
        "import socket; socket.socket()",
        "import ctypes; ctypes.CDLL(None).syscall(57)",  # raw fork
    ],
)
def test_process_creation_is_killed(action: str) -> None:
    result = run_locked(action + "\nprint('survived')")
    assert result.returncode == -signal.SIGSYS, result.stderr
    assert b"survived" not in result.stdout


@pytest.mark.slow
def test_signals_reach_only_itself() -> None:
    code = (
        "try:\n"
        "    os.kill(os.getppid(), 0); print('reached parent')\n"
        "except PermissionError:\n"
        "    print('refused')\n"
        "os.kill(os.getpid(), 0); print('self ok')\n"
    )
    result = run_locked(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [b"refused", b"self", b"ok"]
