"""Each track's runtime rules (`Track.seal_decisions`, judge/tracks/<backend>/seal.py; the statuses in
judge/sandbox/seal_tracks.py): every rule decided with its evidence,
each track's filter refusing exactly its rules' calls, and what a device runtime does after it
started (open device files for writing, set signal actions, dlopen its parts) left alone by the
filter its track gets. The checks on real drivers are marked `cuda` / `npu`."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import tempfile

import pytest

from judge.sandbox.seal import RuntimeRule, build_seal
from judge.sandbox.seal_tracks import Status
from judge.sandbox.seccomp import seccomp_available
from judge.tracks import get_track

needs_seccomp = pytest.mark.skipif(seccomp_available() is not None, reason=f"seccomp: {seccomp_available()}")

# What each rule must refuse, written here apart from seal.py so that a rule that loses a call fails.
CALLS = {
    RuntimeRule.SIGNAL_HANDLERS: {"rt_sigaction"},
    RuntimeRule.EXECUTABLE_MEMORY: {"mmap", "mprotect", "pkey_mprotect", "shmat", "personality"},
    RuntimeRule.MAPPED_CODE: {"mmap"},
    RuntimeRule.FILE_WRITES: {"open", "openat", "creat", "openat2"},
    RuntimeRule.NEW_FILTERS: {"seccomp", "prctl"},
    RuntimeRule.SHARED_MEMORY: {"memfd_create", "shmget"},
}


def filtered_calls(rules: tuple[RuntimeRule, ...]) -> set[str]:
    """The system calls a built (not loaded) seal has a rule for, read from libseccomp's own listing."""
    with tempfile.TemporaryFile() as out:
        build_seal(rules).export_pfc(out)
        out.seek(0)
        text = out.read().decode()
    return set(re.findall(r'# filter for syscall "(\w+)"', text))


@pytest.mark.parametrize("backend", ["cpu", "cuda", "npu"])
def test_every_rule_is_decided_once_with_its_evidence(backend: str) -> None:
    table = get_track(backend).seal_decisions
    assert sorted(d.rule for d in table) == sorted(RuntimeRule)
    for decision in table:
        assert len(decision.evidence) > 40, decision  # a reason a person can check, not a word


def test_the_tracks_are_sealed_as_the_table_says() -> None:
    from judge.tracks import cpu, cuda, npu

    assert cpu.TRACK.runtime_rules == tuple(RuntimeRule)
    for track, backend in ((cuda.TRACK, "cuda"), (npu.TRACK, "npu")):
        assert track.runtime_rules == tuple(d.rule for d in track.seal_decisions if d.status is Status.RUNTIME)
        # What their runtimes do by themselves (device files, log files, handlers, lazy dlopen)
        # must not be sealed on them.
        for rule in (RuntimeRule.FILE_WRITES, RuntimeRule.SIGNAL_HANDLERS, RuntimeRule.MAPPED_CODE):
            assert rule not in track.runtime_rules, (backend, rule)
        assert RuntimeRule.NEW_FILTERS in track.runtime_rules


@needs_seccomp
@pytest.mark.parametrize("backend", ["cpu", "cuda", "npu"])
@pytest.mark.parametrize("status", [Status.RUNTIME, Status.CANDIDATE])
def test_each_track_filter_refuses_its_rules_calls_only(backend: str, status: Status) -> None:
    track = get_track(backend)
    rules = track.runtime_rules + (track.rules_with(Status.CANDIDATE) if status is Status.CANDIDATE else ())
    expected = set().union(*(CALLS[r] for r in rules)) if rules else set()
    assert filtered_calls(rules) == expected


# The device tracks' runtime rules plus their candidates, loaded here on the CPU: what their drivers
# do after start-up must survive it, what no honest kernel needs must not.
DEVICE_SEAL = (
    "import ctypes, mmap, os, signal, sys\n"
    "from judge.sandbox.lockdown import restrict_runner\n"
    "from judge.sandbox.seal import seal_runner\n"
    "from judge.sandbox.seal_tracks import Status\n"
    "from judge.tracks import get_track\n"
    "track = get_track(sys.argv[1])\n"
    "restrict_runner()\n"
    "seal_runner(track.runtime_rules + track.rules_with(Status.CANDIDATE))\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
)


