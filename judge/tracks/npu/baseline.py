"""The seam for a baseline that is not a C library: a vendor operator called through Python.

docs/rules.md times the problem's baseline side by side with the submission. On the NPU the
natural speed baseline is the vendor's own operator (for sparse_flash_attention_grad:
`torch_npu.npu_sparse_flash_attention_grad`), which exists only as a Python call. A problem
opts in by shipping `reference_kernels/<problem>/npu/vendor_baseline.py` with a
`make_baseline(options) -> PythonKernel | None` function; nothing here names a problem.

How the runner child uses a `PythonKernel` in place of the baseline library (for the lead's
runner; see docs/npu-worker.md, "Baselines"):
1. once per run: `kernel = python_baseline(reference_dir, problem_slug, runtime_options)`;
   None (no module, no torch_npu, or no such operator) means "time the starter kernel";
2. per case: `reason = kernel.unsupported_reason(case.params, case.dtype, case.flags)`; a reason
   means the starter kernel is the baseline for that case, and the report says which timed it
   (judge/baseline_trust.py asks the module's own `unsupported_reason` in the worker);
3. per call, prepared exactly like a library call (fresh inputs at fresh addresses, flush):
   `prepared = kernel.prepare(device_inputs, scalars)` untimed, then
   `runtime.time_call(lambda: kernel.run(prepared))`, then the outputs `kernel.outputs()`
   (device tensors by output name) go through the same checks as a library's outputs.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any, Protocol

MODULE_NAME = "vendor_baseline.py"


class PythonKernel(Protocol):
    """A baseline called through Python on the runtime's device and stream."""

    name: str  # e.g. "torch_npu.npu_sparse_flash_attention_grad"

    def unsupported_reason(self, params: dict[str, Any], dtype: str, flags: tuple[str, ...] = ()) -> str | None:
        """Why this case (its sizes, dtype and flags) is outside what the operator computes, or None."""
        ...

    def prepare(self, inputs: dict[str, Any], scalars: dict[str, Any]) -> dict[str, Any]:
        """Untimed: arrange device inputs (by ABI name) and attributes for `run`."""
        ...

    def run(self, prepared: dict[str, Any]) -> int:
        """Timed: enqueue the operator on the current stream; 0 on success."""
        ...

    def outputs(self) -> dict[str, Any]:
        """The device tensors the last `run` produced, by output name (dq, dk, ...)."""
        ...


def python_baseline(reference_dir: Path, problem: str, options: dict[str, Any]) -> PythonKernel | None:
    """The problem's vendor baseline for this host, or None when it has none or cannot make one here."""
    path = reference_dir / problem / "npu" / MODULE_NAME
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location(f"opjudge_vendor_baseline_{problem}", path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    kernel: PythonKernel | None = module.make_baseline(options)
    return kernel
