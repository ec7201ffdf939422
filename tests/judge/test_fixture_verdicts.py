"""Every fixture kernel of the CPU track gets the verdict written beside it.

The hostile entries (exploit_*) run in tests/judge/test_exploit_corpus.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from judge.backends import Backend, CaseSet
from judge.engine import JudgeRequest, judge_submission
from judge.host import HostConfig
from judge.limits import CPU_LIMITS
from judge.problem import load_problem
from judge.submission import read_sources
from tests.judge.fixtures import load_fixtures

FIXTURES = load_fixtures("cpu", exclude=("exploit_",))
TEST_LIMITS = CPU_LIMITS.__class__(**{**CPU_LIMITS.__dict__, "call_time_limit_s": 4.0, "case_time_budget_s": 0.5})


def judge_file(path: Path, problem: str, sets: tuple[str, ...], tmp_path: Path, cache: Path):
    request = JudgeRequest(
        problem=load_problem(problem), backend=Backend.CPU,
        sources=read_sources([path], TEST_LIMITS), case_sets=tuple(CaseSet(s) for s in sets), secret=b"test",
    )
    host = HostConfig(work_root=tmp_path, limits=TEST_LIMITS, cache_dir=cache,
                      sandbox_mode=os.environ.get("OPJUDGE_TEST_SANDBOX", "auto"))
    return judge_submission(request, host=host)


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


def test_corpus_is_not_empty():
    verdicts = {f.verdict for f in FIXTURES}
    assert {"AC", "WA", "CE", "RE", "TLE"} <= verdicts


@pytest.mark.slow
@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f.id)
def test_fixture_gets_its_verdict(fixture, tmp_path, shared_cache):
    result = judge_file(fixture.source, fixture.problem, fixture.case_sets, tmp_path, shared_cache)
    assert result.verdict.value == fixture.verdict, result.message
    for text in fixture.message_contains:
        assert text in result.message + result.compile_log, f"{text!r} not in {result.message!r}"
    if fixture.verdict == "AC":
        assert all(c.passed for c in result.cases) and result.cases
    if fixture.verdict == "WA":
        assert any(not c.passed and c.name in result.message for c in result.cases)
