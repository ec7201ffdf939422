"""The speed baseline on Ascend NPUs: CANN's own operator, through torch_npu.

`torch_npu.npu_sparse_flash_attention_grad` wraps aclnnSparseFlashAttentionGrad. Its signature, as
torch_npu's op-plugin registers it (Ascend/op-plugin, branch 7.3.0 = torch_npu 2.x-7.3.0 for CANN 8.5.0,
op_plugin/config/op_plugin_functions.yaml):

    npu_sparse_flash_attention_grad(query, key, value, sparse_indices, d_out, out, softmax_max,
        softmax_sum, scale_value, sparse_block_size, query_rope=None, key_rope=None,
        actual_seq_qlen=None, actual_seq_kvlen=None, layout="BSND", sparse_mode=3,
        pre_tokens=2**63-1, next_tokens=2**63-1, attention_mode=0)
      -> (d_query, d_key, d_value, d_query_rope, d_key_rope)

op_plugin/ops/opapi/SparseFlashAttentionGradKernelNpuOpApi.cpp takes attention_mode and does not pass it
on to aclnn: it changes nothing. What the operator computes, and so where it is a fair baseline
(hicann/ops-transformer attention/sparse_flash_attention_grad/docs/aclnnSparseFlashAttentionGrad.md,
and its kernels):
- value equal to key only (当前只支持value和key完全一致的场景; the kernel gathers V from K): the
  problem's `value_is_key` cases;
- each row's first min(K, ceil(thr(s)/bs)) entries are taken (GetActualSelCount), with no stop at -1:
  a `ragged_topk` row gathers from index -1, and `contract_indices` rows (junk after the first -1,
  block nblk(s)-1 absent) give other visible sets than the spec's;
- float16 or bfloat16; D = 512; N2 = 1; N1 in 1, 2, 4, ..., 128; Dr = 64; block size 1, 8, 16, 32, 64;
  sparse modes 0 and 3; K in 1024, 2048, ..., 8192, and K * block size not past about 100k
  (不建议K * sparseBlockSize超过100k ... 可能会导致oom); sparse_indices INT32.
`unsupported_reason` refuses every case outside that; the starter kernel times those. The worker
checks the operator's outputs against the oracle on its first call of each case before any of its
times count (judge/baseline_check.py).
"""

from __future__ import annotations

from typing import Any

OPERATOR = "npu_sparse_flash_attention_grad"
NAME = f"torch_npu.{OPERATOR}"
SUPPORTED_N1 = (1, 2, 4, 8, 16, 32, 64, 128)
SUPPORTED_BLOCK_SIZES = (1, 8, 16, 32, 64)
SUPPORTED_K = tuple(range(1024, 8192 + 1, 1024))
MAX_K_TIMES_BLOCK = 100_000  # the doc's OOM warning


def unsupported_reason(params: dict[str, Any], dtype: str, flags: tuple[str, ...] = ()) -> str | None:
    """Why the operator would not compute this case as the spec does, or None (the worker asks too)."""
    k, bs = params.get("K"), params.get("block_size")
    checks = [
        ("value_is_key" in flags, "v other than k (it reads v from k; the case has no value_is_key flag)"),
        ("ragged_topk" not in flags, "index rows that end early at -1 (it takes min(K, nblk) entries per row)"),
        ("contract_indices" not in flags, "index rows in any order with junk after the first -1"),
        (dtype in ("float16", "bfloat16"), f"dtype {dtype} (it takes float16 and bfloat16)"),
        (params.get("D") == 512, f"D = {params.get('D')} (it takes 512)"),
        (params.get("Dr") == 64, f"Dr = {params.get('Dr')} (it takes the 64-wide rope part)"),
        (params.get("N2") == 1, f"N2 = {params.get('N2')} (it takes one KV head)"),
        (params.get("N1") in SUPPORTED_N1, f"N1 = {params.get('N1')} (it takes {SUPPORTED_N1})"),
        (bs in SUPPORTED_BLOCK_SIZES, f"block size {bs}"),
        (params.get("sparse_mode") in (0, 3), f"sparse mode {params.get('sparse_mode')}"),
        (k in SUPPORTED_K, f"K = {k} (it takes 1024, 2048, ..., 8192)"),
        (isinstance(k, int) and isinstance(bs, int) and k * bs <= MAX_K_TIMES_BLOCK,
         f"K * block size = {k} * {bs} (past the ~100k its doc warns may run out of memory)"),
    ]
    failed = [reason for ok, reason in checks if not ok]
    return f"{NAME} does not support " + "; ".join(failed) if failed else None
OUTPUT_ORDER = ("dq", "dk", "dv", "dq_rope", "dk_rope")  # the operator's return order


class VendorSparseFlashAttentionGrad:
    """A `PythonKernel` (judge/tracks/npu/baseline.py) around the torch_npu operator."""

    name = NAME

    def __init__(self, operator: Any, torch_module: Any, *, index_dtype: str = "int32",
                 attention_mode: int = 2) -> None:
        self._op = operator
        self._torch = torch_module
        self._index_dtype = getattr(torch_module, index_dtype)
        self._attention_mode = attention_mode
        self._last: dict[str, Any] = {}

    def unsupported_reason(self, params: dict[str, Any], dtype: str, flags: tuple[str, ...] = ()) -> str | None:
        """Why the operator cannot run this case as the spec does, or None."""
        return unsupported_reason(params, dtype, flags)

    def prepare(self, inputs: dict[str, Any], scalars: dict[str, Any]) -> dict[str, Any]:
        """Untimed: index dtype conversion and the keyword arguments of the call."""
        indices = inputs["sparse_indices"]
        if indices.dtype != self._index_dtype:
            indices = indices.to(self._index_dtype)
        return {
            "args": (inputs["q"], inputs["k"], inputs["v"], indices, inputs["d_out"], inputs["out"],
                     inputs["softmax_max"], inputs["softmax_sum"], float(scalars["scale"]),
                     int(scalars["block_size"])),
            "kwargs": {"query_rope": inputs.get("q_rope"), "key_rope": inputs.get("k_rope"), "layout": "BSND",
                       "sparse_mode": int(scalars["sparse_mode"]), "attention_mode": self._attention_mode},
        }

    def run(self, prepared: dict[str, Any]) -> int:
        """Timed: one call of the operator on the current stream."""
        results = self._op(*prepared["args"], **prepared["kwargs"])
        self._last = {name: tensor for name, tensor in zip(OUTPUT_ORDER, results, strict=True)
                      if tensor is not None and tensor.numel() > 0}
        return 0

    def outputs(self) -> dict[str, Any]:
        """The last call's gradients by output name (rope ones absent when Dr = 0)."""
        return dict(self._last)


def make_baseline(options: dict[str, Any]) -> VendorSparseFlashAttentionGrad | None:
    """The adapter, or None when torch_npu or its operator is not installed here."""
    try:
        import torch
        import torch_npu
    except ImportError:
        return None
    operator = getattr(torch_npu, OPERATOR, None)
    if operator is None:
        return None
    return VendorSparseFlashAttentionGrad(operator, torch,
                                          index_dtype=str(options.get("vendor_index_dtype", "int32")),
                                          attention_mode=int(options.get("vendor_attention_mode", 2)))
