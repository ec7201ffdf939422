"""`opjudge doctor`'s checks of the NPU track (judge/doctor.py): CANN, cmake, torch_npu, the device and driver.
The slowest (importing torch_npu in a child process) runs only when torch_npu is installed."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys

from judge.doctor import Unavailable, toolchain_version
from judge.host_config import HostConfig
from judge.track_settings.npu import NpuSettings
from judge.tracks import DoctorCheck


def _cmake(host: HostConfig) -> str:
    cmake = shutil.which(host.track_settings(NpuSettings).cmake)
    if cmake is None:
        raise Unavailable("cmake not found (the NPU build runs CANN's CMake modules); apt-get install cmake")
    first = subprocess.run([cmake, "--version"], capture_output=True, text=True, timeout=30).stdout.splitlines()
    return first[0] if first else cmake


def _torch_npu(host: HostConfig) -> str:
    if importlib.util.find_spec("torch_npu") is None:
        raise Unavailable("torch_npu is not installed; pip install the torch_npu wheel matching torch and CANN")
    from judge.tracks.npu import runner_env

    # Imported in a child: a torch_npu that cannot find CANN's libraries can abort the process.
    env = {**os.environ, **runner_env(host)}
    done = subprocess.run([sys.executable, "-c", "import torch_npu, torch; print(torch_npu.__version__, "
                           "torch.npu.device_count())"], capture_output=True, text=True, timeout=120, env=env)
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise Unavailable(f"torch_npu is installed but does not import: {tail}")
    version, count = done.stdout.split()[:2]
    if count == "0":
        raise Unavailable(f"torch_npu {version} imports but sees no NPU")
    return f"torch_npu {version}, {count} NPU(s) visible"


def _npu_nodes(host: HostConfig) -> str:
    from judge.tracks.npu import device_nodes

    nodes = device_nodes(host)
    missing = [n for n in nodes if not os.path.exists(n)]
    if missing:
        raise Unavailable(f"missing {', '.join(missing)} (no Ascend driver, or not passed into this container)")
    return ", ".join(nodes)


def _npu_driver(host: HostConfig) -> str:
    from judge.tracks.npu import readonly_paths

    driver = readonly_paths(host)[0]
    if not driver.is_dir():
        raise Unavailable(f"{driver} does not exist (install the Ascend NPU driver and firmware)")
    info = driver / "version.info"
    text = info.read_text(errors="replace").strip().splitlines()[0] if info.is_file() else "version unknown"
    return f"{driver} ({text})"


def doctor_checks(host: HostConfig) -> list[DoctorCheck]:
    return [("CANN toolkit", lambda: toolchain_version("npu", host)), ("cmake", lambda: _cmake(host)),
            ("torch_npu", lambda: _torch_npu(host)), ("device nodes", lambda: _npu_nodes(host)),
            ("driver", lambda: _npu_driver(host))]
