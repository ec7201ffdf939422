"""The CPU track binds the runner's OpenMP threads one to a core (judge/tracks/cpu/__init__.py).

With the track's environment, a real process's OpenMP pool (torch's libgomp, which kernels share
in the runner) puts each thread on one CPU of its own; without it, each may run anywhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from judge.host_config import HostConfig
from judge.tracks.cpu import RUNNER_OPENMP_ENV, TRACK

_PROBE = """
import json, os, torch
torch.set_num_threads(2)
torch.ones(1 << 22).add_(1)  # a parallel region: the pool exists from here on
print(json.dumps({tid: sorted(os.sched_getaffinity(int(tid))) for tid in os.listdir("/proc/self/task")}))
"""


def _thread_masks(extra_env: dict[str, str]) -> dict[str, frozenset[int]]:
    """Each thread's CPUs in a fresh process with torch's OpenMP pool running."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "GOMP_"))}
    env.update(OMP_NUM_THREADS="2", **extra_env)
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, timeout=120,
                         check=True)
    return {tid: frozenset(cpus) for tid, cpus in json.loads(out.stdout).items()}


def test_the_cpu_tracks_runner_environment_binds_openmp():
    assert TRACK.runner_env(HostConfig(work_root=Path("/tmp"))) == RUNNER_OPENMP_ENV


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to tell bound threads apart")
def test_each_openmp_thread_gets_a_core_of_its_own():
    everywhere = frozenset(os.sched_getaffinity(0))
    bound = _thread_masks(RUNNER_OPENMP_ENV)
    narrowed = [cpus for cpus in bound.values() if cpus < everywhere]  # a core each (its SMT siblings too)
    assert len(narrowed) >= 2, bound  # the main thread and a worker at least
    assert len(set(narrowed)) >= 2, bound  # on different cores
    free = _thread_masks({})
    assert all(cpus == everywhere for cpus in free.values()), free  # unbound: every thread anywhere
