"""The run as a whole has a wall-clock limit; the runner's CPU limit scales with its threads."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from judge.backends import Backend, CaseSet
from judge.engine import JudgeRequest, judge_submission
from judge.host import HostConfig
from judge.limits import CPU_LIMITS
from judge.pipeline import RUNNER_START_CPU_S, runner_cpu_seconds, runner_process_limit
from judge.problem import load_problem
from judge.toolchains.base import SourceFile
from judge.verdict import Verdict

# Right on float32, but each call spins 8e9 times on one thread (about 2.5 s on an idle 3 GHz core,
# more under load): a slow kernel, not a hung one. Two calls pass the 3 s limit, so the run stops
# by the third case; with 2e9 an idle machine needed four and the test could not tell.
SLOW_KERNEL = b"""
#include <cmath>
#include <cstdint>
#include "add_mul_relu.h"
extern "C" int kernel_run(const kernel_args *a) {
    volatile uint64_t spin = 0;
    for (uint64_t i = 0; i < 8000000000ull; ++i) spin = spin + 1;
    if (a->dtype != KERNEL_F32) return 1;
    const float *x = static_cast<const float *>(a->x);
    float *y = static_cast<float *>(a->y);
    for (int64_t i = 0; i < a->n; ++i) y[i] = std::fmax((x[i] + 1.0f) * 2.0f, 0.0f);
    return 0;
}
"""


def test_cpu_limit_counts_every_thread() -> None:
    assert runner_cpu_seconds(600.0, 64) == 600.0 * 64 + RUNNER_START_CPU_S  # 64 threads keep 64 CPUs busy
    assert runner_cpu_seconds(600.0, 0) == 600.0 + RUNNER_START_CPU_S


def test_process_limit_leaves_room_for_both_childrens_pools_and_the_oracles() -> None:
    # A 192-core host: the worker's oracle pool and two children's OpenMP pools, plus headroom.
    assert runner_process_limit(256, 192) >= 3 * 192 + 64
    assert runner_process_limit(256, 0) > 256


@pytest.mark.slow
def test_a_run_over_its_time_limit_is_tle_and_stops(tmp_path: Path) -> None:
    limits = dataclasses.replace(CPU_LIMITS, run_time_limit_s=3.0, call_time_limit_s=60.0)
    problem = load_problem("add_mul_relu")
    request = JudgeRequest(problem=problem, backend=Backend.CPU, sources=[SourceFile("slow.cpp", SLOW_KERNEL)],
                           case_sets=(CaseSet.TESTS,), secret=b"test")
    host = HostConfig(work_root=tmp_path, limits=limits, cache_dir=tmp_path / "cache",
                      sandbox_mode=os.environ.get("OPJUDGE_TEST_SANDBOX", "auto"))
    result = judge_submission(request, host=host)
    assert result.verdict is Verdict.TLE, result.message
    assert "the run as a whole took" in result.message and "limit of 3 s" in result.message
    judged = problem.cases_for(Backend.CPU, [CaseSet.TESTS])
    assert len(result.cases) < len(judged)  # the cases after the limit were not run
    assert result.cases[-1].verdict is Verdict.TLE


@pytest.mark.slow
def test_a_runner_that_dies_before_any_submission_code_is_ie(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A driver, runtime or sandbox failure at start is the judge's: IE, never RE on the team's first case."""
    monkeypatch.setattr("judge.runner.session.interpreter", lambda: "/bin/false")  # dies at once, status 1
    problem = load_problem("add_mul_relu")
    source = (Path(__file__).resolve().parents[2] / "reference_kernels" / "add_mul_relu" / "cpu" / "baseline.cpp")
    request = JudgeRequest(problem=problem, backend=Backend.CPU,
                           sources=[SourceFile("baseline.cpp", source.read_bytes())],
                           case_sets=(CaseSet.TESTS,), secret=b"test")
    host = HostConfig(work_root=tmp_path, limits=CPU_LIMITS, cache_dir=tmp_path / "cache", sandbox_mode="off")
    result = judge_submission(request, host=host)
    assert result.verdict is Verdict.IE, result.message
    assert "the runner did not start" in result.message and "exit status 1" in result.message
    assert not any(c.verdict is Verdict.RE for c in result.cases)