def run_device_sealed(backend: str, code: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-c", DEVICE_SEAL + code, backend], capture_output=True, timeout=60)


@needs_seccomp
@pytest.mark.slow
@pytest.mark.parametrize("backend", ["cuda", "npu"])
def test_what_device_runtimes_do_after_start_up_survives_their_seal(backend: str) -> None:
    code = (
        "fd = os.open('/proc/self/task/%d/comm' % os.getpid(), os.O_RDWR); os.write(fd, b'drv'); os.close(fd)\n"
        "fd = os.open(os.devnull, os.O_WRONLY | os.O_APPEND); os.close(fd)\n"  # a device node, a log file
        "old = signal.signal(signal.SIGPIPE, lambda *a: None); signal.signal(signal.SIGPIPE, old)\n"
        "ctypes.CDLL('libresolv.so.2')\n"  # a plugin loaded on first use: its code mapped from the file
        "page = mmap.mmap(-1, 1 << 16)\n"
        "print('survived'); sys.stdout.flush(); os._exit(0)\n"
    )
    result = run_device_sealed(backend, code)
    assert result.returncode == 0, result.stderr
    assert b"survived" in result.stdout


@needs_seccomp
@pytest.mark.slow
@pytest.mark.parametrize("backend", ["cuda", "npu"])
@pytest.mark.parametrize(
    "action",
    [
        "libc.prctl(22, 2, 0, 0, 0)",  # PR_SET_SECCOMP
        "mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)",
        "p = mmap.mmap(-1, 4096); addr = ctypes.addressof(ctypes.c_char.from_buffer(p));"
        " libc.mprotect(ctypes.c_void_p(addr), 4096, 5)",
        "libc.personality(0x0400000)",  # READ_IMPLIES_EXEC
    ],
    ids=["new-filter", "anonymous-exec", "mprotect-exec", "personality"],
)
def test_what_no_device_runtime_needs_is_refused_by_its_seal(backend: str, action: str) -> None:
    result = run_device_sealed(backend, action + "\nprint('survived')")
    assert result.returncode == -signal.SIGSYS, result.stderr
    assert b"survived" not in result.stdout


# On the hardware: the real runtime, initialised as the runner child does before the seal, then
# sealed with its track's rules and candidates, must launch kernels, allocate (pinned host memory
# too, a new CPU mapping of device memory), make streams and synchronise. Where it passes on a
# host, the candidates can move to RUNTIME in the track's seal.py.
CUDA_WORK = (
    "import torch\n"
    "x = torch.randn(256, 256, device='cuda'); torch.cuda.synchronize()\n"
    "__SEAL__\n"
    "y = x @ x; z = torch.relu(y) + 1\n"
    "big = torch.empty(64 << 20, dtype=torch.uint8, device='cuda')\n"
    "pinned = torch.empty(1 << 20, dtype=torch.uint8, pin_memory=True)\n"
    "s = torch.cuda.Stream()\n"
    "with torch.cuda.stream(s):\n"
    "    w = (x * 2).sum()\n"
    "torch.cuda.synchronize(); big.copy_(big.flip(0)); pinned.copy_(big[: 1 << 20].cpu())\n"
    "print('survived', float(z.sum()) > 0); sys.stdout.flush(); os._exit(0)\n"
)
NPU_WORK = CUDA_WORK.replace("import torch\n", "import torch, torch_npu\n").replace("cuda", "npu")


def run_on_device(backend: str, work: str) -> subprocess.CompletedProcess[bytes]:
    seal = ("from judge.sandbox.lockdown import restrict_runner\n"
            "restrict_runner()\n"
            "seal_runner(track.runtime_rules + track.rules_with(Status.CANDIDATE))")
    code = DEVICE_SEAL.split("restrict_runner()\n")[0] + work.replace("__SEAL__", seal)
    return subprocess.run([sys.executable, "-c", code, backend], capture_output=True, timeout=300)


@pytest.mark.cuda
def test_cuda_runtime_works_sealed_with_its_rules_and_candidates() -> None:
    result = run_on_device("cuda", CUDA_WORK)
    assert result.returncode == 0, result.stderr[-4000:]
    assert b"survived True" in result.stdout


@pytest.mark.npu
def test_npu_runtime_works_sealed_with_its_rules_and_candidates() -> None:
    result = run_on_device("npu", NPU_WORK)
    assert result.returncode == 0, result.stderr[-4000:]
    assert b"survived True" in result.stdout
