"""sparse_flash_attention_grad: generator, oracle, reference and pass rule.

Implements `judge.problem.ProblemModule` for the problem its statement (statement.md) defines.
The judge loads this file as the package of its folder; its arithmetic lives in the sibling
modules: `layout` (sizes, rows and key blocks), `indices` (the sparse_indices generator) and
`attention` (forward, backward). Every file of the folder is hashed into the problem's
definition_hash, which keys the oracle cache.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from functools import cache
from pathlib import Path
from typing import Any

import torch

from judge.checking import error_stats_many, fmt, max_abs_finite, nonfinite_reason
from judge.problem import Case
from judge.results import OutputCheck

from . import attention, indices, layout
from .attention import backward, forward
from .indices import CONTRACT_INDICES, FLAGS, RAGGED_TOPK, VALUE_IS_KEY, draw_indices
from .layout import Sizes, count_pairs

# The names the problem's users (tests, benchmarks) reach through this module.
__all__ = ["CONTRACT_INDICES", "DTYPES", "FLAGS", "RAGGED_TOPK", "ROPE_NAMES", "VALUE_IS_KEY", "Sizes", "attention",
           "backward", "check", "count_pairs", "draw_indices", "forward", "indices", "layout", "make_inputs",
           "oracle", "output_specs", "reference", "sizes", "work"]

_HERE = Path(__file__).resolve().parent

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
# Inputs drawn from N(0, 1), in the order the spec lists them (the draw order fixes the bytes).
NORMAL_INPUTS = ("q", "q_rope", "k", "k_rope", "v", "d_out")
ROPE_NAMES = ("q_rope", "k_rope", "dq_rope", "dk_rope")


@cache
def _tolerance() -> dict[str, Any]:
    # problem.toml is the one source of the pass rule's numbers.
    return tomllib.loads((_HERE / "problem.toml").read_text())["tolerance"]


def sizes(case: Case) -> Sizes:
    """The case's sizes and attributes."""
    return Sizes.from_params(case.params)


def _placed_on(device: torch.device | str) -> Any:
    """New tensors made on `device`, so the same code runs on the CPU or on a device track's GPU.

    The device context is a Python-level dispatch mode that costs every torch call a little:
    entered only off the CPU, where factory functions need it.
    """
    return torch.device(device) if torch.device(device).type != "cpu" else nullcontext()


