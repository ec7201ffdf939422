"""make_inputs: the spec's generator rules, rounding to T, and bit-for-bit determinism."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[2]


def _rows(case, inputs):
    """(s, list of valid ids) per row, with nblk(s)."""
    p = case.params
    bs = p["block_size"]
    for b in range(p["B"]):
        for s in range(p["S1"]):
            thr = p["S2"] if p["sparse_mode"] == 0 else min(max(p["S2"] - p["S1"] + s + 1, 0), p["S2"])
            nblk = math.ceil(thr / bs)
            for n2 in range(p["N2"]):
                row = inputs["sparse_indices"][b, s, n2].tolist()
                count = _first_minus_one(row)
                yield nblk, row[:count], row[count:]


@pytest.mark.parametrize("mode", [0, 3])
def test_indices_follow_the_generator_rules(sfag, case_factory, mode):
    case = case_factory(B=2, S1=20, S2=37, N1=4, N2=2, K=6, block_size=4, sparse_mode=mode)
    inputs = sfag.make_inputs(case, seed=21)
    idx = inputs["sparse_indices"]
    assert idx.dtype == torch.int32 and tuple(idx.shape) == (2, 20, 2, 6)
    for nblk, valid, rest in _rows(case, inputs):
        assert len(valid) == min(6, nblk)  # c(s) = min(K, nblk(s))
        assert valid == sorted(set(valid))  # distinct, ascending
        assert all(0 <= i < nblk for i in valid)
        assert not valid or valid[-1] == nblk - 1  # always holds the last block
        assert all(i == -1 for i in rest)


def test_ragged_lists_end_early(sfag, case_factory):
    case = case_factory(flags=("ragged_topk",), S1=40, S2=64, N1=1, K=12, block_size=2, sparse_mode=3)
    inputs = sfag.make_inputs(case, seed=6)
    counts, full = [], []
    for nblk, valid, rest in _rows(case, inputs):
        c = min(12, nblk)
        assert 0 < len(valid) <= c
        assert valid == sorted(set(valid)) and valid[-1] == nblk - 1
        assert all(i == -1 for i in rest)
        counts.append(len(valid))
        full.append(c)
    assert any(n < c for n, c in zip(counts, full, strict=True))  # some lists really end early
    assert len(set(counts)) > 3


def _first_minus_one(row):
    return row.index(-1) if -1 in row else len(row)


@pytest.mark.parametrize("ragged", [False, True], ids=["full", "ragged"])
def test_contract_indices_use_every_freedom_of_the_contract(sfag, case_factory, ragged):
    # Spec "Which keys a query token sees": contract_indices rows hold distinct ids of [0, nblk) in
    # random order up to the first -1 (or K entries), leave block nblk-1 out of some rows, and
    # put junk after the -1: valid-looking ids (listed and unlisted ones), ids out of range (in
    # the key buffer and far past it) and negative values other than -1.
    flags = ("contract_indices", "ragged_topk") if ragged else ("contract_indices",)
    # S1 > S2: rows that see nothing; nblk(s) runs from 0 to 13, across K = 8.
    case = case_factory(flags=flags, B=2, S1=60, S2=50, N1=2, N2=2, K=8, block_size=4, sparse_mode=3)
    inputs = sfag.make_inputs(case, seed=17)
    seen = dict.fromkeys(["unsorted", "last left out", "last kept", "full list", "junk listed id",
                          "junk unlisted id", "junk past nblk", "junk past the buffer", "junk -2..-17",
                          "junk far negative", "junk in a row that sees nothing"], False)
    total = math.ceil(50 / 4)
    for nblk, valid, rest in _rows(case, inputs):
        c = min(8, nblk - (nblk >= 1 and nblk - 1 not in valid))  # one fewer when nblk-1 is left out
        assert len(valid) <= c and (ragged or len(valid) == c) and (nblk == 0 or len(valid) >= 1)
        assert len(set(valid)) == len(valid) and all(0 <= i < nblk for i in valid)
        seen["unsorted"] |= valid != sorted(valid)
        seen["last left out" if nblk - 1 not in valid else "last kept"] |= nblk >= 2
        seen["full list"] |= not rest
        junk = rest[1:]  # rest[0] is the -1 that ends the list
        seen["junk listed id"] |= any(j in valid for j in junk)
        seen["junk unlisted id"] |= any(0 <= j < nblk and j not in valid for j in junk)
        seen["junk past nblk"] |= any(nblk <= j <= total for j in junk)
        seen["junk past the buffer"] |= any(j > total for j in junk)
        seen["junk -2..-17"] |= any(-17 <= j <= -2 for j in junk)
        seen["junk far negative"] |= any(j < -17 for j in junk)
        seen["junk in a row that sees nothing"] |= nblk == 0 and any(j != -1 for j in junk)
    assert [what for what, ok in seen.items() if not ok] == []


def test_contract_indices_change_only_the_indices(sfag, case_factory):
    params = dict(B=1, S1=12, S2=40, N1=2, K=8, block_size=4, sparse_mode=3)
    plain = sfag.make_inputs(case_factory(**params), seed=3)
    flagged = sfag.make_inputs(case_factory(flags=("contract_indices",), **params), seed=3)
    for name in ("q", "q_rope", "k", "k_rope", "v", "d_out"):
        assert torch.equal(plain[name], flagged[name]), name
    assert not torch.equal(plain["sparse_indices"], flagged["sparse_indices"])


def test_contract_rows_give_the_oracle_and_work_of_their_sorted_prefix(sfag, case_factory):
    # The oracle, the forward pass and P see only each row's valid prefix: sorting it and turning
    # the junk into -1 (the plain generator's form of the same row) changes none of them.
    case = case_factory(flags=("contract_indices",), B=2, S1=14, S2=30, N1=2, N2=1, K=9, block_size=4, sparse_mode=3)
    inputs = sfag.make_inputs(case, seed=5)
    rows = inputs["sparse_indices"].reshape(-1, 9).tolist()
    tidy = [sorted(r[:_first_minus_one(r)]) + [-1] * (9 - _first_minus_one(r)) for r in rows]
    tidy_idx = torch.tensor(tidy, dtype=torch.int32).view_as(inputs["sparse_indices"])
    assert not torch.equal(tidy_idx, inputs["sparse_indices"])
    sz = sfag.sizes(case)
    for a, b in zip(sfag.forward(sz, inputs, inputs["sparse_indices"]), sfag.forward(sz, inputs, tidy_idx),
                    strict=True):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-6)  # only the float32 sum order differs
    assert sfag.count_pairs(sz, inputs["sparse_indices"]) == sfag.count_pairs(sz, tidy_idx) > 0
    a, b = sfag.oracle(case, inputs), sfag.oracle(case, dict(inputs, sparse_indices=tidy_idx))
    for name in a:
        torch.testing.assert_close(a[name], b[name], rtol=1e-12, atol=1e-14)


def test_value_is_key_copies_k_into_its_own_v(sfag, case_factory):
    params = dict(B=1, S1=8, S2=20, N1=2, K=4, block_size=2, sparse_mode=3)
    plain = sfag.make_inputs(case_factory(**params), seed=2)
    absorbed = sfag.make_inputs(case_factory(flags=("value_is_key",), **params), seed=2)
    assert torch.equal(absorbed["v"], absorbed["k"])
    assert absorbed["v"].data_ptr() != absorbed["k"].data_ptr()  # the kernel gets its own v buffer
    for name in ("q", "q_rope", "k", "k_rope", "d_out", "sparse_indices"):
        assert torch.equal(plain[name], absorbed[name]), name
    assert not torch.equal(plain["out"], absorbed["out"])  # the forward pass used the copied v


def test_unknown_flags_are_refused(sfag, case_factory):
    with pytest.raises(ValueError, match="unknown flags"):
        sfag.make_inputs(case_factory(flags=("sorted_please",)), seed=1)


def test_inputs_are_rounded_to_the_dtype(sfag, case_factory):
    case = case_factory(dtype="bfloat16", Dr=0)
    inputs = sfag.make_inputs(case, seed=1)
    assert inputs["q_rope"] is None and inputs["k_rope"] is None
    for name in ("q", "k", "v", "d_out", "out"):
        assert inputs[name].dtype == torch.bfloat16, name
    assert inputs["softmax_max"].dtype == torch.float32
    assert tuple(inputs["softmax_max"].shape) == (1, 1, 8, 2)  # [B, N2, S1, G]
    assert inputs["scale"] == pytest.approx(1 / math.sqrt(8)) and isinstance(inputs["scale"], float)
    # N(0, 1): a few hundred draws have mean near 0 and spread near 1.
    assert abs(float(inputs["q"].float().std()) - 1.0) < 0.3


def test_custom_scale_and_thread_count_restored(sfag, case_factory):
    before = torch.get_num_threads()
    inputs = sfag.make_inputs(case_factory(scale=0.125), seed=1)
    assert inputs["scale"] == 0.125
    assert torch.get_num_threads() == before


def test_seeds_change_the_content(sfag, case_factory):
    case = case_factory()
    a, b = sfag.make_inputs(case, seed=1), sfag.make_inputs(case, seed=2)
    assert not torch.equal(a["q"], b["q"])


_DIGEST_SCRIPT = textwrap.dedent(
    """
    import hashlib, json, sys, torch
    from judge.problem import load_problem
    torch.set_num_threads(int(sys.argv[1]))
    problem = load_problem("sparse_flash_attention_grad")
    digests = {}
    for case in problem.cases_for(problem.backends[0]):
        if case.name not in sys.argv[2:]:
            continue
        inputs = problem.module.make_inputs(case, 987654321)
        h = hashlib.sha256()
        for name in sorted(inputs):
            value = inputs[name]
            if isinstance(value, torch.Tensor):
                h.update(name.encode() + value.contiguous().view(torch.uint8).numpy().tobytes())
            else:
                h.update(f"{name}={value!r}".encode())
        digests[case.name] = h.hexdigest()
    print(json.dumps(digests))
    """
)


def test_make_inputs_is_identical_across_processes():
    # The runner child and the worker both call make_inputs: they must agree to the bit, whatever
    # the thread count each was started with.
    names = ["t07_ragged_topk", "t14_contract_ragged_empty_rows", "t16_value_is_key", "b02_causal_dense",
             "b05_half_bs8"]
    results = []
    for threads in (2, 1):
        done = subprocess.run(
            [sys.executable, "-c", _DIGEST_SCRIPT, str(threads), *names],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert set(results[0]) == set(names)
    assert results[0] == results[1]


def test_explicit_cpu_device_is_the_default(sfag, amr_problem, case_factory):
    case = case_factory(flags=("ragged_topk",), B=2, S1=12, S2=20, K=3, block_size=4, sparse_mode=3)
    a, b = sfag.make_inputs(case, seed=8), sfag.make_inputs(case, seed=8, device="cpu")
    for name, value in a.items():
        if isinstance(value, torch.Tensor):
            assert torch.equal(value, b[name]), name
        else:
            assert value == b[name], name
    amr_case = amr_problem.cases_for(amr_problem.backends[0])[1]
    assert torch.equal(
        amr_problem.module.make_inputs(amr_case, 3)["x"], amr_problem.module.make_inputs(amr_case, 3, device="cpu")["x"]
    )
