"""The speed baseline on Ascend NPUs: CANN's own operator, through torch_npu.

`torch_npu.npu_sparse_flash_attention_grad` wraps aclnnSparseFlashAttentionGrad. Its
signature, as torch_npu's op-plugin registers it (meta function and op-plugin source):

    npu_sparse_flash_attention_grad(query, key, value, sparse_indices, d_out, out, softmax_max,
        softmax_sum, scale_value, sparse_block_size, query_rope=None, key_rope=None,
        actual_seq_qlen=None, actual_seq_kvlen=None, layout="BSND", sparse_mode=3,
        pre_tokens=2**63-1, next_tokens=2**63-1, attention_mode=0)
      -> (d_query, d_key, d_value, d_query_rope, d_key_rope)

What the aclnn documentation allows (and `unsupported_reason` enforces): float16 or bfloat16;
D = 512; N2 = 1; N1 in 1, 2, 4, ..., 128; Dr = 64 (the MLA rope part); block size 1, 8, 16,
32, 64; sparse modes 0 and 3. Not yet run on NPU hardware: two points to confirm there are
the dtype of sparse_indices (the aclnn page lists INT64, callers pass int32; `index_dtype`)
and attention_mode (2, "MLA absorb", is what callers with a rope part pass; `attention_mode`).
The npu-marked test checks this adapter's outputs against the oracle before it is trusted.
"""

from __future__ import annotations

from typing import Any

OPERATOR = "npu_sparse_flash_attention_grad"
SUPPORTED_N1 = (1, 2, 4, 8, 16, 32, 64, 128)
SUPPORTED_BLOCK_SIZES = (1, 8, 16, 32, 64)
OUTPUT_ORDER = ("dq", "dk", "dv", "dq_rope", "dk_rope")  # the operator's return order


class VendorSparseFlashAttentionGrad:
    """A `PythonKernel` (judge/tracks/npu/baseline.py) around the torch_npu operator."""

    name = f"torch_npu.{OPERATOR}"

    def __init__(self, operator: Any, torch_module: Any, *, index_dtype: str = "int32",
                 attention_mode: int = 2) -> None:
        self._op = operator
        self._torch = torch_module
        self._index_dtype = getattr(torch_module, index_dtype)
        self._attention_mode = attention_mode
        self._last: dict[str, Any] = {}

    def unsupported_reason(self, params: dict[str, Any], dtype: str) -> str | None:
        """Why the operator cannot run this case, or None."""
        checks = [
            (dtype in ("float16", "bfloat16"), f"dtype {dtype} (it takes float16 and bfloat16)"),
            (params.get("D") == 512, f"D = {params.get('D')} (it takes 512)"),
            (params.get("Dr") == 64, f"Dr = {params.get('Dr')} (it takes the 64-wide rope part)"),
            (params.get("N2") == 1, f"N2 = {params.get('N2')} (it takes one KV head)"),
            (params.get("N1") in SUPPORTED_N1, f"N1 = {params.get('N1')} (it takes {SUPPORTED_N1})"),
            (params.get("block_size") in SUPPORTED_BLOCK_SIZES, f"block size {params.get('block_size')}"),
            (params.get("sparse_mode") in (0, 3), f"sparse mode {params.get('sparse_mode')}"),
        ]
        failed = [reason for ok, reason in checks if not ok]
        return f"{self.name} does not support " + "; ".join(failed) if failed else None

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
