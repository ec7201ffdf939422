"""The baseline is timed in a runner child of its own: the submission's process never holds it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from judge.backends import Backend, CaseSet
from judge.engine import JudgeRequest, judge_submission
from judge.host import HostConfig
from judge.problem import DEFAULT_REFERENCE_DIR, load_problem
from judge.runner.session import RunnerSession
from judge.toolchains.base import SourceFile
from judge.verdict import Verdict

BASELINE = DEFAULT_REFERENCE_DIR / "add_mul_relu" / "cpu" / "baseline.cpp"

# Builds and links like the baseline, and crashes on every call.
CRASHING_BASELINE = b"""
#include "add_mul_relu.h"
extern "C" int kernel_run(const kernel_args *a) {
    __builtin_trap();
    return a->n < 0;
}
"""


def _host(tmp_path: Path) -> HostConfig:
    return HostConfig(work_root=tmp_path / "work", cache_dir=tmp_path / "cache",
                      sandbox_mode=os.environ.get("OPJUDGE_TEST_SANDBOX", "auto"))


def _request(reference_dir: Path = DEFAULT_REFERENCE_DIR) -> JudgeRequest:
    problem = load_problem("add_mul_relu", reference_dir=reference_dir)
    return JudgeRequest(problem=problem, backend=Backend.CPU,
                        sources=[SourceFile("kernel.cpp", BASELINE.read_bytes())],
                        case_sets=(CaseSet.TESTS, CaseSet.BENCHMARKS), secret=b"test")


@pytest.mark.slow
def test_the_baseline_runs_in_a_child_the_submission_never_shares(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[tuple[set[str], int]] = []
    enter = RunnerSession.__enter__

    def spy(self: RunnerSession) -> RunnerSession:
        entered = enter(self)
        assert self._proc is not None
        started.append((set(self._hello["libraries"]), self._proc.pid))
        return entered

    monkeypatch.setattr(RunnerSession, "__enter__", spy)
    result = judge_submission(_request(), host=_host(tmp_path))
    assert result.verdict is Verdict.AC, result.message
    assert [libraries for libraries, _ in started] == [{"submission"}, {"baseline"}]
    assert started[0][1] != started[1][1]  # both alive at once while timing: two processes
    assert all(c.ratio for c in result.cases if c.case_set is CaseSet.BENCHMARKS)


@pytest.mark.slow
def test_a_submission_that_fails_its_checks_never_starts_the_baseline(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[set[str]] = []
    enter = RunnerSession.__enter__

    def spy(self: RunnerSession) -> RunnerSession:
        started.append(set(self._hello["libraries"]))
        return enter(self)

    monkeypatch.setattr(RunnerSession, "__enter__", spy)
    wrong = BASELINE.read_bytes().replace(b"* 2.0f", b"* 3.0f")
    assert wrong != BASELINE.read_bytes()
    request = _request()
    request.sources[0] = SourceFile("kernel.cpp", wrong)
    result = judge_submission(request, host=_host(tmp_path))
    assert result.verdict is Verdict.WA, result.message
    assert started == [{"submission"}]


@pytest.mark.slow
def test_a_baseline_that_dies_is_the_judges_failure_not_the_teams(tmp_path: Path) -> None:
    reference = tmp_path / "reference_kernels"
    shutil.copytree(DEFAULT_REFERENCE_DIR / "add_mul_relu", reference / "add_mul_relu")
    (reference / "add_mul_relu" / "cpu" / "baseline.cpp").write_bytes(CRASHING_BASELINE)
    result = judge_submission(_request(reference), host=_host(tmp_path))
    assert result.verdict is Verdict.IE, result.message
    assert "the baseline's runner failed" in result.message
    assert all(c.passed for c in result.cases if c.case_set is CaseSet.TESTS)
