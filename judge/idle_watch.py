"""The submission's process does nothing while the baseline is timed (issue 31 item 2).

The two children share the host: a helper thread the submission leaves running while its main thread
waits for the next command can stream through memory exactly while the baseline's call is timed, and
slow it down (a red team's kernel scored 105-110 against 70 for the honest one so). The worker reads,
from outside the child, the CPU time of every thread of the submission's process tree (the sandbox's
processes and the runner's, `/proc/<pid>/task/<tid>/schedstat`, nanoseconds) before and after each
baseline call: an idle runner uses next to none. A baseline call during which the submission used more
than `BUSY_ALLOWANCE_NS` and `BUSY_SHARE` of the baseline's own bracket is counted; `BUSY_CALLS_SV` of
them in one case is SV (docs/security.md, "Runner anti-cheat"). Freezing the child (a cgroup freezer)
would stop it outright; this measures instead, since the worker has no cgroup of its own to create
groups under on every host it runs on.
"""

from __future__ import annotations

from pathlib import Path

PROC = Path("/proc")
BUSY_ALLOWANCE_NS = 3_000_000  # an idle runner's wake-ups, OpenMP's spin before it sleeps: well below
BUSY_SHARE = 0.2  # of the baseline call's bracket
BUSY_CALLS_SV = 3


def _tasks(pid: int, proc: Path) -> list[Path]:
    try:
        return list((proc / str(pid) / "task").iterdir())
    except OSError:
        return []  # gone (or never there): it uses nothing more


def tree_pids(root: int, proc: Path = PROC) -> list[int]:
    """`root` and every process below it, from the kernel's children lists (no scan of all of /proc)."""
    seen, todo = [], [root]
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.append(pid)
        for task in _tasks(pid, proc):
            try:
                todo += [int(child) for child in (task / "children").read_text().split()]
            except (OSError, ValueError):
                continue
    return seen


def tree_cpu_ns(root: int | None, proc: Path = PROC) -> int:
    """CPU time (ns) of every thread of `root`'s process tree so far; 0 without one."""
    if root is None:
        return 0
    total = 0
    for pid in tree_pids(root, proc):
        for task in _tasks(pid, proc):
            try:
                total += int((task / "schedstat").read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue
    return total


def busy_during(used_ns: int, bracket_ns: int) -> bool:
    """Whether the submission's CPU time during one baseline call counts as work done then."""
    return used_ns > BUSY_ALLOWANCE_NS and used_ns > BUSY_SHARE * max(bracket_ns, 0)
