"""The launcher: applies limits inside the sandbox, then executes the real program.

Run as `python -I -B -m judge.sandbox.launcher '<json LaunchConfig>' -- argv...`
inside bubblewrap (strict) or directly (degraded). In order it: changes to the
work folder, confines the file system with Landlock (degraded mode), drops to
the sandbox's user or drops every capability, sets the rlimits, closes every
file descriptor but 0-2 and the ones to keep (at the same numbers), installs
the seccomp deny-list, and executes argv. Nothing here reads a secret; the
configuration travels on the command line, which the exec replaces.

If any step fails the launcher exits with `LAUNCHER_FAILED_EXIT` and a line on
stderr starting with `LAUNCHER_ERROR_PREFIX`: the judge's fault, not the
submission's (the caller reports IE).
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import resource
import signal
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from judge.sandbox.base import SandboxLimits

LAUNCHER_FAILED_EXIT = 125
LAUNCHER_ERROR_PREFIX = "opjudge-launcher:"
_PR_SET_PDEATHSIG = 1
_PR_CAPBSET_DROP = 24
_MAX_CAP = 63


@dataclass
class LaunchConfig:
    """What the launcher applies before exec; built by the sandbox, read from argv."""

    workdir: str | None = None  # chdir here first
    cpu_time_s: float | None = None  # RLIMIT_CPU (SIGXCPU, then SIGKILL one second later)
    address_space_mib: int | None = None  # RLIMIT_AS
    max_processes: int | None = None  # RLIMIT_NPROC (counts threads; not enforced for uid 0)
    max_file_size_bytes: int | None = None  # RLIMIT_FSIZE
    max_open_files: int | None = None  # RLIMIT_NOFILE
    seccomp: bool = True  # install the deny-list (judge/sandbox/seccomp.py)
    uid: int | None = None  # drop to this user (and gid) when started as root
    gid: int | None = None
    groups: list[int] = field(default_factory=list)  # supplementary groups kept with uid (device nodes)
    drop_capabilities: bool = False  # stay this user but empty the capability bounding set
    keep_fds: list[int] = field(default_factory=list)  # stay open, same numbers
    landlock_read_only: list[str] = field(default_factory=list)  # degraded mode: readable paths
    landlock_writable: list[str] = field(default_factory=list)  # degraded mode: writable paths
    landlock_required: bool = False  # fail when Landlock is unavailable
    ipc_limits: bool = False  # zero the IPC namespace's limits (`_limit_ipc`); needs root inside it

    def to_json(self) -> str:
        """The one-argument form passed on the launcher's command line."""
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> LaunchConfig:
        """Parse what `to_json` wrote."""
        return cls(**json.loads(text))

    @classmethod
    def from_limits(cls, limits: SandboxLimits, **kwargs: object) -> LaunchConfig:
        """The rlimit and seccomp part from the seam's `SandboxLimits`; the rest by keyword."""
        return cls(
            cpu_time_s=limits.cpu_time_s,
            address_space_mib=limits.address_space_mib,
            max_processes=limits.max_processes,
            max_file_size_bytes=limits.max_file_size_bytes,
            max_open_files=limits.max_open_files,
            seccomp=limits.seccomp,
            **kwargs,  # type: ignore[arg-type]
        )


def launcher_argv(python: str, config: LaunchConfig, argv: list[str]) -> list[str]:
    """The command line that runs `argv` under the launcher with `config`."""
    return [python, "-I", "-B", "-m", "judge.sandbox.launcher", config.to_json(), "--", *argv]


