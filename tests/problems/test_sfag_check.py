"""The pass rule of sparse_flash_attention_grad (spec: "Pass rule, for each output X")."""

from __future__ import annotations

import pytest
import torch

PARAMS = dict(B=1, S1=16, S2=48, N1=4, N2=1, D=32, Dr=16, K=4, block_size=4, sparse_mode=3)


def _setup(sfag, case_factory, dtype):
    case = case_factory(dtype=dtype, **PARAMS)
    inputs = sfag.make_inputs(case, seed=17)
    return case, sfag.oracle(case, inputs), sfag.reference(case, inputs)


def _as_kernel_output(truth, dtype):
    return {name: g.to(dtype) for name, g in truth.items()}


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_rounded_truth_passes(sfag, case_factory, dtype):
    case, truth, ref = _setup(sfag, case_factory, dtype)
    checks = sfag.check(case, _as_kernel_output(truth, sfag.DTYPES[dtype]), truth, ref)
    assert set(checks) == {"dq", "dq_rope", "dk", "dk_rope", "dv"}
    for name, c in checks.items():
        assert c.passed, (name, c.reason)
        assert c.reason == ""
        assert 0.99 <= c.within_mixed_tol <= 1.0
        assert c.max_abs_err <= c.allowed_abs_err


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_reference_passes_and_sets_the_bounds(sfag, case_factory, dtype):
    case, truth, ref = _setup(sfag, case_factory, dtype)
    checks = sfag.check(case, ref, truth, ref)
    atol = {"float16": 1e-3, "bfloat16": 8e-3}[dtype]
    for name, c in checks.items():
        assert c.passed, (name, c.reason)
        assert c.allowed_abs_err == pytest.approx(2 * c.max_abs_err + atol)
        assert c.allowed_mere == pytest.approx(2 * c.mere + 1e-6)
        assert c.mere > 0 and c.mare >= c.mere


def test_float32_bounds_follow_the_spec(sfag, case_factory):
    case, truth, _ = _setup(sfag, case_factory, "float32")
    checks = sfag.check(case, _as_kernel_output(truth, torch.float32), truth, None)
    for name, c in checks.items():
        assert c.allowed_abs_err == pytest.approx(2.0**-13 * max(1.0, float(truth[name].abs().max())))
        assert c.allowed_mere == 2.0**-13


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_perturbed_output_fails_naming_it(sfag, case_factory, dtype):
    case, truth, ref = _setup(sfag, case_factory, dtype)
    out = _as_kernel_output(truth, sfag.DTYPES[dtype])
    out["dk"] = out["dk"].clone()
    out["dk"].view(-1)[5] += 0.5 * float(truth["dk"].abs().max()) + 0.1
    checks = sfag.check(case, out, truth, ref)
    assert not checks["dk"].passed
    assert checks["dk"].reason.startswith("dk: max |X-G| = ")
    assert "exceeds" in checks["dk"].reason
    assert all(c.passed for name, c in checks.items() if name != "dk")


def test_small_float32_drift_fails_on_mere(sfag, case_factory):
    # Every element 2^-11 relative off: under the max-abs bound for small values, over MERE's 2^-13.
    case, truth, _ = _setup(sfag, case_factory, "float32")
    out = {name: (g * (1 + 2.0**-11)).float() for name, g in truth.items()}
    checks = sfag.check(case, out, truth, None)
    assert not checks["dv"].passed
    assert "MERE" in checks["dv"].reason


def test_nan_fails(sfag, case_factory):
    case, truth, ref = _setup(sfag, case_factory, "bfloat16")
    out = _as_kernel_output(truth, torch.bfloat16)
    out["dq_rope"] = out["dq_rope"].clone()
    out["dq_rope"].view(-1)[[0, 3, 7]] = float("nan")
    out["dv"] = out["dv"].clone()
    out["dv"].view(-1)[1] = float("inf")
    checks = sfag.check(case, out, truth, ref)
    assert not checks["dq_rope"].passed and "3 NaN values" in checks["dq_rope"].reason
    assert not checks["dv"].passed and "1 Inf value" in checks["dv"].reason
    # The finite elements still get real metrics (no NaN leaking into the report).
    assert checks["dq_rope"].max_abs_err == checks["dq_rope"].max_abs_err


def test_untouched_nan_filled_outputs_fail(sfag, case_factory):
    # The judge fills outputs with NaN before each call: a kernel that writes nothing fails.
    case, truth, ref = _setup(sfag, case_factory, "float16")
    out = {name: torch.full(g.shape, float("nan"), dtype=torch.float16) for name, g in truth.items()}
    checks = sfag.check(case, out, truth, ref)
    for name, c in checks.items():
        assert not c.passed
        assert c.reason.startswith(f"{name}: ") and "NaN values" in c.reason
        assert c.within_mixed_tol == 0.0


