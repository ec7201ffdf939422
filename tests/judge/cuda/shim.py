"""Build a CUDA source for the CPU through tests/judge/cuda/cpu_shim (a GPU-less check of its logic).

The launch syntax `k<<<grid, block, smem, stream>>>(args)` and `extern __shared__` arrays are
rewritten into calls of the shim; everything else compiles as ordinary C++20 with g++.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

SHIM_DIR = Path(__file__).resolve().parent / "cpu_shim"

# name or name<template args> followed by the launch configuration and the opening parenthesis.
_LAUNCH = re.compile(r"([A-Za-z_][\w:]*(?:\s*<[^<>;]*>)?)\s*<<<(.*?)>>>\s*\(\s*(\)?)", re.S)
_EXTERN_SHARED = re.compile(r"extern\s+__shared__\s+(?:__align__\(\d+\)\s+)?([\w:]+)\s+(\w+)\s*\[\s*\]\s*;")


def rewrite(source: str) -> str:
    """The CUDA source with launches and dynamic shared memory expressed through the shim."""

    def launch(match: re.Match[str]) -> str:
        kernel, config, closing = match.groups()
        head = f"::shim::launch({kernel.strip()}, ::shim::Config{{{config}}}"
        return head + (")" if closing else ", ")

    source = _LAUNCH.sub(launch, source)
    return _EXTERN_SHARED.sub(lambda m: f"{m.group(1)}* {m.group(2)} = ::shim::dynamic_smem<{m.group(1)}>();",
                              source)


def gxx_available() -> bool:
    return shutil.which("g++") is not None


def build_shim_library(source: Path, include_dirs: list[Path], output: Path) -> Path:
    """Compile `source` (a .cu file) with the shim into a shared library at `output`."""
    rewritten = output.with_suffix(".shim.cpp")
    rewritten.write_text(rewrite(source.read_text()))
    argv = ["g++", "-std=c++20", "-O1", "-fPIC", "-shared", "-pthread", "-Wno-unknown-pragmas",
            "-I", str(SHIM_DIR / "include"), "-include", str(SHIM_DIR / "cuda_cpu_shim.h")]
    for folder in include_dirs:
        argv += ["-I", str(folder)]
    argv += ["-o", str(output), str(rewritten)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"shim build of {source.name} failed:\n{proc.stderr[-4000:]}")
    return output
