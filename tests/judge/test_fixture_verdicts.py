"""Every fixture kernel of the CPU track gets the verdict written beside it.

The hostile entries (exploit_*) run in tests/judge/test_exploit_corpus.py. A fixture whose .toml
names `wrong_only_with = "<flag>"` relies on something the contract does not promise and that only
cases with that flag break: it must fail only on such cases, and get AC on the very same cases
(same sizes and seeds) with the flag taken off, which shows the flag, not another bug, catches it.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from judge.backends import Backend, CaseSet
from judge.engine import JudgeRequest, judge_submission
from judge.host import HostConfig
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
    # Issue 15: at least four different ways of relying on what contract_indices rows break.
    assert len([f for f in FLAG_FIXTURES if f.expect["wrong_only_with"] == "contract_indices"]) >= 4


def _flagged_cases_without(problem: Problem, flag: str, sets: tuple[str, ...]) -> Problem:
    """The problem with only its CPU cases of `sets` that carry `flag`, the flag taken off."""
    cases = tuple(dataclasses.replace(c, flags=tuple(f for f in c.flags if f != flag))
                  for c in problem.cases_for(Backend.CPU, [CaseSet(s) for s in sets]) if flag in c.flags)
    assert cases, f"no {flag} case in {sets}"
    return dataclasses.replace(problem, cases={**problem.cases, Backend.CPU: cases})


@pytest.mark.slow
@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f.id)
def test_fixture_gets_its_verdict(fixture, tmp_path, shared_cache):
    limits = TEST_LIMITS
    if "call_time_limit_s" in fixture.expect:
        limits = dataclasses.replace(limits, call_time_limit_s=float(fixture.expect["call_time_limit_s"]))
    result = judge_file(fixture.source, fixture.problem, fixture.case_sets, tmp_path, shared_cache, limits)
    assert result.verdict.value == fixture.verdict, result.message
    for text in fixture.message_contains:
        assert text in result.message + result.compile_log, f"{text!r} not in {result.message!r}"
    if fixture.verdict == "AC":
        assert all(c.passed for c in result.cases) and result.cases
    if fixture.verdict == "WA":
        assert any(not c.passed and c.name in result.message for c in result.cases)
    if flag := fixture.expect.get("wrong_only_with"):
        flagged = {c.name for c in load_problem(fixture.problem).cases_for(Backend.CPU) if flag in c.flags}
        assert {c.name for c in result.cases if not c.passed} <= flagged, result.message


@pytest.mark.slow
@pytest.mark.parametrize("fixture", FLAG_FIXTURES, ids=lambda f: f.id)
def test_flag_fixture_is_right_without_the_flag(fixture, tmp_path, shared_cache):
    flag = fixture.expect["wrong_only_with"]
    problem = _flagged_cases_without(load_problem(fixture.problem), flag, fixture.case_sets)
    result = judge_file(fixture.source, problem, fixture.case_sets, tmp_path, shared_cache)
    assert result.verdict.value == "AC", result.message
    assert result.cases and all(c.passed for c in result.cases)
