"""The run as a whole has a wall-clock limit; the runner's CPU limit scales with its threads."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from judge import call_check, run
from judge.backends import Backend, CaseSet
from judge.child_limits import RUNNER_START_CPU_S, runner_cpu_seconds, runner_process_limit
from judge.engine import JudgeRequest, judge_submission
from judge.host_config import HostConfig
from judge.limits import CPU_LIMITS
from judge.problem import load_problem
from judge.toolchains.base import SourceFile
from judge.verdict import Verdict

REPO = Path(__file__).resolve().parents[2]
AMR_BASELINE = REPO / "reference_kernels" / "add_mul_relu" / "cpu" / "baseline.cpp"


class SteppedClock:
    """The run's clock, moved on by hand: each checked case "takes" `case_s` seconds.

    A real slow kernel made the outcome hang on the host's speed and load (an idle fast core fits
    more calls in the limit, a loaded one fewer); this clock makes it the same everywhere.
    """

    def __init__(self, case_s: float) -> None:
        self.now, self.case_s = 1000.0, case_s

    def monotonic(self) -> float:
        return self.now


def test_cpu_limit_counts_every_thread() -> None:
    assert runner_cpu_seconds(600.0, 64) == 600.0 * 64 + RUNNER_START_CPU_S  # 64 threads keep 64 CPUs busy
    assert runner_cpu_seconds(600.0, 0) == 600.0 + RUNNER_START_CPU_S


def test_process_limit_leaves_room_for_both_childrens_pools_and_the_oracles() -> None:
    # A 192-core host: the worker's oracle pool and two children's OpenMP pools, plus headroom.
    assert runner_process_limit(256, 192) >= 3 * 192 + 64
    assert runner_process_limit(256, 0) > 256


@pytest.mark.slow
def test_a_run_over_its_time_limit_is_tle_and_stops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = SteppedClock(case_s=2.0)  # a 3 s limit: the first two cases run, the third does not
    real_check_case = run._check_case

    def slow_check_case(*args, **kwargs):  # type: ignore[no-untyped-def]
        result = real_check_case(*args, **kwargs)
        clock.now += clock.case_s
        return result

    fake_time = SimpleNamespace(monotonic=clock.monotonic)
    monkeypatch.setattr(run, "time", fake_time)
    monkeypatch.setattr(call_check, "time", fake_time)  # the oracle's seconds, left out of the run's: 0 here
    monkeypatch.setattr(run, "_check_case", slow_check_case)
    limits = dataclasses.replace(CPU_LIMITS, run_time_limit_s=3.0)
    problem = load_problem("add_mul_relu")
    judged = problem.cases_for(Backend.CPU, [CaseSet.TESTS])
    assert len(judged) > 3
    request = JudgeRequest(problem=problem, backend=Backend.CPU,
                           sources=[SourceFile("baseline.cpp", AMR_BASELINE.read_bytes())],
                           case_sets=(CaseSet.TESTS,), secret=b"test")
    host = HostConfig(work_root=tmp_path, limits=limits, cache_dir=tmp_path / "cache",
                      sandbox_mode=os.environ.get("OPJUDGE_TEST_SANDBOX", "auto"))
    result = judge_submission(request, host=host)
    assert result.verdict is Verdict.TLE, result.message
    assert "the run as a whole took 4 s" in result.message and "limit of 3 s" in result.message
    assert [c.verdict for c in result.cases] == [Verdict.AC, Verdict.AC, Verdict.TLE]  # the rest never ran
    assert result.cases[-1].name == judged[2].name


@pytest.mark.slow
def test_a_runner_that_dies_before_any_submission_code_is_ie(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A driver, runtime or sandbox failure at start is the judge's: IE, never RE on the team's first case."""
    monkeypatch.setattr("judge.runner.session.interpreter", lambda: "/bin/false")  # dies at once, status 1
    problem = load_problem("add_mul_relu")
    request = JudgeRequest(problem=problem, backend=Backend.CPU,
                           sources=[SourceFile("baseline.cpp", AMR_BASELINE.read_bytes())],
                           case_sets=(CaseSet.TESTS,), secret=b"test")
    host = HostConfig(work_root=tmp_path, limits=CPU_LIMITS, cache_dir=tmp_path / "cache", sandbox_mode="off")
    result = judge_submission(request, host=host)
    assert result.verdict is Verdict.IE, result.message
    assert "the runner did not start" in result.message and "exit status 1" in result.message
    assert not any(c.verdict is Verdict.RE for c in result.cases)