def _prctl(option: int, arg: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, arg, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def _set_rlimits(config: LaunchConfig) -> None:
    def cap(kind: int, value: int) -> None:
        # Never raise a limit the worker itself runs under.
        soft, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(kind, (value, value))

    if config.cpu_time_s is not None:
        seconds = max(1, math.ceil(config.cpu_time_s))
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        # soft: SIGXCPU; hard one second later: SIGKILL, which nothing can catch.
        hard_new = seconds + 1 if hard == resource.RLIM_INFINITY else min(seconds + 1, hard)
        resource.setrlimit(resource.RLIMIT_CPU, (min(seconds, hard_new), hard_new))
    if config.address_space_mib:
        cap(resource.RLIMIT_AS, config.address_space_mib << 20)
    if config.max_processes is not None:
        cap(resource.RLIMIT_NPROC, config.max_processes)
    if config.max_file_size_bytes is not None:
        cap(resource.RLIMIT_FSIZE, config.max_file_size_bytes)
    if config.max_open_files is not None:
        cap(resource.RLIMIT_NOFILE, config.max_open_files)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


# Per IPC namespace: SysV shared memory ids and pages, message queue ids, semaphore sets, POSIX
# message queues. Zero means the child can make none; nothing it could hold outside its own memory.
_IPC_LIMITS = {
    "/proc/sys/kernel/shmmni": "0",
    "/proc/sys/kernel/shmall": "0",
    "/proc/sys/kernel/shmmax": "0",
    "/proc/sys/kernel/msgmni": "0",
    "/proc/sys/kernel/sem": "0 0 0 0",
    "/proc/sys/fs/mqueue/queues_max": "0",
}


def _limit_ipc() -> None:
    """Zero the IPC limits of the namespace the launcher runs in: the sandbox's own (bubblewrap's
    --unshare-ipc), so the host's are untouched. A file the kernel lacks is skipped; one it refuses
    is the launcher's failure (the judge's, IE), never a silent gap."""
    for name, value in _IPC_LIMITS.items():
        try:
            with open(name, "w") as fh:
                fh.write(value)
        except FileNotFoundError:
            continue


def _close_fds(keep: list[int]) -> None:
    keep_set = sorted({0, 1, 2, *keep})
    low = 0
    for fd in keep_set:
        if fd > low:
            os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 65536)
    for fd in keep:
        os.set_inheritable(fd, True)


def apply(config: LaunchConfig) -> None:
    """Apply everything `config` asks for to the calling process, in the safe order."""
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if config.workdir:
        os.chdir(config.workdir)
    if config.landlock_read_only or config.landlock_writable:
        from judge.sandbox import landlock

        try:
            landlock.restrict(
                read_only=[Path(p) for p in config.landlock_read_only],
                writable=[Path(p) for p in config.landlock_writable],
            )
        except OSError:
            if config.landlock_required:
                raise
    if config.ipc_limits:
        _limit_ipc()
    if config.drop_capabilities:
        for cap_number in range(_MAX_CAP + 1):
            try:
                _prctl(_PR_CAPBSET_DROP, cap_number)
            except OSError:
                break  # past the last capability this kernel knows
    if config.uid is not None and os.getuid() == 0:
        gid = config.gid if config.gid is not None else config.uid
        os.setgroups(list(config.groups))
        os.setresgid(gid, gid, gid)
        os.setresuid(config.uid, config.uid, config.uid)
        # A credential change clears the parent-death signal: set it again.
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    _set_rlimits(config)
    _close_fds(config.keep_fds)
    if config.seccomp:
        from judge.sandbox.seccomp import load_denylist

        load_denylist()


def main(args: list[str]) -> int:
    """Entry point: `<json> -- argv...`; returns only on failure."""
    try:
        split = args.index("--")
        config = LaunchConfig.from_json(args[0])
        argv = args[split + 1 :]
        if split != 1 or not argv:
            raise ValueError("usage: launcher <json> -- argv...")
        apply(config)
    except Exception as exc:  # noqa: BLE001 - every failure must reach the caller as a line
        print(f"{LAUNCHER_ERROR_PREFIX} {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        return LAUNCHER_FAILED_EXIT
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        print(f"{LAUNCHER_ERROR_PREFIX} cannot execute {argv[0]}: {exc}", file=sys.stderr, flush=True)
        return LAUNCHER_FAILED_EXIT
    return LAUNCHER_FAILED_EXIT  # not reached: exec replaced the process


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
