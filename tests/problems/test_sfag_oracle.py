"""The chunked oracle, reference and forward statistics against plain dense masked attention."""

from __future__ import annotations

import pytest
import torch

# Small cases that between them hit every branch of the chunked code: both modes, S1 < S2,
# S1 = S2 and S1 > S2 (rows that see nothing), bs 1 and > 1 with a cut-short last block,
# K above and below nblk, Dr 0, N2 = 2, B > 1, ragged lists, a custom scale, contract_indices rows
# (random order, junk after the first -1) and value_is_key.
CASES = [
    dict(B=2, S1=6, S2=13, N1=4, N2=2, D=8, Dr=4, K=3, block_size=4, sparse_mode=0),
    dict(B=1, S1=12, S2=12, N1=2, N2=1, D=16, Dr=0, K=12, block_size=1, sparse_mode=3),
    dict(B=1, S1=14, S2=9, N1=3, N2=1, D=8, Dr=8, K=2, block_size=2, sparse_mode=3),
    dict(B=2, S1=9, S2=30, N1=2, N2=2, D=8, Dr=4, K=5, block_size=3, sparse_mode=3, scale=0.3, ragged=True),
    dict(B=2, S1=10, S2=21, N1=2, N2=1, D=8, Dr=4, K=8, block_size=4, sparse_mode=3, contract=True),
    dict(B=1, S1=14, S2=9, N1=2, N2=2, D=8, Dr=0, K=6, block_size=2, sparse_mode=3, contract=True, ragged=True),
    dict(B=1, S1=6, S2=6, N1=2, N2=1, D=8, Dr=4, K=6, block_size=1, sparse_mode=3, value_is_key=True),
]
IDS = ["mode0-n2x2", "causal-dense-bs1", "s1>s2", "ragged-scale", "contract", "contract-ragged-s1>s2", "v=k"]


@pytest.fixture(params=["gathered", "dense"])
def path(request, sfag, monkeypatch):
    """Each test on both computations of the forward and backward: gathering each row's key blocks,
    and masked products with every key (judged cases take the cheaper, `_dense_is_cheaper`)."""
    monkeypatch.setattr(sfag.attention, "GATHER_COST_IN_MACS", -(10**9) if request.param == "gathered" else 10**9)
    return request.param


def _case(case_factory, params, dtype="float32"):
    params = dict(params)
    names = {"ragged": "ragged_topk", "contract": "contract_indices", "value_is_key": "value_is_key"}
    flags = tuple(flag for key, flag in names.items() if params.pop(key, False))
    return case_factory(dtype=dtype, flags=flags, **params)


@pytest.mark.parametrize("params", CASES, ids=IDS)
def test_oracle_matches_dense_autograd(sfag, case_factory, dense, params, path):
    case = _case(case_factory, params)
    inputs = sfag.make_inputs(case, seed=11)
    grads, (out, m, total) = dense.autograd(case, inputs)
    # Feed the oracle the dense float64 forward's own statistics: then both compute the same real
    # numbers, and only float64 rounding separates them.
    exact = dict(inputs, out=out, softmax_max=m, softmax_sum=total)
    got = sfag.oracle(case, exact)
    assert set(got) == set(grads)
    for name, want in grads.items():
        assert got[name].dtype == torch.float64
        torch.testing.assert_close(got[name], want, rtol=1e-10, atol=1e-12, msg=name)


