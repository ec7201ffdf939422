"""`opjudge doctor`: what this host can judge, backend by backend, and why not when it cannot.

Every check says ok, unavailable (with the reason and, where there is one, the fix) or
unknown (the check itself could not run). Nothing here changes the host; the slowest
check (importing torch_npu in a child process) runs only when torch_npu is installed.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from judge.backends import Backend
from judge.errors import JudgeError
from judge.host import HostConfig


class CheckStatus(StrEnum):
    OK = "ok"
    UNAVAILABLE = "unavailable"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class DoctorCheck:
    area: str  # "cpu", "cuda", "npu", "sandbox" or "host"
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
        _guard("cpu", "compiler", lambda: _toolchain_version(Backend.CPU, host)),
        _guard("cpu", "openmp", _openmp),
        _guard("cuda", "compiler", lambda: _toolchain_version(Backend.CUDA, host)),
        _guard("cuda", "device", _cuda_device),
        _guard("cuda", "float32 matmul", lambda: _cuda_float32(os.environ)),
        _guard("npu", "CANN toolkit", lambda: _toolchain_version(Backend.NPU, host)),
        _guard("npu", "cmake", lambda: _cmake(host)),
        _guard("npu", "torch_npu", lambda: _torch_npu(host)),
        _guard("npu", "device nodes", lambda: _npu_nodes(host)),
        _guard("npu", "driver", lambda: _npu_driver(host)),
    ]
    checks += _sandbox_checks()
    return checks


def render_doctor(checks: list[DoctorCheck]) -> str:
    """A plain-text table (it is read in terminals and pasted into issues alike)."""
    width_area = max(len(c.area) for c in checks)
    width_name = max(len(c.name) for c in checks)
    width_status = max(len(c.status.value) for c in checks)
    lines = []
    for check in checks:
        lines.append(f"{check.area:<{width_area}}  {check.name:<{width_name}}  "
                     f"{check.status.value:<{width_status}}  {check.detail}")
    ready = [area for area in ("cpu", "cuda", "npu")
             if any(c.area == area for c in checks) and all(c.ok for c in checks if c.area == area)]
    lines.append("")
    lines.append(f"backends ready on this host: {', '.join(ready) or 'none'}")
    return "\n".join(lines)


class _Unavailable(Exception):
    """A check's negative answer, carrying the reason shown to the operator."""


def _guard(area: str, name: str, check: Callable[[], str]) -> DoctorCheck:
    try:
        return DoctorCheck(area, name, CheckStatus.OK, check())
    except (_Unavailable, JudgeError) as exc:
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


def _toolchain_version(backend: Backend, host: HostConfig) -> str:
    from judge.tracks import get_track

    return get_track(backend).make_toolchain(host).version()


def _torch_version() -> str:
    import torch

    return str(torch.__version__)


def _openmp() -> str:
    gxx = shutil.which("g++")
    if gxx is None:
        raise _Unavailable("g++ not found; apt-get install g++")
    found = subprocess.run([gxx, "-print-file-name=libgomp.so"], capture_output=True, text=True,
                           timeout=30).stdout.strip()
    if not found or not os.path.isabs(found):
        raise _Unavailable("libgomp (GCC's OpenMP runtime) not found; apt-get install libgomp1 libgcc-12-dev")
    return found


def _cuda_device() -> str:
    import torch

    if not torch.cuda.is_available():
        build = "a CPU-only torch build" if torch.version.cuda is None else f"torch built for CUDA {torch.version.cuda}"
        raise _Unavailable(f"no CUDA GPU visible to torch ({build})")
    return f"{torch.cuda.device_count()} GPU(s), first: {torch.cuda.get_device_name(0)}"


def _cuda_float32(environ: Mapping[str, str]) -> str:
    from judge.tracks.cuda import cuda_host_extra, refuse_tf32_override

    refuse_tf32_override(cuda_host_extra(environ))
    return "true float32 (TF32 not forced)"


def _cmake(host: HostConfig) -> str:
    cmake = shutil.which(host.extra.get("cmake", "cmake"))
    if cmake is None:
        raise _Unavailable("cmake not found (the NPU build runs CANN's CMake modules); apt-get install cmake")
    first = subprocess.run([cmake, "--version"], capture_output=True, text=True, timeout=30).stdout.splitlines()
    return first[0] if first else cmake


def _torch_npu(host: HostConfig) -> str:
    if importlib.util.find_spec("torch_npu") is None:
        raise _Unavailable("torch_npu is not installed; pip install the torch_npu wheel matching torch and CANN")
    from judge.tracks.npu import runner_env

    # Imported in a child: a torch_npu that cannot find CANN's libraries can abort the process.
    env = {**os.environ, **runner_env(host)}
    done = subprocess.run([sys.executable, "-c", "import torch_npu, torch; print(torch_npu.__version__, "
                           "torch.npu.device_count())"], capture_output=True, text=True, timeout=120, env=env)
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise _Unavailable(f"torch_npu is installed but does not import: {tail}")
    version, count = done.stdout.split()[:2]
    if count == "0":
        raise _Unavailable(f"torch_npu {version} imports but sees no NPU")
    return f"torch_npu {version}, {count} NPU(s) visible"


def _npu_nodes(host: HostConfig) -> str:
    from judge.tracks.npu import device_nodes

    nodes = device_nodes(host)
    missing = [n for n in nodes if not os.path.exists(n)]
    if missing:
        raise _Unavailable(f"missing {', '.join(missing)} (no Ascend driver, or not passed into this container)")
    return ", ".join(nodes)


def _npu_driver(host: HostConfig) -> str:
    from judge.tracks.npu import readonly_paths

    driver = readonly_paths(host)[0]
    if not driver.is_dir():
        raise _Unavailable(f"{driver} does not exist (install the Ascend NPU driver and firmware)")
    info = driver / "version.info"
    text = info.read_text(errors="replace").strip().splitlines()[0] if info.is_file() else "version unknown"
    return f"{driver} ({text})"


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
