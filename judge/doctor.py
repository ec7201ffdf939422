"""`opjudge doctor`: what this host can judge, backend by backend, and why not when it cannot.

Every check says ok, unavailable (with the reason and, where there is one, the fix) or
unknown (the check itself could not run). Nothing here changes the host. A backend's
checks are its track's (`Track.doctor_checks`, judge/tracks/<backend>/doctor.py).
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from judge.backends import Backend
from judge.errors import JudgeError
from judge.host_config import HostConfig


class CheckStatus(StrEnum):
    OK = "ok"
    UNAVAILABLE = "unavailable"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class DoctorCheck:
    area: str  # a backend's name (its track's checks), "sandbox" or "host"
    name: str  # what was checked, e.g. "compiler", "device nodes"
    status: CheckStatus
    detail: str  # the version found, or why it is unavailable and how to fix it

    @property
    def ok(self) -> bool:
        return self.status is CheckStatus.OK


def doctor_report(host: HostConfig) -> list[DoctorCheck]:
    """Checks for every backend, the sandbox and the host's versions, in a fixed order."""
    checks = [
        DoctorCheck("host", "python", CheckStatus.OK, f"{platform.python_version()} ({sys.executable})"),
        _guard("host", "torch", _torch_version),
        _guard("host", "cache", lambda: _cache(host)),
    ]
    checks += [_guard(backend.value, name, check) for backend in Backend
               for name, check in _track_checks(backend, host)]
    checks += _sandbox_checks()
    return checks


def _track_checks(backend: Backend, host: HostConfig) -> list[tuple[str, Callable[[], str]]]:
    """The track's own checks (`Track.doctor_checks`); a track that cannot even load says why."""
    from judge.tracks import get_track

    try:
        return get_track(backend).doctor_checks(host)
    except Exception as exc:
        reason = f"the track does not load: {type(exc).__name__}: {exc}"

        def broken() -> str:
            raise Unavailable(reason)
        return [("track", broken)]


def render_doctor(checks: list[DoctorCheck]) -> str:
    """A plain-text table (it is read in terminals and pasted into issues alike)."""
    width_area = max(len(c.area) for c in checks)
    width_name = max(len(c.name) for c in checks)
    width_status = max(len(c.status.value) for c in checks)
    lines = []
    for check in checks:
        lines.append(f"{check.area:<{width_area}}  {check.name:<{width_name}}  "
                     f"{check.status.value:<{width_status}}  {check.detail}")
    ready = [area for area in (b.value for b in Backend)
             if any(c.area == area for c in checks) and all(c.ok for c in checks if c.area == area)]
    lines.append("")
    lines.append(f"backends ready on this host: {', '.join(ready) or 'none'}")
    return "\n".join(lines)


class Unavailable(Exception):
    """A check's negative answer, carrying the reason shown to the operator."""


def _guard(area: str, name: str, check: Callable[[], str]) -> DoctorCheck:
    try:
        return DoctorCheck(area, name, CheckStatus.OK, check())
    except (Unavailable, JudgeError) as exc:
        return DoctorCheck(area, name, CheckStatus.UNAVAILABLE, str(exc))
    except Exception as exc:  # a check that breaks must not hide the others
        return DoctorCheck(area, name, CheckStatus.UNKNOWN, f"the check failed: {type(exc).__name__}: {exc}")


def _cache(host: HostConfig) -> str:
    """The cache's folder and size: oracle entries (bounded, judge/oracle_cache.py) and baseline builds."""
    from judge.oracle_cache import cache_usage

    if host.cache_dir is None:
        return "off (no cache folder)"
    oracle = cache_usage(host.cache_dir / "oracle")
    builds = list((host.cache_dir / "builds").glob("*.so")) if (host.cache_dir / "builds").is_dir() else []
    bounds = [f"cap {_mib(host.oracle_cache_max_bytes)}"] if host.oracle_cache_max_bytes is not None else []
    bounds += [f"kept {host.oracle_cache_max_age_s / 3600:.1f} h"] if host.oracle_cache_max_age_s is not None else []
    limit = f" ({', '.join(bounds)})" if bounds else ""
    return (f"{host.cache_dir}: oracle {oracle.entries} entries, {_mib(oracle.bytes)}{limit}; "
            f"baseline builds {len(builds)}, {_mib(sum(p.stat().st_size for p in builds))}")


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB"


def toolchain_version(backend: str, host: HostConfig) -> str:
    """The track's toolchain's version (a track's first check)."""
    from judge.tracks import get_track

    return get_track(backend).make_toolchain(host).version()


def _torch_version() -> str:
    import torch

    return str(torch.__version__)


def _sandbox_checks() -> list[DoctorCheck]:
    try:
        from judge.sandbox.select import probe_sandbox
    except ImportError:
        return [DoctorCheck("sandbox", "isolation", CheckStatus.UNKNOWN,
                            "judge.sandbox.select.probe_sandbox is not available in this build")]
    try:
        probes = probe_sandbox()
    except Exception as exc:
        return [DoctorCheck("sandbox", "isolation", CheckStatus.UNKNOWN, f"probing failed: {exc}")]
    checks = []
    for name, outcome in probes.items():
        if name == "auto":
            status = CheckStatus.UNAVAILABLE if outcome == "unavailable" else CheckStatus.OK
            checks.append(DoctorCheck("sandbox", "auto mode gives", status, outcome))
        else:
            status = CheckStatus.OK if outcome.startswith("ok") else CheckStatus.UNAVAILABLE
            checks.append(DoctorCheck("sandbox", name, status, outcome))
    checks.append(_memory_cgroup_check())
    return checks


def _memory_cgroup_check() -> DoctorCheck:
    """Whether the runner children get a memory cgroup here (judge/sandbox/memcg.py), and if not why."""
    from judge.sandbox.memcg import find_root

    root, reason = find_root()
    if root is None:
        return DoctorCheck("sandbox", "memory cgroup", CheckStatus.UNAVAILABLE,
                           f"{reason}; without one only the address space is limited and shared memory is "
                           "not counted (set OPJUDGE_MEMORY_CGROUP=required to refuse to judge so)")
    return DoctorCheck("sandbox", "memory cgroup", CheckStatus.OK, f"cgroup v{root.version} at {root.path}")
