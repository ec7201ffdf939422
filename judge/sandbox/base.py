"""The Sandbox seam: run a command with limits, seeing only what it is given."""

from __future__ import annotations

import subprocess
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

from judge.backends import Isolation
from judge.sandbox.memcg import MemoryCgroup


@dataclass(frozen=True)
class Bind:
    source: Path
    target: Path
    writable: bool = False


@dataclass(frozen=True)
class SandboxLimits:
    cpu_time_s: float | None = None  # RLIMIT_CPU
    address_space_mib: int | None = None  # RLIMIT_AS; None on device tracks
    max_processes: int | None = None  # RLIMIT_NPROC
    max_file_size_bytes: int | None = None  # RLIMIT_FSIZE
    max_open_files: int | None = None  # RLIMIT_NOFILE
    seccomp: bool = True  # apply the deny-list before exec
    devices: tuple[str, ...] = ()  # device nodes to bind (e.g. /dev/nvidia0)
    # A memory cgroup's limit for the runner child (judge/sandbox/memcg.py): memory, shared memory
    # and tmpfs files with swap; None: no group. Applied where the caller hands a group to `popen`.
    memory_mib: int | None = None
    # Zero SysV and POSIX IPC limits in the sandbox's own IPC namespace (strict sandbox run as root):
    # no shared segments, message queues or semaphores for the child (docs/security.md, "Memory").
    ipc_limits: bool = False
    output_limit_bytes: int = 1024 * 1024  # stdout and stderr kept by `Sandbox.run`, each


@dataclass
class ProcessResult:
    returncode: int  # negative: killed by that signal
    stdout: bytes
    stderr: bytes
    duration_s: float
    timed_out: bool = False
    violation: str | None = None  # what the sandbox caught, e.g. "seccomp: socket"


@dataclass
class SandboxedProcess:
    """A process started in the sandbox, for callers that talk to it (the runner)."""

    popen: subprocess.Popen[bytes]
    cleanup_paths: list[Path] = field(default_factory=list)


class Sandbox(ABC):
    isolation: Isolation

    def normalize_returncode(self, returncode: int) -> int:
        """The program's own exit status from what `popen(...).returncode` says: negative for a signal.

        bubblewrap reports a program killed by signal N as exit status 128 + N;
        this gives -N back, like subprocess does for a direct child.
        """
        return returncode

    def violation(self, returncode: int) -> str | None:
        """What the sandbox caught, from a `popen` return code (e.g. a seccomp kill, SIGSYS), or None."""
        from judge.sandbox.seccomp import violation_from_returncode

        return violation_from_returncode(self.normalize_returncode(returncode))

    @abstractmethod
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

    @abstractmethod
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
        """Start a process (the runner child) in its own session; the caller owns its lifetime.

        With `cgroup` every process of the sandbox runs in that memory group from its start."""
