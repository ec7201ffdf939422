"""RlimitSandbox (isolation degraded) and OffSandbox (isolation off).

RlimitSandbox is what `auto` falls back to when bubblewrap cannot make
namespaces: the same launcher (rlimits, seccomp deny-list, closed fds) plus
Landlock, where the kernel has it, for the file system. What it cannot give:
a private /proc and /tmp, a private network (the seccomp deny-list refuses
sockets instead), and, for root, RLIMIT_NPROC (root keeps its uid here because
the Python installation may sit in a folder only root can enter; it loses
every capability instead). docs/security.md lists the difference per exploit.

OffSandbox runs the command as is, for development only; every result says so.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from judge.backends import Isolation
from judge.sandbox import paths as sandbox_paths
from judge.sandbox.base import Bind, ProcessResult, Sandbox, SandboxLimits
from judge.sandbox.launcher import LaunchConfig, launcher_argv
from judge.sandbox.memcg import MemoryCgroup
from judge.sandbox.paths import interpreter
from judge.sandbox.process import run_captured

# Devices every program may use; the tmp folder lives inside the work folder.
_DEVICES_RW = ("/dev/null", "/dev/zero", "/dev/full", "/dev/urandom", "/dev/random")


def _env(workdir: Path, env: dict[str, str] | None) -> dict[str, str]:
    tmp = workdir / ".tmp"
    tmp.mkdir(exist_ok=True)
    return {**sandbox_paths.BASE_ENV, "HOME": str(tmp), "TMPDIR": str(tmp), **(env or {})}


class RlimitSandbox(Sandbox):
    """rlimits + seccomp + Landlock, without namespaces."""

    isolation = Isolation.DEGRADED

    def __init__(
        self,
        *,
        extra_ro_paths: list[Path] | None = None,
        python: str | None = None,
        require_landlock: bool = False,
    ) -> None:
        self.python = python or interpreter()
        self.read_only = sandbox_paths.default_read_only(list(extra_ro_paths or []))
        self.require_landlock = require_landlock

    def _argv(
        self, argv: list[str], limits: SandboxLimits, binds: list[Bind], workdir: Path, keep: tuple[int, ...]
    ) -> list[str]:
        for bind in binds:
            # Without a mount namespace nothing can appear at another path.
            if bind.source.resolve() != bind.target.resolve():
                raise ValueError(f"degraded sandbox cannot bind {bind.source} at {bind.target}")
        read_only = self.read_only + [b.source for b in binds if not b.writable] + [Path("/proc")]
        writable = [workdir] + [b.source for b in binds if b.writable] + [Path(d) for d in _DEVICES_RW]
        writable += [Path(d) for d in limits.devices]
        config = LaunchConfig.from_limits(
            limits,
            workdir=str(workdir),
            drop_capabilities=os.geteuid() == 0,
            keep_fds=list(keep),
            landlock_read_only=[str(p) for p in read_only],
            landlock_writable=[str(p) for p in writable],
            landlock_required=self.require_landlock,
        )
        return launcher_argv(self.python, config, argv)

    def run(
        self,
        argv: list[str],
        *,
        limits: SandboxLimits,
        binds: list[Bind],
        workdir: Path,
        timeout_s: float,
        env: dict[str, str] | None = None,
    ) -> ProcessResult:
        """Run to completion (compilers); kills the whole process group at `timeout_s`."""
        workdir = workdir.resolve()
        return run_captured(
            self._argv(argv, limits, binds, workdir, ()),
            timeout_s=timeout_s,
            output_limit_bytes=limits.output_limit_bytes,
            cwd=str(workdir),
            env=_env(workdir, env),
        )

    def popen(
        self,
        argv: list[str],
        *,
        limits: SandboxLimits,
        binds: list[Bind],
        workdir: Path,
        env: dict[str, str] | None = None,
        pass_fds: tuple[int, ...] = (),
        stdin: int | None = None,
        stdout: int | None = None,
        stderr: int | None = None,
        cgroup: MemoryCgroup | None = None,
    ) -> subprocess.Popen[bytes]:
        """Start `argv` in its own session under the launcher; the caller kills the group."""
        workdir = workdir.resolve()
        command = self._argv(argv, limits, binds, workdir, tuple(pass_fds))
        return subprocess.Popen(
            cgroup.wrap(command) if cgroup is not None else command,
            cwd=str(workdir),
            env=_env(workdir, env),
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            pass_fds=pass_fds,
            start_new_session=True,
        )


class OffSandbox(RlimitSandbox):
    """No isolation at all (development only): a new session and a cleared environment.

    It runs the way RlimitSandbox does, with the command itself in place of the launcher.
    """

    isolation = Isolation.OFF

    def _argv(
        self, argv: list[str], limits: SandboxLimits, binds: list[Bind], workdir: Path, keep: tuple[int, ...]
    ) -> list[str]:
        return argv
