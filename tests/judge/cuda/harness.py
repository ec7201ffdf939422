"""Call a kernel library on host memory and grade it with the problem's own oracle and pass rule.

Used with libraries built through the CPU shim: the kernel sees host pointers and a NULL
stream, exactly the ABI's fields otherwise. Outputs are NaN-poisoned and the workspace is
garbage, as the judge does (docs/rules.md, stage 3).
"""

from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from judge.abi import DTYPE_CODES, kernel_args_struct, pack_args
from judge.problem import Case, Problem
from judge.results import OutputCheck


@dataclass
class HostCall:
    rc: int
    outputs: dict[str, torch.Tensor]
    inputs_unchanged: bool
    checks: dict[str, OutputCheck]

    @property
    def passed(self) -> bool:
        return self.rc == 0 and self.inputs_unchanged and all(c.passed for c in self.checks.values())

    def failures(self) -> str:
        return "; ".join(c.reason for c in self.checks.values() if not c.passed) or f"rc={self.rc}"


def call_on_host(library: Path, problem: Problem, case: Case, seed: int) -> HostCall:
    """One kernel_run on freshly generated inputs; its outputs checked against G (and R)."""
    module = problem.module
    lib = ctypes.CDLL(str(library))
    lib.kernel_run.restype = ctypes.c_int
    lib.kernel_run.argtypes = [ctypes.c_void_p]
    inputs = module.make_inputs(case, seed)
    tensors = {k: v for k, v in inputs.items() if isinstance(v, torch.Tensor)}
    originals = {k: t.clone() for k, t in tensors.items()}
    outputs = {
        name: torch.full(shape, math.nan, dtype=dtype) if dtype.is_floating_point else torch.zeros(shape, dtype=dtype)
        for name, (shape, dtype) in module.output_specs(case, inputs).items()
    }
    pointer_names = {t.name for t in (*problem.inputs, *problem.outputs)}
    pointers: dict[str, int | None] = dict.fromkeys(pointer_names)
    pointers.update({k: t.data_ptr() for k, t in (*tensors.items(), *outputs.items())})
    pointers.update(workspace=None, stream=None)
    scalars: dict[str, Any] = dict(case.params)
    scalars.update({k: v for k, v in inputs.items() if isinstance(v, int | float)})
    scalars.update(dtype=DTYPE_CODES[case.dtype], workspace_bytes=0)
    struct = kernel_args_struct(problem.header)
    args = pack_args(struct, pointers=pointers, scalars=scalars)
    workspace = None
    if hasattr(lib, "kernel_workspace_bytes"):
        lib.kernel_workspace_bytes.restype = ctypes.c_int64
        lib.kernel_workspace_bytes.argtypes = [ctypes.c_void_p]
        # As the runner asks it: the sizes only, every pointer NULL (judge/runner/child/main.py).
        blank = pack_args(struct, pointers=dict.fromkeys(pointers), scalars=scalars)
        wanted = int(lib.kernel_workspace_bytes(ctypes.byref(blank)))
        if wanted:
            workspace = torch.randint(0, 256, (wanted,), dtype=torch.uint8)  # garbage, as the judge gives
            args.workspace, args.workspace_bytes = workspace.data_ptr(), wanted
    rc = int(lib.kernel_run(ctypes.byref(args)))
    unchanged = all(torch.equal(originals[k], t) for k, t in tensors.items())
    checks: dict[str, OutputCheck] = {}
    if rc == 0:
        truth = module.oracle(case, inputs)
        reference = module.reference(case, inputs)
        checks = module.check(case, outputs, truth, reference)
    return HostCall(rc=rc, outputs=outputs, inputs_unchanged=unchanged, checks=checks)


def small_case(problem: Problem, name: str, dtype: str, **params: Any) -> Case:
    """A test-only case of `problem` (sizes small enough for the CPU shim)."""
    from judge.backends import CaseSet

    flags = tuple(params.pop("flags", ()))
    return Case(name=name, case_set=CaseSet.TESTS, dtype=dtype, params=params, seed=0, flags=flags)
