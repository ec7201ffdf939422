"""A memory cgroup per runner child: its memory, shared memory and tmpfs files, with no swap.

RLIMIT_AS bounds what a process maps, not what it owns: pages of a memfd or a SysV segment that
are no longer mapped, and files written to a tmpfs, count against no rlimit, and a kernel could
hold gigabytes of the host's memory that way. A memory cgroup charges every page the child's
processes bring in, shmem and tmpfs included; at the limit the kernel's OOM killer ends the
child and the group's `oom_kill` count says so (verdict MLE, docs/rules.md). Swap is counted
with memory (cgroup v1 `memory.memsw.limit_in_bytes`, v2 `memory.swap.max = 0`), so a child
cannot push the host into swapping instead of being stopped.

Each group is made under the worker's own cgroup (read from /proc/self/cgroup), so a worker
needs nothing outside what its host or container already delegates to it. cgroup v1 (a mounted
`memory` hierarchy) and v2 (the unified hierarchy, with `memory` in the worker's subtree) are
both handled. The child enters its group before bubblewrap starts (a shell writes its own pid to
`cgroup.procs`, then execs): everything the sandbox starts is inside from the first instruction.

docs/security.md ("Memory") says what this stops and what the host must allow.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from judge.errors import SandboxUnavailableError

log = logging.getLogger(__name__)

PREFIX = "opjudge-"  # the groups this module makes; stale ones (their worker gone) are removed
# Moves the shell into the group, then execs the real command: no process of the sandbox runs outside.
_ENTER = 'echo $$ > "$1" && shift && exec "$@"'


@dataclass(frozen=True)
class CgroupRoot:
    """Where this worker may make memory groups: a folder of a v1 memory hierarchy or of cgroup v2."""

    path: Path
    version: int  # 1 or 2

    def new_group(self, limit_mib: int) -> MemoryCgroup:
        """A fresh group limited to `limit_mib` MiB of memory plus swap together."""
        path = self.path / f"{PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
        try:
            path.mkdir()
            group = MemoryCgroup(path, self.version, limit_mib)
            group.set_limit()
        except OSError as exc:
            with contextlib.suppress(OSError):
                path.rmdir()
            raise SandboxUnavailableError(f"cannot make a memory cgroup under {self.path}: {exc}") from exc
        return group


class MemoryCgroup:
    """One child's group; `close()` ends whatever is left in it and removes it."""

    def __init__(self, path: Path, version: int, limit_mib: int) -> None:
        self.path, self.version, self.limit_mib = path, version, limit_mib

    def set_limit(self) -> None:
        limit = str(self.limit_mib << 20)
        if self.version == 2:
            (self.path / "memory.max").write_text(limit)
            with contextlib.suppress(FileNotFoundError):  # a kernel without swap accounting has no file
                (self.path / "memory.swap.max").write_text("0")
            with contextlib.suppress(FileNotFoundError):  # the OOM killer ends every process of the group
                (self.path / "memory.oom.group").write_text("1")
            return
        (self.path / "memory.limit_in_bytes").write_text(limit)
        memsw = self.path / "memory.memsw.limit_in_bytes"
        if memsw.exists():  # swap accounting on: memory and swap together under one limit
            memsw.write_text(limit)
        else:  # without it the group can still be kept off swap
            (self.path / "memory.swappiness").write_text("0")

    def wrap(self, argv: list[str]) -> list[str]:
        """`argv` run by a shell that first moves itself into this group."""
        return ["/bin/sh", "-c", _ENTER, "sh", str(self.path / "cgroup.procs"), *argv]

    def oom_kills(self) -> int:
        """How many processes the kernel killed in this group for its limit (0 when unreadable)."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            for line in (self.path / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            return 0
        return 0

    def peak_bytes(self) -> int | None:
        """The most memory the group has held, where the kernel says (v1 always; v2 from Linux 5.19)."""
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        try:
            return int((self.path / name).read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def pids(self) -> list[int]:
        try:
            return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def close(self, wait_s: float = 2.0) -> None:
        """Kill what is still in the group and remove it; a group that will not go is logged."""
        deadline = time.monotonic() + wait_s
        while True:
            for pid in self.pids():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError as exc:
                if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                    log.warning("memory cgroup left behind", extra={"cgroup": str(self.path), "error": str(exc)})
                    return
            time.sleep(0.01)


def _own_cgroup_lines() -> dict[str, str]:
    """/proc/self/cgroup as {controller list or "": path}."""
    found: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        found[controllers] = path
    return found


def _mount_points() -> list[tuple[str, Path, str, str]]:
    """(fs type, mount point, mount root, super options) of every cgroup mount, from mountinfo."""
    mounts = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            mounts.append((tail[0], Path(fields[4]), fields[3], tail[2]))
    return mounts


def _under(mount_root: str, path: str) -> str | None:
    """`path` (as /proc/self/cgroup says it) relative to a mount showing `mount_root`, or None."""
    if mount_root == "/":
        return path.lstrip("/")
    if path == mount_root or path.startswith(mount_root.rstrip("/") + "/"):
        return path[len(mount_root):].lstrip("/")
    return None


def _v1_root() -> CgroupRoot | None:
    own = next((p for c, p in _own_cgroup_lines().items() if "memory" in c.split(",")), None)
    if own is None:
        return None
    for fstype, point, root, options in _mount_points():
        if fstype == "cgroup" and "memory" in options.split(","):
            rel = _under(root, own)
            if rel is not None and (point / rel / "memory.limit_in_bytes").exists():
                return CgroupRoot(point / rel, 1)
    return None


def _v2_root() -> tuple[CgroupRoot | None, str]:
    own = _own_cgroup_lines().get("")
    if own is None:
        return None, "no cgroup v2 hierarchy"
    for fstype, point, root, _ in _mount_points():
        rel = _under(root, own) if fstype == "cgroup2" else None
        if rel is None:
            continue
        folder = point / rel
        controllers = (folder / "cgroup.controllers").read_text().split() if folder.exists() else []
        if "memory" not in controllers:
            return None, f"the memory controller is not delegated to {folder}"
        enabled = (folder / "cgroup.subtree_control").read_text().split()
        if "memory" not in enabled:
            try:
                (folder / "cgroup.subtree_control").write_text("+memory")
            except OSError as exc:
                return None, (f"cannot enable the memory controller below {folder} ({exc.strerror}): a v2 "
                              "group that holds processes cannot; start the worker in a leaf of a group "
                              "delegated to it (docs/operations.md)")
        return CgroupRoot(folder, 2), ""
    return None, "the worker's cgroup v2 folder is not mounted"


def _remove_stale(root: CgroupRoot) -> None:
    """Groups of workers that are gone (killed before they could remove them), when empty."""
    for path in root.path.glob(f"{PREFIX}*"):
        pid = path.name[len(PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            with contextlib.suppress(OSError):
                path.rmdir()


def find_root() -> tuple[CgroupRoot | None, str]:
    """Where this process may make memory groups, or None and why not (for `opjudge doctor`)."""
    try:
        root = _v1_root()
        reason = ""
        if root is None:
            root, reason = _v2_root()
    except (OSError, ValueError) as exc:
        return None, f"cannot read this process's cgroups: {exc}"
    if root is None:
        return None, reason or "no memory cgroup hierarchy is mounted"
    if not os.access(root.path, os.W_OK):
        return None, f"{root.path} is not writable by this worker (run it as root, or delegate the group to it)"
    try:
        _remove_stale(root)
        root.new_group(64).close()  # the probe: make, limit and remove one group
    except SandboxUnavailableError as exc:
        return None, str(exc)
    return root, ""


MODES = ("auto", "required", "off")  # the host's choice, HostConfig.memory_cgroup


_found: tuple[CgroupRoot | None, str] | None = None


def memory_root(mode: str) -> CgroupRoot | None:
    """The root to make the children's groups in, found once per process; None when off or (auto)
    unavailable. `required` without one raises `SandboxUnavailableError` with the reason."""
    global _found
    if mode not in MODES:
        raise ValueError(f"memory cgroup mode must be one of {', '.join(MODES)}, not {mode!r}")
    if mode == "off":
        return None
    if _found is None:
        _found = find_root()
        if _found[0] is None:
            log.warning("no memory cgroup for the runner children", extra={"reason": _found[1]})
    root, reason = _found
    if root is None and mode == "required":
        raise SandboxUnavailableError(f"a memory cgroup is required but unavailable: {reason}")
    return root
