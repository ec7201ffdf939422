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
on to aclnn: it changes nothing.

What the operator computes, and so where it is a fair baseline, differs between CANN releases: the
contract is a table by CANN version (`CONTRACTS`), each row read at that release's tag of
cannmirror/ops-transformer (attention/sparse_flash_attention_grad/: op_host/*_tiling*.cpp, op_host/*_def.cpp,
docs/aclnnSparseFlashAttentionGrad.md), and the worker's detected CANN version (runtime options
"cann_version", judge/tracks/npu/cann.py) picks the row. A version with no row gets no vendor baseline:
the starter kernel times every case, and the report says why. `unsupported_reason` refuses every case
outside the row; the starter kernel times those. The worker checks the operator's outputs against the
oracle on its first call of each case before any of its times count (judge/baseline_trust.py), and
`opjudge doctor` lists, per case of the problem, which baseline will time it on this worker.
"""

from __future__ import annotations

from typing import Any, NamedTuple

OPERATOR = "npu_sparse_flash_attention_grad"
NAME = f"torch_npu.{OPERATOR}"


class Contract(NamedTuple):
    """What one CANN release's operator takes, with where each fact was read.

    A NamedTuple, not a dataclass: the judge loads this file by path, outside sys.modules."""

    source: str  # the tag (or ref) of cannmirror/ops-transformer the row was read at
    k_values: tuple[int, ...]  # selected_block_count (last dim of sparse_indices)
    block_sizes: tuple[int, ...]
    n1_values: tuple[int, ...]
    dtypes: tuple[str, ...] = ("float16", "bfloat16")
    d_values: tuple[int, ...] = (512,)
    dr_values: tuple[int, ...] = (64,)
    sparse_modes: tuple[int, ...] = (0, 3)
    value_must_be_key: bool = False  # it gathers V from K's rows
    stops_at_minus_one: bool = True  # an index row ends at its first -1
    max_k_times_block: int | None = None  # a documented memory ceiling on K * block size


POWERS_OF_TWO_TO_128 = (1, 2, 4, 8, 16, 32, 64, 128)
CONTRACTS: dict[str, Contract] = {
    # Read at tag v8.5.0 (commit 6ead121a): op_host/sparse_flash_attention_grad_tiling_bs1_basic.cpp refuses
    # selected_block_count != 2048 (lines 408-412), sparse_mode other than 0 and 3 (416-424), n2 != 1 or n1
    # not a power of two up to 128 (483-492); op_host/*_def.cpp takes float16 and bfloat16 only; the doc gives
    # D = 512 (143-144), Dr = 64 (284), block size 1, 8, 16, 32 or 64 (318). op_kernel's GetActualSelCount
    # (sparse_flash_attention_grad_bs1_basic.h 388-392) and vec_op.h's Gather (644-646) stop at the first -1;
    # V is gathered from its own tensor (vec_op.h 623): v need not equal k.
    "8.5.0": Contract(source="v8.5.0", k_values=(2048,), block_sizes=(1, 8, 16, 32, 64),
                      n1_values=POWERS_OF_TWO_TO_128),
    # Read at the 9.x tags (v9.0.0 to v9.1.0-beta.3): the == 2048 check is gone and the doc gives K in 1024,
    # 2048, ..., 8192 with K * block size not past about 100k (OOM warning), and "value equal to key only"
    # (当前只支持value和key完全一致的场景); the index rows are read as min(K, nblk) entries, no stop at -1.
    "9": Contract(source="v9.0.0..v9.1.0-beta.3", k_values=tuple(range(1024, 8192 + 1, 1024)),
                  block_sizes=(1, 8, 16, 32, 64), n1_values=POWERS_OF_TWO_TO_128, value_must_be_key=True,
                  stops_at_minus_one=False, max_k_times_block=100_000),
}


def contract_for(cann_version: str | None) -> Contract | None:
    """The row for this CANN version: an exact release ("8.5.0", "8.5.0.alpha1"), else its major ("9.0.1")."""
    version = (cann_version or "").strip()
    for key in sorted(CONTRACTS, key=len, reverse=True):
        if version == key or version.startswith(key + "."):
            return CONTRACTS[key]
    return None


def unsupported_reason(params: dict[str, Any], dtype: str, flags: tuple[str, ...] = (),
                       cann_version: str | None = None) -> str | None:
    """Why the operator of this CANN version would not compute this case as the spec does, or None."""
    contract = contract_for(cann_version)
    if contract is None:
        return (f"{NAME} has no recorded contract for CANN {cann_version or 'unknown'} (known: "
                f"{', '.join(sorted(CONTRACTS))}); the starter kernel times every case")
    k, bs = params.get("K"), params.get("block_size")
    checks = [
        (not contract.value_must_be_key or "value_is_key" in flags,
         "v other than k (it reads v from k; the case has no value_is_key flag)"),
        (contract.stops_at_minus_one or "ragged_topk" not in flags,
         "index rows that end early at -1 (it takes min(K, nblk) entries per row)"),
        ("contract_indices" not in flags, "index rows in any order with junk after the first -1"),
        (dtype in contract.dtypes, f"dtype {dtype} (it takes {' and '.join(contract.dtypes)})"),
        (params.get("D") in contract.d_values, f"D = {params.get('D')} (it takes {contract.d_values})"),
        (params.get("Dr") in contract.dr_values, f"Dr = {params.get('Dr')} (it takes the 64-wide rope part)"),
        (params.get("N2") == 1, f"N2 = {params.get('N2')} (it takes one KV head)"),
        (params.get("N1") in contract.n1_values, f"N1 = {params.get('N1')} (it takes {contract.n1_values})"),
        (bs in contract.block_sizes, f"block size {bs}"),
        (params.get("sparse_mode") in contract.sparse_modes, f"sparse mode {params.get('sparse_mode')}"),
        (k in contract.k_values, f"K = {k} (it takes {_listed(contract.k_values)})"),
        (contract.max_k_times_block is None
         or (isinstance(k, int) and isinstance(bs, int) and k * bs <= contract.max_k_times_block),
         f"K * block size = {k} * {bs} (past the ~100k its doc warns may run out of memory)"),
    ]
    failed = [reason for ok, reason in checks if not ok]
    if not failed:
        return None
    return f"{NAME} (CANN {cann_version}, contract read at ops-transformer {contract.source}) does not support " + \
        "; ".join(failed)


def _listed(values: tuple[int, ...]) -> str:
    return ", ".join(map(str, values)) if len(values) <= 3 else f"{values[0]}, {values[1]}, ..., {values[-1]}"


OUTPUT_ORDER = ("dq", "dk", "dv", "dq_rope", "dk_rope")  # the operator's return order


class VendorSparseFlashAttentionGrad:
    """A `PythonKernel` (judge/tracks/npu/baseline.py) around the torch_npu operator."""

    name = NAME

    def __init__(self, operator: Any, torch_module: Any, *, index_dtype: str = "int32",
                 attention_mode: int = 2, cann_version: str | None = None) -> None:
        self.cann_version = cann_version
        self._op = operator
        self._torch = torch_module
        self._index_dtype = getattr(torch_module, index_dtype)
        self._attention_mode = attention_mode
        self._last: dict[str, Any] = {}

    def unsupported_reason(self, params: dict[str, Any], dtype: str, flags: tuple[str, ...] = ()) -> str | None:
        """Why the operator cannot run this case as the spec does, or None."""
        return unsupported_reason(params, dtype, flags, self.cann_version)

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
                                          attention_mode=int(options.get("vendor_attention_mode", 2)),
                                          cann_version=str(options.get("cann_version", "unknown")))
