"""One untimed pass of a public case under a device profiler's command line (docs/profiles.md).

Nsight Compute and msprof op profile a process they start: the pipeline's `ctx.start_runner`
starts a fresh submission child under the tool's prefix (inside the same sandbox, in a folder of
its own), the case is set and called `calls` times, and the child exits so the tool writes its
report. The tool replays each kernel many times: the calls get `PROFILER_SLOWDOWN` times the
call time limit. Nothing here is timed.
"""

from __future__ import annotations

import contextlib
import fcntl
import shutil
from collections.abc import Iterator
from pathlib import Path

from judge.profiling.context import ProfileContext
from judge.seeds import fresh_seed

PROFILER_SLOWDOWN = 50  # a profiled call may take this many times the call time limit
LOCK_DIR = Path("/tmp")


def tool_path(name: str) -> str | None:
    """The tool's absolute path on this worker's PATH (the sandbox gets no PATH lookup of its own)."""
    return shutil.which(name)


def run_folder(ctx: ProfileContext) -> Path:
    """The profiled child's own folder, the only one it may write: the tool's output goes in it."""
    folder = ctx.folder / "run"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def one_profiled_pass(ctx: ProfileContext, prefix: list[str], *, calls: int = 1) -> None:
    """Run the case's submission `calls` times in a fresh child started under `prefix`."""
    timeout_s = ctx.call_timeout_s * PROFILER_SLOWDOWN
    with ctx.start_runner(prefix, run_folder(ctx)) as child:
        child.set_case(ctx.case, timeout_s=timeout_s)
        for _ in range(calls):
            child.call("submission", fresh_seed(), timeout_s=timeout_s)  # fresh content, as in timing


@contextlib.contextmanager
def one_at_a_time(tool: str) -> Iterator[None]:
    """Hold this host's lock for `tool` (msprof op runs one profiling task per device at a time, and
    workers on one host share its devices): an flock, released when the process ends whatever happens."""
    with (LOCK_DIR / f"opjudge-{tool}.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
