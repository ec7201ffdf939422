"""OpenMpGuard: every kernel call starts from the runner's own OpenMP settings."""

from __future__ import annotations

import ctypes

import pytest
import torch  # noqa: F401  (loads the libgomp the runner and the kernels share)

from judge.runner.child.openmp import OpenMpGuard


@pytest.fixture
def gomp() -> ctypes.CDLL:
    try:
        return ctypes.CDLL("libgomp.so.1")
    except OSError:
        pytest.skip("no libgomp in this process")


def test_what_a_kernel_leaves_behind_is_put_back(gomp: ctypes.CDLL) -> None:
    guard = OpenMpGuard.of_this_process()
    threads, limit, levels = gomp.omp_get_max_threads(), gomp.omp_get_thread_limit(), gomp.omp_get_max_active_levels()
    try:
        gomp.omp_set_num_threads(1)
        gomp.omp_set_max_active_levels(0)
        gomp.omp_set_dynamic(1)
        gomp.GOMP_teams(ctypes.c_uint(0), ctypes.c_uint(1))  # a thread limit of 1, as a host teams construct sets
        assert gomp.omp_get_thread_limit() == 1
        guard.reset()
        assert gomp.omp_get_max_threads() == threads and gomp.omp_get_thread_limit() == limit
        assert gomp.omp_get_max_active_levels() == levels and gomp.omp_get_dynamic() == 0
    finally:
        guard.reset()
    assert guard.level() == 0
