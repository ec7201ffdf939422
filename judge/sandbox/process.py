"""Running a sandboxed command to completion: capped capture, wall clock, group kill.

Shared by every `Sandbox.run`. The command is started in a new session, so its
process group id is its pid; at the deadline the whole group gets SIGKILL (a
program that ignores SIGTERM gains nothing). Output beyond the cap is read and
thrown away, so a chatty program can neither block on a full pipe nor fill the
worker's memory.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time

from judge.errors import SandboxUnavailableError
from judge.sandbox.base import ProcessResult
from judge.sandbox.launcher import LAUNCHER_ERROR_PREFIX, LAUNCHER_FAILED_EXIT
from judge.sandbox.seccomp import violation_from_returncode

_CHUNK = 65536


def kill_group(popen: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process group led by `popen` (started with a new session); idempotent."""
    try:
        os.killpg(popen.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        popen.kill()
    except ProcessLookupError:
        pass


def run_captured(
    argv: list[str],
    *,
    timeout_s: float,
    output_limit_bytes: int,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
    pass_fds: tuple[int, ...] = (),
) -> ProcessResult:
    """Run `argv` in a new session; kill its group at `timeout_s`; keep at most the cap per stream."""
    start = time.monotonic()
    popen = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env,
        pass_fds=pass_fds,
        start_new_session=True,
    )
    kept = {"stdout": bytearray(), "stderr": bytearray()}
    timed_out = False
    try:
        with selectors.DefaultSelector() as sel:
            assert popen.stdout is not None and popen.stderr is not None
            sel.register(popen.stdout, selectors.EVENT_READ, "stdout")
            sel.register(popen.stderr, selectors.EVENT_READ, "stderr")
            deadline = start + timeout_s
            while sel.get_map():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    timed_out = True
                    break
                events = sel.select(timeout=min(remaining, 0.5))
                if not events and popen.poll() is not None:
                    break  # it exited; a straggler holding the pipe open dies with the group
                for key, _ in events:
                    data = os.read(key.fd, _CHUNK)
                    if not data:
                        sel.unregister(key.fileobj)
                        continue
                    buf = kept[key.data]
                    if len(buf) < output_limit_bytes:
                        buf.extend(data[: output_limit_bytes - len(buf)])
            if not timed_out:
                remaining = max(deadline - time.monotonic(), 0.0)
                try:
                    popen.wait(timeout=remaining)
                except subprocess.TimeoutExpired:
                    timed_out = True
    finally:
        # Always kill the group: a compiler's stray children die with it.
        kill_group(popen)
        popen.wait()
        assert popen.stdout is not None and popen.stderr is not None
        popen.stdout.close()
        popen.stderr.close()
    returncode = popen.returncode
    stderr = bytes(kept["stderr"])
    violation = violation_from_returncode(returncode)
    if returncode == LAUNCHER_FAILED_EXIT and LAUNCHER_ERROR_PREFIX.encode() in stderr:
        # The launcher failed before the program ran: the judge's fault (IE), never the
        # submission's CE or SV. Raised here so every toolchain treats it alike.
        line = next(x for x in stderr.decode(errors="replace").splitlines() if LAUNCHER_ERROR_PREFIX in x)
        raise SandboxUnavailableError(f"the sandbox could not start {argv[0]}: {line}")
    return ProcessResult(
        returncode=returncode,
        stdout=bytes(kept["stdout"]),
        stderr=stderr,
        duration_s=time.monotonic() - start,
        timed_out=timed_out,
        violation=None if timed_out else violation,
    )
