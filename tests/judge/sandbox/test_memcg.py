"""The runner child's memory cgroup and IPC limits: what RLIMIT_AS does not count is counted.

Each child runs in a memory group of its own (judge/sandbox/memcg.py): heap, shared memory and
tmpfs files with swap under one limit, the OOM killer at the limit, its count read back for MLE.
In the strict sandbox run as root the IPC namespace's limits are zero: no SysV segment, message
queue or semaphore set can hold memory outside the child. This host mounts cgroup v1's memory
hierarchy read-write for root (CI runs here as root); elsewhere the tests say why they skip.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from judge.errors import SandboxUnavailableError
from judge.sandbox import memcg
from judge.sandbox.base import Sandbox, SandboxLimits
from judge.sandbox.select import make_sandbox

pytestmark = pytest.mark.memcg
LIMITS = SandboxLimits(cpu_time_s=30, max_processes=64, max_file_size_bytes=1 << 30, max_open_files=64)
# Writes `mib` MiB into a memfd, a MiB at a time, then says so: pages no process limit counts.
MEMFD = ("import os\nfd = os.memfd_create('hoard')\n"
         "for _ in range({mib}): os.write(fd, b'x' * (1 << 20))\nprint('kept')")
# The same into a file of the sandbox's private tmpfs /tmp.
TMPFS = "with open('/tmp/hoard', 'wb') as f:\n    for _ in range({mib}): f.write(b'x' * (1 << 20))\nprint('kept')"


@pytest.fixture(scope="module")
def root() -> memcg.CgroupRoot:
    found, reason = memcg.find_root()
    if found is None:  # the `memcg` mark skips first where the host has none, but under CI
        pytest.fail(f"no memory cgroup could be made here: {reason}")
    return found


@pytest.fixture(scope="module")
def strict() -> Sandbox:
    return make_sandbox("strict")


def _run_in_group(sandbox: Sandbox, group: memcg.MemoryCgroup, code: str, workdir: Path) -> tuple[int, bytes]:
    proc = sandbox.popen([sys.executable, "-c", code], limits=LIMITS, binds=[], workdir=workdir,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, cgroup=group)
    try:
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode, out


@pytest.mark.sandbox
@pytest.mark.parametrize("code", [MEMFD, TMPFS], ids=["memfd", "tmpfs"])
def test_shared_memory_and_tmpfs_count_against_the_group(root: memcg.CgroupRoot, strict: Sandbox,
                                                         workdir: Path, code: str) -> None:
    group = root.new_group(192)
    try:
        rc, out = _run_in_group(strict, group, code.format(mib=384), workdir)
        assert b"kept" not in out, "384 MiB kept under a 192 MiB limit"
        assert rc == -signal.SIGKILL
        assert group.oom_kills() >= 1
    finally:
        group.close()
    assert not group.path.exists()


@pytest.mark.sandbox
def test_a_process_under_its_limit_runs_and_its_peak_is_read(root: memcg.CgroupRoot, strict: Sandbox,
                                                            workdir: Path) -> None:
    group = root.new_group(512)
    try:
        rc, out = _run_in_group(strict, group, MEMFD.format(mib=64), workdir)
        assert (rc, out.strip()) == (0, b"kept")
        assert group.oom_kills() == 0
        peak = group.peak_bytes()
        assert peak is not None and peak >= 64 << 20
    finally:
        group.close()


def test_the_degraded_sandbox_runs_in_the_group_too(root: memcg.CgroupRoot, workdir: Path,
                                                   monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bindir = tmp_path / "bin-without-bwrap"
    bindir.mkdir()
    for name in ("true", "sh"):
        os.symlink(f"/usr/bin/{name}", bindir / name)
    monkeypatch.setenv("PATH", str(bindir))
    degraded = make_sandbox("auto")
    group = root.new_group(128)
    try:
        rc, out = _run_in_group(degraded, group, MEMFD.format(mib=256), workdir)
        assert b"kept" not in out and group.oom_kills() >= 1 and rc == -signal.SIGKILL
    finally:
        group.close()


def test_every_process_of_the_sandbox_is_in_the_group_and_close_ends_them(root: memcg.CgroupRoot,
                                                                         strict: Sandbox, workdir: Path) -> None:
    group = root.new_group(256)
    code = "import os, time\nif os.fork() == 0: time.sleep(300)\nprint('up', flush=True); time.sleep(300)"
    proc = strict.popen([sys.executable, "-c", code], limits=LIMITS, binds=[], workdir=workdir,
                        stdout=subprocess.PIPE, cgroup=group)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"up\n"
        members = group.pids()
        # bubblewrap, its init in the pid namespace, the launcher's exec (python) and its fork
        assert proc.pid in members and len(members) >= 3
    finally:
        group.close()
        proc.wait(timeout=30)
        assert proc.stdout is not None
        proc.stdout.close()
    assert not group.path.exists()


def test_a_group_whose_worker_is_gone_is_removed(root: memcg.CgroupRoot) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = root.path / f"{memcg.PREFIX}{dead.pid}-feedbeef"
    stale.mkdir()
    mine = root.new_group(64)
    try:
        memcg._remove_stale(root)
        assert not stale.exists() and mine.path.exists()
    finally:
        mine.close()
        if stale.exists():
            stale.rmdir()


def test_required_without_a_hierarchy_is_the_judges_failure_with_the_reason(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memcg, "_found", None)
    monkeypatch.setattr(memcg, "find_root", lambda: (None, "no memory cgroup hierarchy is mounted"))
    assert memcg.memory_root("auto") is None
    with pytest.raises(SandboxUnavailableError, match="required but unavailable: no memory cgroup hierarchy"):
        memcg.memory_root("required")
    assert memcg.memory_root("off") is None
    with pytest.raises(ValueError, match="auto, required, off"):
        memcg.memory_root("sometimes")


# --- IPC limits -----------------------------------------------------------------------------

IPC = """import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
IPC_PRIVATE, IPC_CREAT = 0, 0o1000
print('shm', libc.shmget(IPC_PRIVATE, 1 << 20, IPC_CREAT | 0o600) >= 0)
print('msg', libc.msgget(IPC_PRIVATE, IPC_CREAT | 0o600) >= 0)
print('sem', libc.semget(IPC_PRIVATE, 1, IPC_CREAT | 0o600) >= 0)
"""


@pytest.mark.sandbox
def test_the_sandboxs_ipc_namespace_allows_no_objects_and_the_hosts_is_untouched(strict: Sandbox,
                                                                                workdir: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("the IPC limits are set by the launcher as root inside the sandbox")
    host_before = Path("/proc/sys/kernel/shmmni").read_text()
    free = strict.run([sys.executable, "-c", IPC], limits=LIMITS, binds=[], workdir=workdir, timeout_s=60)
    assert free.stdout.split() == [b"shm", b"True", b"msg", b"True", b"sem", b"True"], free.stderr
    limited = SandboxLimits(**{**LIMITS.__dict__, "ipc_limits": True})
    closed = strict.run([sys.executable, "-c", IPC], limits=limited, binds=[], workdir=workdir, timeout_s=60)
    assert closed.stdout.split() == [b"shm", b"False", b"msg", b"False", b"sem", b"False"], closed.stderr
    assert Path("/proc/sys/kernel/shmmni").read_text() == host_before


def test_a_group_that_will_not_go_is_logged_not_raised(root: memcg.CgroupRoot,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    group = root.new_group(64)
    child = group.path / "held"  # a sub-group keeps the folder busy: rmdir fails with EBUSY
    child.mkdir()
    try:
        started = time.monotonic()
        group.close(wait_s=0.2)
        assert group.path.exists() and time.monotonic() - started < 5
        assert "memory cgroup left behind" in caplog.text
    finally:
        child.rmdir()
        group.close()
