"""OracleChecker: regenerates the call's inputs, runs the oracle with its thread count, applies the rule."""

from __future__ import annotations

import pytest
import torch

from judge.backends import Backend
from judge.checker import OracleChecker
from judge.fingerprint import fingerprint
from judge.problem import load_problem, make_inputs
from judge.runner.session import CallOutcome
from judge.verdict import Verdict


@pytest.mark.parametrize("threads", [1, 2])
def test_the_oracle_runs_with_the_checkers_threads(threads: int, monkeypatch: pytest.MonkeyPatch) -> None:
    problem = load_problem("add_mul_relu")
    case = next(c for c in problem.cases_for(Backend.CPU) if c.dtype == "float32")
    seen: list[int] = []
    real_oracle = problem.module.oracle

    def oracle(case, inputs):  # type: ignore[no-untyped-def]
        seen.append(torch.get_num_threads())
        return real_oracle(case, inputs)

    monkeypatch.setattr(problem.module, "oracle", oracle)
    before = torch.get_num_threads()
    checker = OracleChecker(problem, oracle_threads=threads)
    inputs = make_inputs(problem.module, case, 7, "cpu")
    digests = {k: fingerprint(v) for k, v in inputs.items() if isinstance(v, torch.Tensor)}
    outcome = CallOutcome(rc=0, elapsed_ns=1, digest_before=digests, digest_after=digests, new_threads=0,
                          late_writes=[])
    truth = real_oracle(case, inputs)
    right = {"y": truth["y"].to(torch.float32)}
    assert checker.check(case, 7, outcome, right, cacheable=False).verdict is Verdict.AC
    assert seen == [threads] and torch.get_num_threads() == before  # restored afterwards
    wrong = {"y": right["y"] + 1.0}
    assert checker.check(case, 7, outcome, wrong, cacheable=False).verdict is Verdict.WA
    tampered = CallOutcome(rc=0, elapsed_ns=1, digest_before={"x": "forged"}, digest_after={}, new_threads=0,
                           late_writes=[])
    ie = checker.check(case, 7, tampered, right, cacheable=False)
    assert ie.verdict is Verdict.IE and "inputs x differ" in ie.message
    # After a kernel_run in the same child, on CPU-made inputs, only the kernel can have parted them.
    sv = checker.check(case, 7, tampered, right, cacheable=False, after_kernel=True)
    assert sv.verdict is Verdict.SV and "after the kernel had run" in sv.message
    # Device generation is unverified here: a mismatch there stays the judge's failure.
    on_device = OracleChecker(problem, oracle_threads=threads, generation_device="cuda")
    on_device._last = ((case.name, case.case_set, 7), inputs)  # the inputs as made (no GPU here)
    assert on_device.check(case, 7, tampered, right, cacheable=False, after_kernel=True).verdict is Verdict.IE
