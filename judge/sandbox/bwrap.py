"""BwrapSandbox: bubblewrap namespaces + the launcher's rlimits and seccomp (isolation strict).

The process sees a new root: the system and Python read-only, a private
tmpfs /tmp, its own /proc (new pid namespace: it sees only itself), a minimal
/dev, no network (new net namespace: only its own loopback), and one writable
folder, the run's work folder. Nothing else of the host exists for it.

Started as root, bubblewrap runs privileged (no user namespace) and the launcher
drops to an unprivileged user (65534 by default): the program is then no one
on the host, and RLIMIT_NPROC holds (the kernel ignores it for uid 0). Started
as another user, bubblewrap makes a user namespace and the program keeps that
user.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

from judge.backends import Isolation
from judge.sandbox import paths as sandbox_paths
from judge.sandbox.base import Bind, ProcessResult, Sandbox, SandboxLimits
from judge.sandbox.launcher import LaunchConfig, launcher_argv
from judge.sandbox.memcg import MemoryCgroup
from judge.sandbox.paths import interpreter
from judge.sandbox.process import run_captured

SANDBOX_UID = 65534  # "nobody" on Debian


class _BwrapPopen(subprocess.Popen[bytes]):
    """A Popen whose returncode is the program's, not bubblewrap's: -N when signal N killed it.

    bubblewrap reports a program killed by signal N as its own exit status 128 + N;
    callers written for plain subprocesses (the runner session) then see -N as
    usual. `_handle_exitstatus` is CPython's one place where returncode is set.
    """

    def _handle_exitstatus(self, sts: int, *args: object, **kwargs: object) -> None:  # type: ignore[override]
        super()._handle_exitstatus(sts, *args, **kwargs)  # type: ignore[misc]
        if self.returncode is not None and 128 < self.returncode < 128 + signal.NSIG:
            self.returncode = -(self.returncode - 128)


def _parent_dirs(mounts: list[tuple[Path, list[str]]]) -> list[tuple[Path, list[str]]]:
    """Create the folders leading to each mount point as 0755: bwrap would make them 0700,
    which the unprivileged user inside could not cross (e.g. /work/main for /work/main/judge)."""
    targets = {target for target, _ in mounts}
    binds = [t for t, a in mounts if a[0] in {"--bind", "--ro-bind", "--dev-bind", "--symlink", "--proc"}]
    made: list[tuple[Path, list[str]]] = []
    seen: set[Path] = set()
    for target in sorted(targets, key=lambda t: len(t.parts)):
        for parent in list(reversed(target.parents))[1:]:  # skip "/"
            if parent in targets or parent in seen or any(b in parent.parents for b in binds):
                continue
            seen.add(parent)
            made.append((parent, ["--perms", "0755", "--dir", str(parent)]))
    return made


class BwrapSandbox(Sandbox):
    """Runs commands under bubblewrap; see the module docstring for what they see."""

    isolation = Isolation.STRICT

    def __init__(
        self,
        *,
        bwrap: str | None = None,
        extra_ro_paths: list[Path] | None = None,
        python: str | None = None,
        sandbox_uid: int = SANDBOX_UID,
        tmp_size_mib: int = 512,
    ) -> None:
        found = bwrap or shutil.which("bwrap")
        if found is None:
            raise FileNotFoundError("bwrap not found on PATH")
        self.bwrap = found
        self.python = python or interpreter()
        self.read_only = sandbox_paths.default_read_only(list(extra_ro_paths or []))
        # Root drops to an unprivileged user inside; anyone else keeps their own.
        self.uid: int | None = sandbox_uid if os.geteuid() == 0 else None
        self.tmp_size_mib = tmp_size_mib

    def _bwrap_args(
        self,
        argv: list[str],
        *,
        limits: SandboxLimits,
        binds: list[Bind],
        workdir: Path,
        env: dict[str, str] | None,
        keep_fds: tuple[int, ...],
    ) -> tuple[list[str], list[str]]:
        workdir = workdir.resolve()
        args = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
        args += ["--unshare-cgroup-try", "--hostname", "opjudge"]
        if self.uid is None:
            args.append("--unshare-user")
        args += ["--die-with-parent", "--new-session", "--clearenv"]
        for key, value in {**sandbox_paths.BASE_ENV, **(env or {})}.items():
            args += ["--setenv", key, value]
        # Mounts, parents before children (a work folder under /tmp goes over the tmpfs).
        mounts: list[tuple[Path, list[str]]] = [
            (Path("/proc"), ["--proc", "/proc"]),
            (Path("/dev"), ["--dev", "/dev"]),
            (Path("/tmp"), ["--perms", "1777", "--size", str(self.tmp_size_mib << 20), "--tmpfs", "/tmp"]),
        ]
        for path in self.read_only:
            if path.is_symlink() and len(path.parts) == 2:
                mounts.append((path, ["--symlink", os.readlink(path), str(path)]))
            else:
                mounts.append((path, ["--ro-bind", str(path), str(path)]))
        for bind in binds:
            flag = "--bind" if bind.writable else "--ro-bind"
            mounts.append((bind.target, [flag, str(bind.source), str(bind.target)]))
        for device in limits.devices:
            mounts.append((Path(device), ["--dev-bind", device, device]))
        mounts.append((workdir, ["--bind", str(workdir), str(workdir)]))
        mounts += _parent_dirs(mounts)
        for _, mount_args in sorted(mounts, key=lambda m: len(m[0].parts)):
            args += mount_args
        args += ["--remount-ro", "/", "--chdir", str(workdir)]
        # IPC limits need root in the sandbox's IPC namespace: bubblewrap started by root (no user
        # namespace), where the launcher runs as root until it drops to the sandbox's user.
        config = LaunchConfig.from_limits(limits, uid=self.uid, gid=self.uid, keep_fds=list(keep_fds),
                                          groups=device_groups(limits.devices),
                                          ipc_limits=limits.ipc_limits and self.uid is not None)
        # Options travel through --args (a memfd); bwrap wants the command on its own command line.
        return args, ["--", *launcher_argv(self.python, config, argv)]

    def normalize_returncode(self, returncode: int) -> int:
        """bubblewrap exits with 128 + N when the program died of signal N: give -N back."""
        if 128 < returncode < 128 + signal.NSIG:
            return -(returncode - 128)
        return returncode

    def _prepare(self, workdir: Path, binds: list[Bind]) -> None:
        """Give the sandbox's user the folders it may write (when root drops to it)."""
        if self.uid is None:
            return
        for top in [workdir] + [b.source for b in binds if b.writable]:
            for root, dirs, files in os.walk(top):
                os.chown(root, self.uid, self.uid)
                for name in dirs + files:
                    os.chown(os.path.join(root, name), self.uid, self.uid, follow_symlinks=False)

    def _args_fd(self, args: list[str]) -> int:
        """bwrap reads its arguments from this fd: /proc/1/cmdline inside shows no host paths."""
        fd = os.memfd_create("bwrap-args", 0)
        os.write(fd, b"".join(a.encode() + b"\0" for a in args))
        os.lseek(fd, 0, os.SEEK_SET)
        return fd

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
        """Run to completion (compilers); kills the whole sandbox at `timeout_s`."""
        self._prepare(workdir, binds)
        args, command = self._bwrap_args(argv, limits=limits, binds=binds, workdir=workdir, env=env, keep_fds=())
        fd = self._args_fd(args)
        try:
            result = run_captured(
                [self.bwrap, "--args", str(fd), *command],
                timeout_s=timeout_s,
                output_limit_bytes=limits.output_limit_bytes,
                pass_fds=(fd,),
            )
        finally:
            os.close(fd)
        result.returncode = self.normalize_returncode(result.returncode)
        if not result.timed_out:
            result.violation = self.violation(result.returncode)
        return result

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
        """Start `argv` in the sandbox in a new session; `pass_fds` stay open at the same numbers.

        The caller owns the wall clock: `os.killpg(p.pid, SIGKILL)` kills bubblewrap,
        and with it (die-with-parent, pid namespace) everything inside.
        """
        self._prepare(workdir, binds)
        args, command = self._bwrap_args(
            argv, limits=limits, binds=binds, workdir=workdir, env=env, keep_fds=tuple(pass_fds)
        )
        fd = self._args_fd(args)
        outer = [self.bwrap, "--args", str(fd), *command]
        try:
            return _BwrapPopen(
                cgroup.wrap(outer) if cgroup is not None else outer,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                pass_fds=(fd, *pass_fds),
                start_new_session=True,
            )
        finally:
            os.close(fd)


def device_groups(devices: tuple[str, ...] | list[str]) -> list[int]:
    """The groups the sandbox user needs to open the bound device nodes.

    NVIDIA's nodes are usually rw for everyone; the Ascend driver's are 0660 for its own group
    (HwHiAiUser), which the unprivileged sandbox user would otherwise not be in. Never group 0:
    root's group reads far more than a device.
    """
    groups = set()
    for device in devices:
        try:
            info = os.stat(device)
        except OSError:
            continue
        if info.st_mode & 0o006 != 0o006 and info.st_mode & 0o060 and info.st_gid != 0:
            groups.add(info.st_gid)
    return sorted(groups)
