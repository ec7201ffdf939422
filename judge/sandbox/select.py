"""Choosing the sandbox at start-up: probe what works, honour strict | auto | off (docs/security.md, "3. Sandbox").

- strict: bubblewrap namespaces and seccomp must both work, else
  `SandboxUnavailableError` says which probe failed and how to fix it.
- auto: bubblewrap if it works, else rlimits + seccomp (+ Landlock) with
  isolation `degraded` recorded on every result.
- off: nothing (development only; every result says `off`).

Probing starts a few short processes (~0.3 s); results are cached per process
and argument set, so a worker probes once.
"""

from __future__ import annotations

import functools
import shutil
import signal
import subprocess
import tempfile
from enum import StrEnum
from pathlib import Path

from judge.errors import SandboxUnavailableError
from judge.sandbox.base import Sandbox, SandboxLimits
from judge.sandbox.bwrap import BwrapSandbox
from judge.sandbox.launcher import LaunchConfig, launcher_argv
from judge.sandbox.paths import interpreter
from judge.sandbox.rlimit import OffSandbox, RlimitSandbox

OK = "ok"


class SandboxMode(StrEnum):
    STRICT = "strict"
    AUTO = "auto"
    OFF = "off"


_FIX_BWRAP = "install bubblewrap: apt-get install bubblewrap"
_FIX_NAMESPACES = (
    "let bubblewrap create namespaces: run the worker as root, or allow unprivileged user "
    "namespaces (sysctl -w kernel.unprivileged_userns_clone=1 and user.max_user_namespaces=10000; "
    "on Ubuntu also kernel.apparmor_restrict_unprivileged_userns=0); in a container start it with "
    "--privileged, or --security-opt seccomp=unconfined --security-opt apparmor=unconfined "
    "--cap-add SYS_ADMIN"
)
_FIX_SECCOMP = (
    "make seccomp usable: install libseccomp2 and the pyseccomp package (pip install pyseccomp), "
    "and do not run the worker under a container profile that forbids seccomp()"
)
_FIX_INSTALL = (
    "install the judge into this interpreter (pip install -e . from the checkout, or the wheel): "
    "sandboxed processes start with `python -I` and a cleared environment, so PYTHONPATH is not seen"
)


def _fix_for(detail: str, default: str) -> str:
    """The fix a person needs: an uninstalled judge fails every probe the same way, whatever the host."""
    return _FIX_INSTALL if "No module named 'judge'" in detail else default


# A program that must be killed by the deny-list: proves the filter is enforced, not just loaded.
_SOCKET_PROBE = "import socket; socket.socket(); print('socket allowed')"


def _probe_seccomp(python: str) -> str:
    from judge.sandbox.seccomp import seccomp_available

    reason = seccomp_available()
    if reason is not None:
        return f"failed: libseccomp unusable ({reason}); fix: {_FIX_SECCOMP}"
    with tempfile.TemporaryDirectory(prefix="opjudge-probe-") as tmp:
        config = LaunchConfig(workdir=tmp, seccomp=True)
        argv = launcher_argv(python, config, [python, "-I", "-c", _SOCKET_PROBE])
        try:
            proc = subprocess.run(argv, capture_output=True, timeout=30, cwd=tmp)
        except subprocess.TimeoutExpired:
            return f"failed: the seccomp probe did not finish in 30 s; fix: {_FIX_SECCOMP}"
    if proc.returncode != -signal.SIGSYS:
        detail = (proc.stderr or proc.stdout).decode(errors="replace").strip()[-300:]
        return (
            f"failed: a socket() call was not stopped (exit {proc.returncode}: {detail}); "
            f"fix: {_fix_for(detail, _FIX_SECCOMP)}"
        )
    return OK