@contextmanager
def _single_thread_on(device: torch.device | str) -> Iterator[None]:
    """One CPU thread (bit-for-bit determinism: one thread fixes every reduction order), and new
    tensors made on `device`."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with _placed_on(device):
            yield
    finally:
        torch.set_num_threads(previous)


def _device_of(inputs: dict[str, Any]) -> torch.device:
    return inputs["q"].device


def make_inputs(case: Case, seed: int, device: str = "cpu") -> dict[str, Any]:
    """Every input of the ABI for `case`, drawn with `seed` (spec: "How the judge makes a case").

    On `device` (torch's generator of that device: the bytes differ from the CPU's, but are the
    same on every call with the same device, case and seed).
    """
    sz = sizes(case)
    unknown = set(case.flags) - FLAGS
    if unknown:
        raise ValueError(f"case {case.name}: unknown flags {sorted(unknown)} (known: {sorted(FLAGS)})")
    dtype = DTYPES[case.dtype]
    shapes = {
        "q": (sz.B, sz.S1, sz.N1, sz.D),
        "q_rope": (sz.B, sz.S1, sz.N1, sz.Dr),
        "k": (sz.B, sz.S2, sz.N2, sz.D),
        "k_rope": (sz.B, sz.S2, sz.N2, sz.Dr),
        "v": (sz.B, sz.S2, sz.N2, sz.D),
        "d_out": (sz.B, sz.S1, sz.N1, sz.D),
    }
    with _single_thread_on(device):
        gen = torch.Generator(device=device).manual_seed(int(seed))
        inputs: dict[str, Any] = {}
        for name in NORMAL_INPUTS:
            if name in ROPE_NAMES and sz.Dr == 0:
                inputs[name] = None
                continue
            inputs[name] = torch.randn(shapes[name], generator=gen).to(dtype)
        if VALUE_IS_KEY in case.flags:  # v is still drawn, so d_out and the indices stay the unflagged ones
            inputs["v"] = inputs["k"].clone()
        indices = draw_indices(sz, gen, ragged=RAGGED_TOPK in case.flags, contract=CONTRACT_INDICES in case.flags)
        out, softmax_max, softmax_sum = forward(sz, inputs, indices)
    inputs["sparse_indices"] = indices
    inputs["out"] = out.to(dtype)
    inputs["softmax_max"] = softmax_max
    inputs["softmax_sum"] = softmax_sum
    inputs["scale"] = sz.scale
    return inputs


def output_specs(case: Case, inputs: dict[str, Any]) -> dict[str, tuple[tuple[int, ...], Any]]:
    """dq, dq_rope, dk, dk_rope, dv: each the shape and dtype of its input (rope ones absent when Dr = 0)."""
    sz = sizes(case)
    dtype = DTYPES[case.dtype]
    specs = {
        "dq": ((sz.B, sz.S1, sz.N1, sz.D), dtype),
        "dq_rope": ((sz.B, sz.S1, sz.N1, sz.Dr), dtype),
        "dk": ((sz.B, sz.S2, sz.N2, sz.D), dtype),
        "dk_rope": ((sz.B, sz.S2, sz.N2, sz.Dr), dtype),
        "dv": ((sz.B, sz.S2, sz.N2, sz.D), dtype),
    }
    if sz.Dr == 0:
        del specs["dq_rope"], specs["dk_rope"]
    return specs


def oracle(case: Case, inputs: dict[str, Any]) -> dict[str, torch.Tensor]:
    """G: every output in float64, from the very inputs the kernel got.

    Runs on the inputs' device, with the caller's torch threads on the CPU: the judge gives it
    one thread on shared hosts (there two-thread kernels were up to 20x slower whenever the
    other core was busy, docs/benchmarks.md "Oracle"), and every core on NPU hosts, whose
    benchmark cases would take minutes on one. The pass rule does not need G's last bits.
    """
    with _placed_on(_device_of(inputs)):
        return backward(sizes(case), inputs, mode="oracle")


def reference(case: Case, inputs: dict[str, Any]) -> dict[str, torch.Tensor] | None:
    """R for float16/bfloat16 cases (the spec's float32 recipe, rounded to T); None for float32."""
    if case.dtype == "float32":
        return None
    with _placed_on(_device_of(inputs)):
        return backward(sizes(case), inputs, mode="reference", out_dtype=DTYPES[case.dtype])


def mere_floor(tol: dict[str, Any], truth: torch.Tensor) -> float:
    """|G| below this is left out of MERE (docs/rules.md, "Pass rule"): the dtype's floor, times
    max(1, max|G|) where the dtype's tolerance says `mere_floor_relative` (float32: the output's own
    scale, so elements far below an output's maximum, whose relative error is float32 rounding of
    much larger terms, do not decide MERE)."""
    floor = float(tol["mere_floor"])
    if tol.get("mere_floor_relative", False):
        floor *= max(1.0, max_abs_finite(truth))
    return floor


def check(
    case: Case,
    outputs: dict[str, Any],
    oracle: dict[str, Any],
    reference: dict[str, Any] | None,
) -> dict[str, OutputCheck]:
    """The spec's pass rule for each output X (keys of `oracle`), with its metrics for the report."""
    tol = _tolerance()[case.dtype]
    results = {}
    for name, truth in oracle.items():
        x = outputs[name]
        floor = mere_floor(tol, truth)
        if case.dtype != "float32" and reference is None:
            raise ValueError(f"{case.dtype} case {case.name} needs the reference R")
        # X and R against G in one pass over G (judge/checking.py): a check is on the judge's clock.
        compared = [x] if case.dtype == "float32" else [x, reference[name]]  # type: ignore[index]
        stats, *rest = error_stats_many(compared, truth, floor=floor, rtol=tol["mixed_tol"], atol=tol["mixed_tol"])
        if case.dtype == "float32":
            allowed_abs = tol["abs_factor"] * max(1.0, stats.max_abs_truth)
            allowed_mere = tol["mere"]
        else:
            ref = rest[0]
            allowed_abs = tol["ref_factor"] * ref.max_abs_err + tol["atol"]
            allowed_mere = tol["mere_ref_factor"] * ref.mere + tol["mere_slack"]
        reasons = []
        if not stats.finite:
            reasons.append(nonfinite_reason(stats.nan, stats.inf, first=stats.first_nonfinite, count=stats.count))
        if stats.max_abs_err > allowed_abs:
            reasons.append(f"max |X-G| = {fmt(stats.max_abs_err)} exceeds {fmt(allowed_abs)}")
        if stats.mere > allowed_mere:
            reasons.append(f"MERE = {fmt(stats.mere)} exceeds {fmt(allowed_mere)}")
        results[name] = OutputCheck(
            passed=not reasons,
            max_abs_err=stats.max_abs_err,
            mere=stats.mere,
            mare=stats.mare,
            within_mixed_tol=stats.within_mixed_tol,
            allowed_abs_err=allowed_abs,
            allowed_mere=allowed_mere,
            reason=f"{name}: {'; '.join(reasons)}" if reasons else "",
            mere_floor=floor,
        )
    return results


def work(case: Case, inputs: dict[str, Any]) -> tuple[float, float]:
    """(flops, least bytes): P * (6*(D+Dr) + 4*D) from the actual indices; inputs read, outputs written once.

    P counts the pairs of the generated indices, so ragged and causal cases get their true work.
    """
    sz = sizes(case)
    with _single_thread_on(inputs["sparse_indices"].device):
        pairs = count_pairs(sz, inputs["sparse_indices"])
    flops = float(pairs) * (6 * (sz.D + sz.Dr) + 4 * sz.D)
    read = sum(t.numel() * t.element_size() for t in inputs.values() if isinstance(t, torch.Tensor))
    written = sum(
        math.prod(shape) * torch.empty((), dtype=dtype).element_size()
        for shape, dtype in output_specs(case, inputs).values()
    )
    return flops, float(read + written)