@pytest.mark.parametrize("params", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_forward_statistics_match_dense(sfag, case_factory, dense, params, dtype, path):
    case = _case(case_factory, params, dtype)
    inputs = sfag.make_inputs(case, seed=5)
    _, (out, m, total) = dense.autograd(case, inputs)
    torch.testing.assert_close(inputs["softmax_max"].double(), m, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(inputs["softmax_sum"].double(), total, rtol=1e-5, atol=1e-6)
    rtol = 1e-5 if dtype == "float32" else 2.0**-8  # out is rounded to T
    torch.testing.assert_close(inputs["out"].double(), out, rtol=rtol, atol=1e-5)


@pytest.mark.parametrize("params", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_reference_follows_the_spec_recipe(sfag, case_factory, dense, params, dtype, path):
    case = _case(case_factory, params, dtype)
    inputs = sfag.make_inputs(case, seed=3)
    got = sfag.reference(case, inputs)
    want = dense.reference(case, inputs, got["dq"].dtype)
    truth = sfag.oracle(case, inputs)
    ulp = 2.0**-7 if dtype == "bfloat16" else 2.0**-10
    for name, r in want.items():
        assert got[name].dtype == r.dtype
        # Only the float32 summation order differs: at most a rounding step of T apart.
        torch.testing.assert_close(got[name].double(), r.double(), rtol=ulp, atol=1e-6, msg=name)
        # And R is close to G: the dtype's rounding of P and dS, nothing more.
        scale = max(1.0, float(truth[name].abs().max()))
        assert float((got[name].double() - truth[name]).abs().max()) <= 8 * ulp * scale, name


def test_reference_is_none_for_float32(sfag, case_factory):
    case = case_factory(dtype="float32")
    assert sfag.reference(case, sfag.make_inputs(case, seed=1)) is None


def test_rows_that_see_nothing(sfag, case_factory, path):
    case = case_factory(S1=10, S2=4, K=2, block_size=2, sparse_mode=3, N1=2)
    inputs = sfag.make_inputs(case, seed=2)
    blind = 10 - 4  # thr(s) = S2 - S1 + s + 1 <= 0 for s < S1 - S2
    assert (inputs["sparse_indices"][:, :blind] == -1).all()
    assert (inputs["sparse_indices"][:, blind:, :, 0] >= 0).all()
    assert (inputs["out"][:, :blind] == 0).all()
    assert (inputs["softmax_max"][:, :, :blind] == 0).all()
    assert (inputs["softmax_sum"][:, :, :blind] == 0).all()
    assert (inputs["softmax_sum"][:, :, blind:] > 0).all()
    g = sfag.oracle(case, inputs)
    assert (g["dq"][:, :blind] == 0).all() and (g["dq_rope"][:, :blind] == 0).all()
    assert g["dq"][:, blind:].abs().sum() > 0


def test_unseen_keys_get_zero_gradients(sfag, case_factory, path):
    # K = 1 with bs = 2 in mode 0: each row sees one random block, most keys are seen by nobody.
    case = case_factory(S1=2, S2=40, K=1, block_size=2, N1=1)
    inputs = sfag.make_inputs(case, seed=9)
    seen = set()
    for block in inputs["sparse_indices"].reshape(-1).tolist():
        seen.update({2 * block, 2 * block + 1})
    g = sfag.oracle(case, inputs)
    for t in range(40):
        assert (g["dv"][0, t].abs().sum() > 0) == (t in seen), t
        if t not in seen:
            assert (g["dk"][0, t] == 0).all() and (g["dk_rope"][0, t] == 0).all()


def test_lists_end_at_first_minus_one(sfag, case_factory, path):
    # Entries after the first -1 must be ignored even when they hold valid ids (spec).
    case = case_factory(S1=4, S2=16, K=4, block_size=2, N1=1)
    inputs = sfag.make_inputs(case, seed=4)
    idx = inputs["sparse_indices"].clone()
    idx[:, :, :, 1] = -1
    trimmed = idx.clone()
    trimmed[:, :, :, 2:] = -1
    a = sfag.oracle(case, dict(inputs, sparse_indices=idx))
    b = sfag.oracle(case, dict(inputs, sparse_indices=trimmed))
    for name in a:
        assert torch.equal(a[name], b[name]), name


def test_oracle_memory_is_chunked(sfag, case_factory, monkeypatch, path):
    # A tiny chunk budget forces one row per chunk; the result must not change.
    case = case_factory(B=2, S1=7, S2=20, N1=4, N2=2, K=3, block_size=4, sparse_mode=3)
    inputs = sfag.make_inputs(case, seed=8)
    whole = sfag.oracle(case, inputs)
    monkeypatch.setattr(sfag.layout, "CHUNK_ELEMENTS", 1)
    chunked = sfag.oracle(case, inputs)
    for name in whole:
        torch.testing.assert_close(chunked[name], whole[name], rtol=1e-12, atol=1e-14)
