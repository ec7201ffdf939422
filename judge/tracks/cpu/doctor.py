"""`opjudge doctor`'s checks of the CPU track (judge/doctor.py): g++ and its OpenMP runtime."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from pathlib import Path

from judge.doctor import Unavailable, toolchain_version
from judge.host_config import HostConfig
from judge.tracks import DoctorCheck


def _openmp() -> str:
    gxx = shutil.which("g++")
    if gxx is None:
        raise Unavailable("g++ not found; apt-get install g++")
    found = subprocess.run([gxx, "-print-file-name=libgomp.so"], capture_output=True, text=True,
                           timeout=30).stdout.strip()
    if not found or not os.path.isabs(found):
        raise Unavailable("libgomp (GCC's OpenMP runtime) not found; apt-get install libgomp1 libgcc-12-dev")
    return found


def cpu_model() -> str:
    """The host CPU's model and the cores this process may use: the device a CPU worker reports."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return f"{line.split(':', 1)[1].strip()} ({len(os.sched_getaffinity(0))} cores usable)"
    except OSError:
        pass
    return platform.processor() or platform.machine()


def doctor_checks(host: HostConfig) -> list[DoctorCheck]:
    return [("compiler", lambda: toolchain_version("cpu", host)), ("openmp", _openmp)]
