"""seal_runner(): once the libraries are loaded, no signal action, executable memory or new filter
(docs/security.md, 4b); what the runner itself does after loading still works."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

PRELUDE = (
    "import ctypes, mmap, os, signal, threading, torch\n"
    "torch.set_num_threads(2)\n"
    "from judge.sandbox.lockdown import restrict_runner\n"
    "from judge.sandbox.seal import ALL_RULES, seal_runner\n"
    "restrict_runner()\n"
    "seal_runner(ALL_RULES)\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
)


def run_sealed(code: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-c", PRELUDE + code], capture_output=True, timeout=120)


@pytest.mark.slow
def test_the_runner_still_works_when_sealed() -> None:
    code = (
        "out = []\n"
        "t = threading.Thread(target=lambda: out.append(1)); t.start(); t.join()\n"
        "a = torch.randn(512, 512)\n"
        "b = bytes(a.view(torch.uint8).numpy())[:4]\n"  # the child's _raw
        "page = mmap.mmap(-1, 1 << 20)\n"  # read-write memory is fine
        "open('/proc/self/status').read(); os.listdir('/proc/self/task')\n"  # reading files is fine
        "print(out, float((a @ a).sum()) == float((a @ a).sum()), signal.getsignal(signal.SIGINT) is not None)\n"
        "os._exit(0)\n"
    )
    result = run_sealed(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(b"[1] True True")


@pytest.mark.slow
@pytest.mark.parametrize(
    "action",
    [
        "signal.signal(signal.SIGUSR1, lambda *a: None)",
        "mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC)",
        "p = mmap.mmap(-1, 4096); addr = ctypes.addressof(ctypes.c_char.from_buffer(p));"
        " libc.mprotect(ctypes.c_void_p(addr), 4096, 5)",
        "libc.personality(0x0400000)",  # READ_IMPLIES_EXEC
        "libc.prctl(22, 2, 0, 0, 0)",  # PR_SET_SECCOMP
        "ctypes.CDLL('libresolv.so.2')",  # new code mapped executable
        "os.open('/proc/self/mem', os.O_RDWR)",  # its writes ignore page protections
        "open(os.devnull, 'w')",
        "os.memfd_create('hoard')",  # shmem pages outside RLIMIT_AS
        "libc.shmget(0, 1 << 20, 0o1600)",  # IPC_PRIVATE | IPC_CREAT | 0600: SysV shm, no per-segment bound
    ],
    ids=["sigaction", "mmap-exec", "mprotect-exec", "personality", "new-filter", "dlopen", "proc-mem", "write",
         "memfd", "shmget"],
)
def test_what_a_kernel_must_never_do_is_killed(action: str) -> None:
    result = run_sealed(action + "\nprint('survived')")
    assert result.returncode == -signal.SIGSYS, result.stderr
    assert b"survived" not in result.stdout


def test_no_rules_load_nothing() -> None:
    from judge.sandbox.seal import seal_runner

    seal_runner([])  # would make this test process unable to set signal handlers, were it loaded
    previous = signal.signal(signal.SIGUSR2, signal.SIG_IGN)
    signal.signal(signal.SIGUSR2, previous)
