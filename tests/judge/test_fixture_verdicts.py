"""Every fixture kernel of the CPU track gets the verdict written beside it.

The hostile entries (exploit_*) run in tests/judge/test_exploit_corpus.py. A fixture whose .toml
names `wrong_only_with = "<flag>"` relies on something the contract does not promise and that only
cases with that flag break: it must fail only on such cases, and pass copies of them (same sizes,
judged in the same run) with the flag taken off, which shows the flag, not another bug, catches it.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from judge.backends import Backend, CaseSet
from judge.engine import JudgeRequest, judge_submission
from judge.host_config import HostConfig
from judge.limits import CPU_LIMITS, Limits
from judge.problem import Problem, load_problem
from judge.submission import read_sources
from tests.judge.fixtures import load_fixtures

FIXTURES = load_fixtures("cpu", exclude=("exploit_",))
# A generous call limit: the serial fixtures' largest test case takes a fraction of a second on
# an idle core, and must not turn TLE on a loaded one. The TLE fixtures ask for a short limit of
# their own (`call_time_limit_s` in their .toml), so they do not wait for this one.
TEST_LIMITS = dataclasses.replace(CPU_LIMITS, call_time_limit_s=30.0, case_time_budget_s=0.5)


FLAG_FIXTURES = [f for f in FIXTURES if f.expect.get("wrong_only_with")]


def judge_file(path: Path, problem: str | Problem, sets: tuple[str, ...], tmp_path: Path, cache: Path,
               limits: Limits = TEST_LIMITS):
    request = JudgeRequest(
        problem=load_problem(problem) if isinstance(problem, str) else problem, backend=Backend.CPU,
        sources=read_sources([path], limits), case_sets=tuple(CaseSet(s) for s in sets), secret=b"test",
    )
    host = HostConfig(work_root=tmp_path, limits=limits, cache_dir=cache,
                      sandbox_mode=os.environ.get("OPJUDGE_TEST_SANDBOX", "auto"))
    return judge_submission(request, host=host)


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


def test_corpus_is_not_empty():
    verdicts = {f.verdict for f in FIXTURES}
    assert {"AC", "WA", "CE", "RE", "TLE"} <= verdicts
    # At least four different ways of relying on what contract_indices rows break.
    assert len([f for f in FLAG_FIXTURES if f.expect["wrong_only_with"] == "contract_indices"]) >= 4


WITHOUT_FLAG = "__without_flag"


def _with_unflagged_copies(problem: Problem, flag: str) -> Problem:
    """The problem with, beside each CPU case carrying `flag`, a copy of it (same sizes; its own
    name, so its own content) without the flag, named <case>__without_flag: one judging then
    shows both sides."""
    cases = problem.cases[Backend.CPU]
    copies = tuple(dataclasses.replace(c, name=c.name + WITHOUT_FLAG, flags=tuple(f for f in c.flags if f != flag))
                   for c in cases if flag in c.flags)
    return dataclasses.replace(problem, cases={**problem.cases, Backend.CPU: cases + copies})


@pytest.mark.slow
@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f.id)
def test_fixture_gets_its_verdict(fixture, tmp_path, shared_cache):
    limits = TEST_LIMITS
    if "call_time_limit_s" in fixture.expect:
        limits = dataclasses.replace(limits, call_time_limit_s=float(fixture.expect["call_time_limit_s"]))
    flag = fixture.expect.get("wrong_only_with")
    problem = load_problem(fixture.problem)
    if flag:
        problem = _with_unflagged_copies(problem, flag)
    result = judge_file(fixture.source, problem, fixture.case_sets, tmp_path, shared_cache, limits)
    assert result.verdict.value == fixture.verdict, result.message
    for text in fixture.message_contains:
        assert text in result.message + result.compile_log, f"{text!r} not in {result.message!r}"
    if fixture.verdict == "AC":
        assert all(c.passed for c in result.cases) and result.cases
    if fixture.verdict == "WA":
        assert any(not c.passed and c.name in result.message for c in result.cases)
    if flag:
        flagged = {c.name for c in problem.cases_for(Backend.CPU) if flag in c.flags}
        copies = {c.name: c.passed for c in result.cases if c.name.endswith(WITHOUT_FLAG)}
        assert {c.name for c in result.cases if not c.passed} <= flagged, result.message  # wrong only there
        assert copies and all(copies.values()), copies  # and right on them without the flag
