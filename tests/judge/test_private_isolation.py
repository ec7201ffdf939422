"""Private cases stay private (docs/security.md, layer 5): nothing a team sees of a public case can carry a
private case's size, because the public cases are checked, timed and profiled in one child and the
private ones only afterwards, in a fresh child (judge/pipeline.py).

The attack is decoded as its author would: exploit_private_size_in_public_error writes the last
size no public case has into y[0] of public b01, so b01's max_abs_err would be that size less the
right y[0]. With one child for every case it read private p01's n (3000001) from a public WA."""

from __future__ import annotations

import dataclasses
import secrets
from pathlib import Path

from judge.backends import Backend, CaseSet
from judge.engine import JudgeRequest, judge_submission
from judge.host_config import HostConfig
from judge.limits import CPU_LIMITS
from judge.problem import load_problem
from judge.submission import read_sources
from judge.verdict import Verdict

KERNEL = Path(__file__).parents[1] / "submissions/add_mul_relu/cpu/exploit_private_size_in_public_error.cpp"


def test_a_kernel_that_remembers_private_sizes_has_no_public_figure_to_write_them_into(tmp_path: Path) -> None:
    problem = load_problem("add_mul_relu")
    private_sizes = {int(c.params["n"]) for c in problem.cases_for(Backend.CPU, [CaseSet.PRIVATE])}
    public_sizes = {int(c.params["n"]) for c in problem.cases_for(Backend.CPU, [CaseSet.TESTS, CaseSet.BENCHMARKS])}
    assert 3000001 in private_sizes - public_sizes  # what the kernel would leak
    limits = dataclasses.replace(CPU_LIMITS, call_time_limit_s=30.0, case_time_budget_s=0.3)
    request = JudgeRequest(problem=problem, backend=Backend.CPU, sources=read_sources([KERNEL], limits),
                           case_sets=(CaseSet.TESTS, CaseSet.BENCHMARKS, CaseSet.PRIVATE),
                           secret=secrets.token_bytes(16))
    host = HostConfig(work_root=tmp_path, limits=limits, sandbox_mode="auto")
    result = judge_submission(request, host=host)

    public = [c for c in result.cases if c.case_set is not CaseSet.PRIVATE]
    assert {c.name for c in public} >= {"b01_4m_f32"}
    for case in public:  # decode every figure a team sees, as the attack did
        for name, check in case.outputs.items():
            for value in (check.max_abs_err, check.mere, check.mare):
                leaked = [n for n in private_sizes - public_sizes if abs(value - n) < 16]
                assert not leaked, (case.name, name, value)
        assert str(3000001) not in case.message
    assert result.verdict is Verdict.AC, result.message  # the private child saw p01 but had no public case
    private = [c for c in result.cases if c.case_set is CaseSet.PRIVATE]
    assert private and all(c.passed and c.ratio for c in private)  # checked and timed, in their own child
