"""The vendor-operator baseline adapter and its loading seam, with a stand-in for the operator."""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

import pytest
import torch

from judge.tracks.npu.baseline import python_baseline
from tests.judge.npu.conftest import REPO

REFERENCE = REPO / "reference_kernels"
ADAPTER = REFERENCE / "sparse_flash_attention_grad" / "npu" / "vendor_baseline.py"
OFFICIAL = {"B": 1, "S1": 4, "S2": 16, "N1": 8, "N2": 1, "D": 512, "Dr": 64, "K": 2, "block_size": 8,
            "sparse_mode": 3, "scale": 0.04}


def _module() -> Any:
    spec = importlib.util.spec_from_file_location("vendor_baseline_under_test", ADAPTER)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class FakeOperator:
    """Records its call and returns gradients shaped like the inputs, as the real operator does."""

    def __init__(self) -> None:
        self.calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def __call__(self, *args: Any, **kwargs: Any) -> tuple[torch.Tensor, ...]:
        self.calls.append((args, kwargs))
        query, key, value = args[0], args[1], args[2]
        rope = kwargs["query_rope"]
        empty = torch.empty(0)
        return (torch.full_like(query, 1.0), torch.full_like(key, 2.0), torch.full_like(value, 3.0),
                torch.full_like(rope, 4.0) if rope is not None else empty,
                torch.full_like(kwargs["key_rope"], 5.0) if rope is not None else empty)


def _inputs(dr: int = 64) -> dict[str, torch.Tensor | None]:
    b, s1, s2, n1, d = 1, 4, 16, 8, 512
    return {
        "q": torch.zeros(b, s1, n1, d), "k": torch.zeros(b, s2, 1, d), "v": torch.zeros(b, s2, 1, d),
        "q_rope": torch.zeros(b, s1, n1, dr) if dr else None, "k_rope": torch.zeros(b, s2, 1, dr) if dr else None,
        "sparse_indices": torch.zeros(b, s1, 1, 2, dtype=torch.int32), "d_out": torch.zeros(b, s1, n1, d),
        "out": torch.zeros(b, s1, n1, d), "softmax_max": torch.zeros(b, 1, s1, n1),
        "softmax_sum": torch.ones(b, 1, s1, n1),
    }


# CANN 8.5.0 (ops-transformer tag v8.5.0): K must be 2048 (its tiling refuses any other), v need not be k,
# a row stops at its first -1. The 9.x releases: K of 1024..8192 in steps of 1024, K * block size <= ~100k,
# v equal to k, no stop at -1.
PINNED = "8.5.0"
SUPPORTED = {**OFFICIAL, "S2": 65536, "K": 2048, "block_size": 8}
VALUE_IS_KEY = ("value_is_key",)


def test_supported_cases_follow_the_operator_at_the_pinned_tag() -> None:
    kernel = _module().VendorSparseFlashAttentionGrad(FakeOperator(), torch, cann_version=PINNED)
    assert kernel.unsupported_reason(SUPPORTED, "bfloat16", ()) is None  # v other than k is fine at 8.5.0
    assert kernel.unsupported_reason(SUPPORTED, "float16", ("ragged_topk",)) is None  # it stops at -1
    reason = kernel.unsupported_reason({**SUPPORTED, "Dr": 0, "N2": 2}, "float32", VALUE_IS_KEY)
    assert reason is not None
    assert "float32" in reason and "Dr = 0" in reason and "N2 = 2" in reason and "v8.5.0" in reason
    assert "block size 4" in kernel.unsupported_reason({**SUPPORTED, "block_size": 4}, "bfloat16", VALUE_IS_KEY)
    assert "N1 = 6" in kernel.unsupported_reason({**SUPPORTED, "N1": 6}, "bfloat16", VALUE_IS_KEY)


@pytest.mark.parametrize("version,change,flags,words", [
    (PINNED, {"K": 1024}, VALUE_IS_KEY, "K = 1024"),  # the tiling's selected_block_count == 2048 check
    (PINNED, {"K": 4096}, VALUE_IS_KEY, "K = 4096"),
    (PINNED, {}, ("contract_indices",), "junk after the first -1"),
    ("9.0.0", {}, (), "no value_is_key flag"),  # 9.x reads v from k
    ("9.0.0", {}, ("value_is_key", "ragged_topk"), "end early at -1"),  # 9.x never stops at -1
    ("9.0.0", {"K": 1536}, VALUE_IS_KEY, "K = 1536"),
    ("9.0.0", {"K": 8192, "block_size": 16}, VALUE_IS_KEY, "8192 * 16"),  # past the OOM warning
    ("8.3.RC1", {}, VALUE_IS_KEY, "no recorded contract for CANN 8.3.RC1"),  # unknown: the starter times all
    (None, {}, VALUE_IS_KEY, "no recorded contract for CANN unknown"),
])
def test_cases_outside_the_contract_of_the_workers_version_are_the_starters(
        version: str | None, change: dict[str, int], flags: tuple[str, ...], words: str) -> None:
    reason = _module().unsupported_reason({**SUPPORTED, **change}, "bfloat16", flags, version)
    assert reason is not None and words in reason