def _probe_bwrap(path: str | None, extra_ro_paths: tuple[Path, ...]) -> tuple[str, str]:
    """(bwrap probe, namespaces probe)."""
    if path is None:
        return f"failed: bwrap is not on PATH; fix: {_FIX_BWRAP}", "failed: needs bwrap"
    try:
        version = subprocess.run([path, "--version"], capture_output=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"failed: {path} does not run ({exc}); fix: {_FIX_BWRAP}", "failed: needs bwrap"
    bwrap = f"{OK}: {path} ({version.decode(errors='replace').strip()})"
    sandbox = BwrapSandbox(bwrap=path, extra_ro_paths=list(extra_ro_paths))
    with tempfile.TemporaryDirectory(prefix="opjudge-probe-") as tmp:
        result = sandbox.run(
            [interpreter(), "-I", "-c", "import os; print(os.getpid())"],
            limits=SandboxLimits(seccomp=True),
            binds=[],
            workdir=Path(tmp),
            timeout_s=30,
        )
    out = result.stdout.decode(errors="replace").strip()
    if result.returncode != 0 or out not in {"1", "2", "3"}:
        detail = result.stderr.decode(errors="replace").strip()[-300:]
        return bwrap, f"failed: bwrap could not start a sandbox (exit {result.returncode}: {detail}); " + (
            f"fix: {_fix_for(detail, _FIX_NAMESPACES)}"
        )
    user = "root drops to uid 65534" if sandbox.uid is not None else "user namespace, caller's uid"
    return bwrap, f"{OK}: pid, net, ipc, mount, uts namespaces; {user}"


def _probe_landlock() -> str:
    from judge.sandbox.landlock import abi_version

    abi = abi_version()
    return f"{OK}: ABI {abi}" if abi else "unavailable (degraded mode cannot confine files)"


@functools.lru_cache(maxsize=8)
def _probes(bwrap_path: str | None, extra_ro_paths: tuple[Path, ...]) -> dict[str, str]:
    bwrap, namespaces = _probe_bwrap(bwrap_path, extra_ro_paths)
    return {
        "bwrap": bwrap,
        "namespaces": namespaces,
        "seccomp": _probe_seccomp(interpreter()),
        "landlock": _probe_landlock(),
    }


def probe_sandbox(*, extra_ro_paths: list[Path] | None = None) -> dict[str, str]:
    """Each probe's outcome ("ok..." or "failed: ...; fix: ...") and the isolation `auto` gives.

    For `opjudge doctor`; cached per process and bwrap location (PATH is looked up each time).
    """
    result = dict(_probes(shutil.which("bwrap"), tuple(extra_ro_paths or ())))
    if _ok(result["namespaces"]) and _ok(result["seccomp"]):
        result["auto"] = "strict"
    elif _ok(result["seccomp"]):
        result["auto"] = "degraded"
    else:
        result["auto"] = "unavailable"
    return result


def _ok(outcome: str) -> bool:
    return outcome.startswith(OK)


def make_sandbox(mode: str, *, extra_ro_paths: list[Path] | None = None) -> Sandbox:
    """The sandbox for `mode` (strict | auto | off); raises SandboxUnavailableError when it cannot be had.

    `extra_ro_paths` are made readable inside (e.g. the repository's problems/ folder).
    """
    try:
        wanted = SandboxMode(mode)
    except ValueError:
        raise SandboxUnavailableError(f"unknown sandbox mode {mode!r}; use strict, auto or off") from None
    extra = list(extra_ro_paths or [])
    if wanted is SandboxMode.OFF:
        return OffSandbox()
    probes = probe_sandbox(extra_ro_paths=extra)
    if _ok(probes["namespaces"]) and _ok(probes["seccomp"]):
        return BwrapSandbox(bwrap=shutil.which("bwrap"), extra_ro_paths=extra)
    if wanted is SandboxMode.STRICT:
        failed = [f"{name}: {probes[name]}" for name in ("bwrap", "namespaces", "seccomp") if not _ok(probes[name])]
        raise SandboxUnavailableError("strict sandbox unavailable; " + " | ".join(failed))
    if _ok(probes["seccomp"]):
        return RlimitSandbox(extra_ro_paths=extra)
    raise SandboxUnavailableError(f"no sandbox at all can be had here; seccomp: {probes['seccomp']}")
