"""What a worker reports on start: host, device, toolchain and driver versions, isolation.

The probes import torch (and, on device hosts, touch the driver), which must not
happen in the parent of a prefork pool: a CUDA context does not survive fork.
`describe_worker` therefore runs them in a child Python (`python -m workers.hostinfo`).
"""

from __future__ import annotations

import json
import os
import platform
import socket
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from judge.backends import Backend
from judge.host_config import HostConfig
from judge.track_settings import settings_classes
from judge.tracks import get_track


def describe_worker(backend: Backend, host: HostConfig, *, queue: str, timeout_s: float = 180.0) -> dict[str, str]:
    """Host, device, toolchain and driver of this worker, probed in a child process.

    Never raises: a probe that fails says so in the value, and the worker still starts.
    """
    info = {"host": socket.gethostname(), "queue": queue, "backend": backend.value, "pid": str(os.getpid()),
            "python": platform.python_version()}
    payload = json.dumps({"backend": backend.value, "host": _host_fields(host)})
    try:
        done = subprocess.run([sys.executable, "-m", "workers.hostinfo", payload], capture_output=True,
                              text=True, timeout=timeout_s, check=False)
        probed = json.loads(done.stdout) if done.returncode == 0 else {"probe": _tail(done.stderr)}
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        probed = {"probe": f"host probe failed: {exc}"}
    return {**info, **{k: str(v) for k, v in probed.items()}}


def probe(backend: Backend, host: HostConfig) -> dict[str, str]:
    """The probes themselves (run in the child): doctor checks of this backend, the sandbox and torch."""
    from judge.doctor import doctor_report

    checks = {(c.area, c.name): c for c in doctor_report(host)}
    info: dict[str, str] = {}
    for (area, name), check in checks.items():
        if area in (backend.value, "sandbox", "host"):
            info[f"{area}.{name}"] = check.detail if check.ok else f"{check.status.value}: {check.detail}"

    def detail(key: tuple[str, str] | None) -> str:
        check = checks.get(key) if key else None
        return check.detail if check and check.ok else ""

    # Which checks name the toolchain, device and driver is the track's to say (judge/tracks/__init__.py).
    report = get_track(backend).host_report

    def own(name: str | None) -> tuple[str, str] | None:
        return (backend.value, name) if name else None

    info["toolchain"] = detail(own(report.toolchain)) or "unavailable"
    info["device"] = detail(own(report.device)) or report.device_probe()
    info["driver"] = detail(own(report.driver)) or report.driver_probe()
    # What isolation this host can give (strict, degraded), whatever mode the worker asks for.
    info["sandbox"] = detail(("sandbox", "auto mode gives")) or "unavailable"
    info["sandbox_mode"] = host.sandbox_mode
    info["memory_cgroup"] = detail(("sandbox", "memory cgroup")) or "unavailable"
    return info


def _host_fields(host: HostConfig) -> dict[str, Any]:
    fields = asdict(host)
    fields.pop("limits")  # the child uses the track's defaults; limits do not change what is installed
    # The tracks' settings by public key (the child builds the records again: `_main`).
    fields["settings"] = {item.key: getattr(record, item.name) for record in host.settings
                          for item in record.declared().values()}
    return {k: str(v) if isinstance(v, Path) else v for k, v in _plain(fields).items()}


def _plain(fields: dict[str, Any]) -> dict[str, Any]:
    settings = {k: str(v) if isinstance(v, Path) else v for k, v in fields["settings"].items()}
    return {**fields, "settings": settings}


def _tail(text: str) -> str:
    lines = text.strip().splitlines()
    return f"host probe failed: {lines[-1] if lines else 'no output'}"


def _main(argv: list[str]) -> None:
    payload = json.loads(argv[0])
    fields = payload["host"]
    for key in ("work_root", "cache_dir", "problems_dir", "reference_dir"):
        if fields.get(key):
            fields[key] = Path(fields[key])
    given = fields.pop("settings")
    fields["settings"] = tuple(kind.from_env({}, {k: v for k, v in given.items() if k in kind.declared()})
                               for kind in settings_classes())
    print(json.dumps(probe(Backend(payload["backend"]), HostConfig(**fields))))


if __name__ == "__main__":
    _main(sys.argv[1:])
