"""Kernel-only cost of bench/ranking_fidelity.py's extra-work copies, and the knob that gives a slowdown.

The copies redo a share of the baseline's (query row, key) steps, but a case also spends time on
work that does not scale with those steps (keys converted to float32, accumulators zeroed and
summed), so "p % more key steps" is not "p % slower": measured, +2.4 % more key steps made the
kernel about 1.4 % slower, and the share differs from case to case. This module times the
libraries themselves, in one process, interleaved, on one thread and by CPU time (a shared
host's other jobs then move the figures least), and picks the share of redone steps whose mean
slowdown over the cases is the one asked for.
"""

from __future__ import annotations

import ctypes
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from judge.abi import DTYPE_CODES, kernel_args_struct, pack_args
from judge.backends import Backend, CaseSet
from judge.problem import Case, load_problem
from judge.tracks.cpu.runtime import last_level_cache_bytes
from judge.tracks.cpu.toolchain import CXX_FLAGS


def flush_bytes() -> int:
    """Written between calls, as much as the judge flushes (twice the last-level cache): a fixed
    64 MiB left a host with a 260 MiB L3 warm, and the copies' figures came out out of order."""
    return max(2 * last_level_cache_bytes(), 16 << 20)


class _Library:
    def __init__(self, path: Path) -> None:
        self.handle = ctypes.CDLL(str(path))
        self.handle.kernel_run.argtypes = [ctypes.c_void_p]
        self.handle.kernel_run.restype = ctypes.c_int
        self.handle.kernel_workspace_bytes.argtypes = [ctypes.c_void_p]
        self.handle.kernel_workspace_bytes.restype = ctypes.c_int64


def build(source: Path, include_dir: Path) -> Path:
    """The judge's compiler flags (judge/tracks/cpu/toolchain.py), straight to a shared library
    (built once: a copy's source is named by its share of redone steps)."""
    library = source.with_suffix(".so")
    if library.exists() and library.stat().st_mtime >= source.stat().st_mtime:
        return library
    flags = [f for f in CXX_FLAGS if not f.startswith("-save-temps")]
    subprocess.run(["g++", *flags, "-shared", f"-I{include_dir}", str(source), "-o", str(library)], check=True)
    return library


class _Call:
    """One case's inputs and outputs, packed once; each library gets its own workspace."""

    def __init__(self, problem: Any, case: Case, seed: int) -> None:
        module = problem.module
        self.struct = kernel_args_struct(problem.header)
        self.inputs = module.make_inputs(case, seed)
        self.outputs = {n: torch.empty(shape, dtype=dtype) for n, (shape, dtype) in
                        module.output_specs(case, self.inputs).items()}
        pointers: dict[str, int | None] = {name: None for name, kind in self.struct._fields_
                                           if kind is ctypes.c_void_p}
        pointers.update({k: t.data_ptr() for k, t in self.inputs.items() if isinstance(t, torch.Tensor)})
        pointers.update({k: t.data_ptr() for k, t in self.outputs.items()})
        pointers.update(workspace=None, stream=None)
        self.scalars: dict[str, float | int] = dict(case.params)
        self.scalars.update({k: v for k, v in self.inputs.items() if isinstance(v, int | float)})
        self.scalars.update(dtype=DTYPE_CODES[case.dtype], workspace_bytes=0)
        self.pointers = pointers
        self.workspaces: dict[int, torch.Tensor] = {}

    def runner(self, library: _Library) -> Callable[[], int]:
        args = pack_args(self.struct, pointers=self.pointers, scalars=self.scalars)
        wanted = int(library.handle.kernel_workspace_bytes(ctypes.byref(args)))
        workspace = self.workspaces.setdefault(id(library), torch.empty(max(wanted, 1), dtype=torch.uint8))
        args.workspace, args.workspace_bytes = workspace.data_ptr(), wanted
        return lambda: int(library.handle.kernel_run(ctypes.byref(args)))


def kernel_slowdowns(sources: dict[str, Path], *, reference: str, rounds: int = 20, warmup: int = 3,
                     sets: tuple[CaseSet, ...] = (CaseSet.BENCHMARKS,)) -> dict[str, dict[str, float]]:
    """Per case, each library's least CPU time over `reference`'s, less 1 (0.02 = 2 % slower).

    The libraries are called in turn, reversed every round (A B B A), with the caches flushed
    before each call, on one OpenMP thread. The least time, not the median: on a shared host the
    other jobs only ever add to a call's CPU time (caches and memory bandwidth they take)."""
    problem = load_problem("sparse_flash_attention_grad")
    libraries = {name: _Library(build(path, problem.header.parent)) for name, path in sources.items()}
    previous = torch.get_num_threads()
    torch.set_num_threads(1)  # torch's libgomp is the kernels' too: one OpenMP thread for them
    flush = torch.zeros(flush_bytes(), dtype=torch.uint8)
    found: dict[str, dict[str, float]] = {name: {} for name in sources}
    try:
        for case in problem.cases_for(Backend.CPU, list(sets)):
            call = _Call(problem, case, seed=4242)
            runners = {name: call.runner(lib) for name, lib in libraries.items()}
            times: dict[str, list[int]] = {name: [] for name in runners}
            order = list(runners)
            for index in range(warmup + rounds):
                for name in order if index % 2 == 0 else order[::-1]:
                    flush.add_(1)
                    started = time.process_time_ns()
                    if runners[name]() != 0:
                        raise SystemExit(f"{name} failed on {case.name}")
                    if index >= warmup:
                        times[name].append(time.process_time_ns() - started)
            base = min(times[reference])
            for name in runners:
                found[name][case.name] = min(times[name]) / base - 1
    finally:
        torch.set_num_threads(previous)
    return found


def mean_slowdown(per_case: dict[str, float]) -> float:
    return statistics.fmean(per_case.values()) if per_case else 0.0


def permille_for(target: float, fast_permille: int, probes: dict[int, float]) -> int:
    """The share of redone steps (per mille) whose mean slowdown over `fast_permille`'s is `target`,
    by a line through the origin fitted to the probes' (permille - fast, slowdown)."""
    points = [(p - fast_permille, s) for p, s in probes.items() if p != fast_permille]
    slope = sum(x * y for x, y in points) / sum(x * x for x, _ in points)
    if slope <= 0:
        raise SystemExit(f"the extra work made the kernel no slower ({probes}): the bench is broken")
    return fast_permille + max(1, round(target / slope))
