"""add_mul_relu: generator, oracle and the 1-ulp pass rule."""

from __future__ import annotations

import pytest
import torch

from judge.backends import CaseSet
from judge.problem import Case

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


@pytest.fixture(scope="module")
def amr(amr_problem):
    return amr_problem.module


def _case(dtype, n=1001):
    return Case(name="adhoc", case_set=CaseSet.TESTS, dtype=dtype, params={"n": n}, seed=0)


def _exact(x, dtype):
    return ((x.double() + 1) * 2).clamp_min(0).to(DTYPES[dtype])


def _next_up(t, dtype):
    # One ulp up, in T: step the bit pattern of a positive value.
    bits = {"float32": torch.int32, "float16": torch.int16, "bfloat16": torch.int16}[dtype]
    return (t.view(bits) + 1).view(DTYPES[dtype])


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_exact_and_one_ulp_pass_two_ulps_fail(amr, dtype):
    case = _case(dtype)
    inputs = amr.make_inputs(case, seed=3)
    assert inputs["x"].dtype == DTYPES[dtype] and inputs["x"].shape == (1001,)
    truth = amr.oracle(case, inputs)
    exact = _exact(inputs["x"], dtype)
    assert (exact == 0).sum() > 100  # the relu matters
    assert amr.check(case, {"y": exact}, truth, None)["y"].passed
    i = int(torch.argmax(exact.float()))
    one_up = exact.clone()
    one_up[i] = _next_up(exact[i : i + 1], dtype)[0]
    assert amr.check(case, {"y": one_up}, truth, None)["y"].passed
    two_up = one_up.clone()
    two_up[i] = _next_up(one_up[i : i + 1], dtype)[0]
    result = amr.check(case, {"y": two_up}, truth, None)["y"]
    assert not result.passed
    assert result.reason.startswith("y: 1 element off by more than 1 ulp")
    assert f"index {i}" in result.reason


def test_zero_outputs_must_be_exact_zeros(amr):
    case = _case("float16")
    inputs = {"x": torch.tensor([-3.0, -1.0], dtype=torch.float16)}
    truth = amr.oracle(case, inputs)
    assert amr.check(case, {"y": torch.zeros(2, dtype=torch.float16)}, truth, None)["y"].passed
    wrong = torch.tensor([0.0, 1e-3], dtype=torch.float16)
    assert not amr.check(case, {"y": wrong}, truth, None)["y"].passed


def test_nan_and_untouched_outputs_fail(amr):
    case = _case("bfloat16", n=64)
    inputs = amr.make_inputs(case, seed=1)
    truth = amr.oracle(case, inputs)
    y = _exact(inputs["x"], "bfloat16")
    y[7] = float("nan")
    result = amr.check(case, {"y": y}, truth, None)["y"]
    assert not result.passed and result.reason.startswith("y: 1 NaN value (the first at element 7 of 64); ")
    untouched = torch.full((64,), float("nan"), dtype=torch.bfloat16)
    reason = amr.check(case, {"y": untouched}, truth, None)["y"].reason
    assert "64 NaN values (the first at element 0 of 64)" in reason and "fills every output with NaN" in reason


def test_work_and_specs(amr):
    case = _case("float16", n=10)
    inputs = amr.make_inputs(case, seed=1)
    assert amr.output_specs(case, inputs) == {"y": ((10,), torch.float16)}
    assert amr.work(case, inputs) == (30.0, 40.0)
    assert amr.reference(case, inputs) is None


def test_deterministic_in_seed(amr):
    case = _case("float32", n=257)
    assert torch.equal(amr.make_inputs(case, 5)["x"], amr.make_inputs(case, 5)["x"])
    assert not torch.equal(amr.make_inputs(case, 5)["x"], amr.make_inputs(case, 6)["x"])


def test_the_worst_element_is_found_across_chunks(amr, monkeypatch):
    """The check walks the output in chunks: the count is over all of them, the worst (the first of
    equals) is named wherever it lies, and the allowed error is the largest bound of any chunk."""
    case = _case("float32")
    inputs = amr.make_inputs(case, seed=5)
    truth = amr.oracle(case, inputs)
    exact = _exact(inputs["x"], "float32")
    wrong = exact.clone()
    positive = [int(i) for i in torch.nonzero(exact > 0.5).flatten()]
    small, worst, tie = positive[3], positive[-40], positive[-2]  # a mild error, then two equal worst ones
    for index, ulps in ((small, 3), (worst, 9), (tie, 9)):
        wrong[index] = exact[index] + ulps * amr.ulp(exact[index : index + 1], "float32")[0]
    whole = amr.check(case, {"y": wrong}, truth, None)["y"]
    import judge.checking

    monkeypatch.setattr(judge.checking, "_CPU_CHUNK", 64)
    chunked = amr.check(case, {"y": wrong}, truth, None)["y"]
    assert chunked.reason.startswith("y: 3 elements off by more than 1 ulp")
    assert f"worst at index {worst}:" in chunked.reason
    assert chunked.reason == whole.reason and chunked.allowed_abs_err == whole.allowed_abs_err > 0
