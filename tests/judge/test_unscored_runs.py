"""A test run has no score anywhere, passed or failed (docs/rules.md, "Run modes"): only timed runs are scored,
and a failed timed run scores 0."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.backends import Backend
from judge.engine import JudgeRequest, judge_submission
from judge.host_config import HostConfig
from judge.limits import CPU_LIMITS
from judge.modes import RunMode
from judge.problem import load_problem
from judge.submission import read_sources
from judge.verdict import Verdict

FAILING = Path(__file__).parents[1] / "submissions/add_mul_relu/cpu/re_abort.cpp"


@pytest.mark.parametrize(("mode", "score"), [(RunMode.TEST, None), (RunMode.BENCHMARK, 0.0)])
def test_a_failed_run_scores_0_only_when_it_was_timed(tmp_path: Path, mode: RunMode, score: float | None) -> None:
    request = JudgeRequest(problem=load_problem("add_mul_relu"), backend=Backend.CPU,
                           sources=read_sources([FAILING], CPU_LIMITS), mode=mode)
    result = judge_submission(request, host=HostConfig(work_root=tmp_path, limits=CPU_LIMITS, sandbox_mode="auto"))
    assert result.verdict is Verdict.RE
    assert result.score == score
