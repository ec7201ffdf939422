"""The runner children start while the submission compiles (judge/pipeline.py, docs/rules.md "What
happens to a submission"): the submission's library is loaded only after its build and checks, and
a build that fails leaves no child running; the private cases' child, started with the others, gets
its hello only once the public child has ended."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge import builds
from judge.backends import Backend, CaseSet
from judge.engine import JudgeRequest, judge_submission
from judge.host_config import HostConfig
from judge.limits import CPU_LIMITS
from judge.problem import load_problem
from judge.runner.session import RunnerSession
from judge.submission import read_sources
from judge.verdict import Verdict
from tests.judge.conftest import ADD_MUL_RELU_CPU_BASELINE, least_timing


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> tuple[list[tuple[str, str]], list[RunnerSession]]:
    """Every child start and hello (by the library role it loads) and every build, in order."""
    seen: list[tuple[str, str]] = []
    sessions: list[RunnerSession] = []
    start, hello, leave, build = RunnerSession.start, RunnerSession.say_hello, RunnerSession.__exit__, builds._build

    def started(self: RunnerSession) -> None:
        sessions.append(self)
        seen.append(("start", self.spec.workdir.name))
        start(self)

    def said_hello(self: RunnerSession) -> None:
        seen.append(("hello", self.spec.workdir.name))
        hello(self)

    def ended(self: RunnerSession, *exc: object) -> None:
        if self._proc is not None and not self._closed:
            seen.append(("exit", self.spec.workdir.name))
        leave(self, *exc)

    def built(toolchain, sources, request, host, sandbox, folder):  # type: ignore[no-untyped-def]
        result = build(toolchain, sources, request, host, sandbox, folder)
        seen.append(("built", folder.name))
        return result

    monkeypatch.setattr(RunnerSession, "start", started)
    monkeypatch.setattr(RunnerSession, "say_hello", said_hello)
    monkeypatch.setattr(RunnerSession, "__exit__", ended)
    monkeypatch.setattr(builds, "_build", built)
    return seen, sessions


def _judge(tmp_path: Path, source: Path) -> object:
    request = JudgeRequest(problem=load_problem("add_mul_relu"), backend=Backend.CPU,
                           sources=read_sources([source], CPU_LIMITS),
                           case_sets=(CaseSet.TESTS, CaseSet.BENCHMARKS, CaseSet.PRIVATE))
    host = HostConfig(work_root=tmp_path / "work", limits=least_timing(CPU_LIMITS), sandbox_mode="off",
                      cache_dir=tmp_path / "cache")
    return judge_submission(request, host=host)


def test_children_start_before_the_submission_compiles_and_load_it_after(
        tmp_path: Path, events: tuple[list[tuple[str, str]], list[RunnerSession]],
        no_forged_timer_check: None) -> None:
    seen, sessions = events
    result = _judge(tmp_path, ADD_MUL_RELU_CPU_BASELINE)
    assert result.verdict is Verdict.AC, result.message  # type: ignore[attr-defined]
    compiled = seen.index(("built", "build"))
    assert seen.index(("start", "baseline-run")) < compiled
    assert seen.index(("hello", "baseline-run")) < compiled  # it loads only the baseline
    assert seen.index(("start", "run")) < compiled
    assert seen.index(("hello", "run")) > compiled  # the submission's code waits for its build
    # The private cases' child: started with the others, its hello only once the public child has ended.
    assert seen.index(("start", "private-run")) < compiled
    assert seen.index(("hello", "private-run")) > seen.index(("exit", "run"))
    assert len(sessions) == 3 and all(s._closed for s in sessions)


def test_a_failed_build_leaves_no_child_running(
        tmp_path: Path, events: tuple[list[tuple[str, str]], list[RunnerSession]]) -> None:
    seen, sessions = events
    broken = tmp_path / "broken.cpp"
    broken.write_text('#include "add_mul_relu.h"\nint kernel_run(const KernelArgs* a) { return missing; }\n')
    result = _judge(tmp_path, broken)
    assert result.verdict is Verdict.CE  # type: ignore[attr-defined]
    assert ("start", "run") in seen and ("start", "private-run") in seen
    assert not [e for e in seen if e[0] == "hello" and e[1] != "baseline-run"]
    assert sessions and all(s._closed and s._proc is not None and s._proc.poll() is not None for s in sessions)
