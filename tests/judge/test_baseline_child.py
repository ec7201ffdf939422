"""The baseline is timed in a runner child of its own: the submission's process never holds it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from judge.backends import Backend, CaseSet
from judge.engine import JudgeRequest, judge_submission
from judge.host_config import HostConfig
from judge.limits import CPU_LIMITS
from judge.problem import DEFAULT_REFERENCE_DIR, load_problem
from judge.runner.session import RunnerSession
from judge.toolchains.base import SourceFile
from judge.verdict import Verdict
from tests.judge.conftest import least_timing

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
    # The least timing: these tests are about which child runs what, not the figures.
    return HostConfig(work_root=tmp_path / "work", cache_dir=tmp_path / "cache", limits=least_timing(CPU_LIMITS),
                      sandbox_mode=os.environ.get("OPJUDGE_TEST_SANDBOX", "auto"))


def _request(reference_dir: Path = DEFAULT_REFERENCE_DIR) -> JudgeRequest:
    problem = load_problem("add_mul_relu", reference_dir=reference_dir)
    return JudgeRequest(problem=problem, backend=Backend.CPU,
                        sources=[SourceFile("kernel.cpp", BASELINE.read_bytes())],
                        case_sets=(CaseSet.TESTS, CaseSet.BENCHMARKS), secret=b"test")


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, int]]:
    """Events of every runner session, in order: (what, which library, child's pid)."""
    events: list[tuple[str, str, int]] = []

    def role(session: RunnerSession) -> str:
        return ",".join(sorted(session._hello.libraries))

    def pid(session: RunnerSession) -> int:
        return session._proc.pid if session._proc is not None else 0

    start, hello = RunnerSession.start, RunnerSession.say_hello
    ready, begin = RunnerSession.wait_ready, RunnerSession.begin

    def spied_start(self: RunnerSession) -> None:
        start(self)
        events.append(("launched", role(self), pid(self)))

    def spied_hello(self: RunnerSession) -> None:
        sent = self._hello_sent
        hello(self)
        if not sent:
            events.append(("hello", role(self), pid(self)))

    def spied_ready(self: RunnerSession) -> None:
        ready(self)
        events.append(("ready", role(self), pid(self)))

    def spied_begin(self: RunnerSession, lib: str, seed: int, **kwargs):  # type: ignore[no-untyped-def]
        events.append(("call", lib, pid(self)))  # every call, held (timed pairs) or not, begins here
        return begin(self, lib, seed, **kwargs)

    monkeypatch.setattr(RunnerSession, "start", spied_start)
    monkeypatch.setattr(RunnerSession, "say_hello", spied_hello)
    monkeypatch.setattr(RunnerSession, "wait_ready", spied_ready)
    monkeypatch.setattr(RunnerSession, "begin", spied_begin)
    return events


@pytest.mark.slow
def test_the_baseline_runs_in_a_child_the_submission_never_shares(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   no_forged_timer_check: None) -> None:
    events = _spy(monkeypatch)
    result = judge_submission(_request(), host=_host(tmp_path))
    assert result.verdict is Verdict.AC, result.message
    assert all(c.ratio for c in result.cases if c.case_set is CaseSet.BENCHMARKS)
    launched = [(lib, pid) for what, lib, pid in events if what == "launched"]
    assert [lib for lib, _ in launched] == ["baseline", "submission"]  # the trusted one first
    pids = dict(launched)
    assert pids["baseline"] != pids["submission"]  # both alive at once: two processes
    calls = [(lib, pid) for what, lib, pid in events if what == "call"]
    assert {pid for lib, pid in calls if lib == "submission"} == {pids["submission"]}
    assert {pid for lib, pid in calls if lib == "baseline"} == {pids["baseline"]}
    # The baseline's child was ready (its memory taken) before any submission code ran: the
    # submission's process may start beside it (CPU track), but its hello, which loads the
    # submission's library, waits for the baseline's "ready".
    submission_hello = events.index(("hello", "submission", pids["submission"]))
    assert ("ready", "baseline", pids["baseline"]) in events[:submission_hello]
    first_call = next(i for i, event in enumerate(events) if event[0] == "call")
    assert submission_hello < first_call
    # ...and on the CPU track it did start before the baseline was ready: the two imports overlap.
    assert events.index(("launched", "submission", pids["submission"])) < events.index(
        ("ready", "baseline", pids["baseline"]))


@pytest.mark.slow
def test_a_run_with_nothing_to_time_starts_no_baseline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events = _spy(monkeypatch)
    request = _request()
    request = JudgeRequest(problem=request.problem, backend=request.backend, sources=request.sources,
                           case_sets=(CaseSet.TESTS,), secret=request.secret)
    result = judge_submission(request, host=_host(tmp_path))
    assert result.verdict is Verdict.AC, result.message
    assert [lib for what, lib, _ in events if what == "launched"] == ["submission"]


@pytest.mark.slow
def test_a_baseline_that_dies_is_the_judges_failure_not_the_teams(tmp_path: Path) -> None:
    reference = tmp_path / "reference_kernels"
    shutil.copytree(DEFAULT_REFERENCE_DIR / "add_mul_relu", reference / "add_mul_relu")
    (reference / "add_mul_relu" / "cpu" / "baseline.cpp").write_bytes(CRASHING_BASELINE)
    result = judge_submission(_request(reference), host=_host(tmp_path))
    assert result.verdict is Verdict.IE, result.message
    assert "the baseline's runner failed to run a call" in result.message
    assert "not the submission's" in result.message
    assert all(c.passed for c in result.cases if c.case_set is CaseSet.TESTS)


@pytest.mark.slow
def test_a_baseline_child_that_cannot_start_is_an_internal_error(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import judge.runner.session as session_module

    launch = RunnerSession.launch

    def baseline_dies_at_once(self: RunnerSession) -> None:
        if "baseline" in self._hello.libraries:
            with monkeypatch.context() as patch:
                patch.setattr(session_module, "interpreter", lambda: "/bin/false")
                return launch(self)
        return launch(self)

    monkeypatch.setattr(RunnerSession, "launch", baseline_dies_at_once)
    result = judge_submission(_request(), host=_host(tmp_path))
    assert result.verdict is Verdict.IE, result.message
    assert "the baseline's runner failed to start" in result.message
    assert result.cases == []  # nothing of the submission ran