def test_the_contract_row_follows_the_version() -> None:
    module = _module()
    assert module.contract_for("8.5.0").k_values == (2048,)
    assert module.contract_for("8.5.0.alpha001").source == "v8.5.0"
    assert module.contract_for("9.1.0").source.startswith("v9.0.0")
    assert module.contract_for("8.5.1") is None and module.contract_for("85.0") is None
    # 9.x takes K = 1024, which 8.5.0 refuses at tiling (the benchmark case b06's K).
    assert module.unsupported_reason({**SUPPORTED, "K": 1024}, "float16", VALUE_IS_KEY, "9.0.0") is None


def test_the_npu_sets_give_the_operator_the_cases_a_contest_would() -> None:
    from judge.backends import Backend, CaseSet
    from judge.problem import load_problem

    module = _module()
    problem = load_problem("sparse_flash_attention_grad")
    for case_set in (CaseSet.BENCHMARKS, CaseSet.PRIVATE):
        cases = problem.cases_for(Backend.NPU, [case_set])
        vendor = [c.name for c in cases if module.unsupported_reason(c.params, c.dtype, c.flags, PINNED) is None]
        assert vendor, f"no {case_set.value} case the vendor operator may time"
        assert all(c.params["K"] == 2048 for c in cases if c.name in vendor)
        assert len(vendor) < len(cases)  # the starter kernel times the others
    # The K = 1024 cases: IE at the vendor's tiling before the table was by version; the starter's now.
    by_name = {c.name: c for c in problem.cases_for(Backend.NPU, [CaseSet.BENCHMARKS, CaseSet.PRIVATE])}
    for name in ("b06_mla_absorb_bs16", "p06_mla_absorb_bs8"):
        case = by_name[name]
        assert "K = 1024" in module.unsupported_reason(case.params, case.dtype, case.flags, PINNED)


def test_the_call_maps_abi_names_to_the_operator_arguments() -> None:
    operator = FakeOperator()
    kernel = _module().VendorSparseFlashAttentionGrad(operator, torch, index_dtype="int64", attention_mode=2)
    inputs = _inputs()
    prepared = kernel.prepare(inputs, OFFICIAL)
    assert prepared["args"][3].dtype == torch.int64  # converted once, outside the timed call
    assert kernel.run(prepared) == 0
    args, kwargs = operator.calls[0]
    assert args[0] is inputs["q"] and args[1] is inputs["k"] and args[2] is inputs["v"]
    assert args[4] is inputs["d_out"] and args[5] is inputs["out"]
    assert args[6] is inputs["softmax_max"] and args[7] is inputs["softmax_sum"]
    assert args[8] == pytest.approx(0.04) and args[9] == 8
    assert kwargs == {"query_rope": inputs["q_rope"], "key_rope": inputs["k_rope"], "layout": "BSND",
                      "sparse_mode": 3, "attention_mode": 2}
    outputs = kernel.outputs()
    assert sorted(outputs) == ["dk", "dk_rope", "dq", "dq_rope", "dv"]
    assert float(outputs["dq"][0, 0, 0, 0]) == 1.0 and float(outputs["dk_rope"][0, 0, 0, 0]) == 5.0


def test_without_rope_the_rope_outputs_are_absent() -> None:
    kernel = _module().VendorSparseFlashAttentionGrad(FakeOperator(), torch)
    kernel.run(kernel.prepare(_inputs(dr=0), {**OFFICIAL, "Dr": 0}))
    assert sorted(kernel.outputs()) == ["dk", "dq", "dv"]


def test_loading_seam_gives_none_here_and_the_adapter_where_the_operator_exists(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # No torch_npu on this machine: no vendor baseline, the starter kernel is timed instead.
    assert python_baseline(REFERENCE, "sparse_flash_attention_grad", {}) is None
    assert python_baseline(REFERENCE, "add_mul_relu", {}) is None  # no vendor_baseline.py at all
    fake = type("torch_npu", (), {"npu_sparse_flash_attention_grad": FakeOperator()})
    monkeypatch.setitem(sys.modules, "torch_npu", fake)
    kernel = python_baseline(REFERENCE, "sparse_flash_attention_grad", {"vendor_index_dtype": "int32"})
    assert kernel is not None and kernel.name == "torch_npu.npu_sparse_flash_attention_grad"