def test_no_rope_outputs_when_dr_is_zero(sfag, case_factory):
    case = case_factory(Dr=0)
    inputs = sfag.make_inputs(case, seed=1)
    assert set(sfag.output_specs(case, inputs)) == {"dq", "dk", "dv"}
    truth = sfag.oracle(case, inputs)
    assert set(sfag.check(case, _as_kernel_output(truth, torch.float32), truth, None)) == {"dq", "dk", "dv"}


def test_work_counts_visible_pairs(sfag, case_factory):
    # Dense causal, bs 1, K >= S2: P = N1 * S1 (S1 + 1) / 2.
    case = case_factory(S1=10, S2=10, N1=3, D=8, Dr=4, K=10, block_size=1, sparse_mode=3)
    inputs = sfag.make_inputs(case, seed=1)
    flops, nbytes = sfag.work(case, inputs)
    assert flops == 3 * 55 * (6 * 12 + 4 * 8)
    tensors = [t for t in inputs.values() if isinstance(t, torch.Tensor)]
    read = sum(t.numel() * t.element_size() for t in tensors)
    written = 4 * (10 * 3 * 12 + 10 * 1 * 12 + 10 * 1 * 8)  # dq|dq_rope, dk|dk_rope, dv in float32
    assert nbytes == read + written


def test_work_with_cut_short_blocks(sfag, case_factory):
    # Mode 0, S2 = 10, bs = 4: blocks hold 4, 4 and 2 keys; K = 3 sees all 10.
    case = case_factory(S1=2, S2=10, N1=1, D=8, Dr=0, K=3, block_size=4, sparse_mode=0)
    flops, _ = sfag.work(case, sfag.make_inputs(case, seed=1))
    assert flops == 2 * 10 * (6 * 8 + 4 * 8)


@pytest.mark.parametrize("flags", [(), ("contract_indices",), ("contract_indices", "ragged_topk")])
def test_work_counts_the_pairs_of_the_dense_mask(sfag, case_factory, dense, flags):
    # P from the dense mask (which reads each row up to its first -1): junk after it adds nothing.
    case = case_factory(flags=flags, B=2, S1=16, S2=13, N1=4, N2=2, D=8, Dr=4, K=5, block_size=3, sparse_mode=3)
    inputs = sfag.make_inputs(case, seed=4)
    pairs = int(dense.mask(case.params, inputs["sparse_indices"]).sum()) * 2  # G = 2 heads per KV head
    flops, _ = sfag.work(case, inputs)
    assert flops == pairs * (6 * 12 + 4 * 8) > 0


def test_the_float32_mere_floor_is_relative_to_the_outputs_scale(sfag, case_factory):
    """2^-14 * max(1, max|G|) (statement.md): elements far below an output's maximum, whose relative error is
    float32 rounding of much larger terms, no longer decide MERE; the max rule still holds them."""
    case, truth, _ = _setup(sfag, case_factory, "float32")
    scaled, outputs = {}, {}
    for name, g in truth.items():  # half the elements at 1000, half at 0.01: a wide dynamic range
        big = torch.arange(g.numel()).reshape(g.shape) % 2 == 0
        scaled[name] = torch.where(big, 1000.0, 0.01).to(torch.float64)
        outputs[name] = torch.where(big, 1000.0, 0.01 * (1 + 5e-2)).to(torch.float32)  # 5 % off, tiny in absolute
    checks = sfag.check(case, outputs, scaled, None)
    for name, c in checks.items():
        assert c.mere_floor == pytest.approx(2.0**-14 * max(1.0, float(scaled[name].abs().max())))
        assert c.passed, (name, c.reason)
    # With the absolute floor those elements would count: the same outputs fail its MERE.
    from judge.checking import error_stats

    failing = [name for name, g in scaled.items()
               if error_stats(outputs[name], g, floor=2.0**-14, rtol=2.0**-13, atol=2.0**-13).mere > 2.0**-13]
    assert failing, "the test's outputs no longer tell the two floors apart"


def test_the_reduced_precision_floors_stay_absolute(sfag, case_factory):
    for dtype, floor in (("float16", 2.0**-11), ("bfloat16", 2.0**-8)):
        case, truth, ref = _setup(sfag, case_factory, dtype)
        checks = sfag.check(case, _as_kernel_output(truth, sfag.DTYPES[dtype]), truth, ref)
        assert {c.mere_floor for c in checks.values()} == {floor}
