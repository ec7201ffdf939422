"""add_mul_relu: y = max((x + 1) * 2, 0), the smoke problem (issue 2, item 2).

Implements `judge.problem.ProblemModule`. The pass rule: every element of y within 1 ulp of the
dtype of the exactly rounded value, and no NaN or Inf.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import torch

from judge.checking import chunk_elements, error_stats, fmt, nonfinite_reason
from judge.problem import Case
from judge.results import OutputCheck

_HERE = Path(__file__).resolve().parent

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
# Significand bits (with the implicit one) and the smallest subnormal, which is the ulp at 0.
_PRECISION = {"float32": (24, 2.0**-149), "float16": (11, 2.0**-24), "bfloat16": (8, 2.0**-133)}


@cache
def _tolerance() -> dict[str, Any]:
    return tomllib.loads((_HERE / "problem.toml").read_text())["tolerance"]


@contextmanager
def _single_thread() -> Iterator[None]:
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def make_inputs(case: Case, seed: int, device: str = "cpu") -> dict[str, Any]:
    """x [n]: N(0, 4) rounded to the dtype, so about a third of y is clipped to 0 by the relu.

    On `device`, with that device's generator (same bytes for the same device, case and seed).
    """
    with _single_thread():
        gen = torch.Generator(device=device).manual_seed(int(seed))
        x = torch.randn(int(case.params["n"]), generator=gen, device=device) * 2.0
    return {"x": x.to(DTYPES[case.dtype])}


def output_specs(case: Case, inputs: dict[str, Any]) -> dict[str, tuple[tuple[int, ...], Any]]:
    """y: same shape and dtype as x."""
    return {"y": ((int(case.params["n"]),), DTYPES[case.dtype])}


def oracle(case: Case, inputs: dict[str, Any]) -> dict[str, torch.Tensor]:
    """G in float64 (exact for every input whose x + 1 fits in 53 bits, i.e. all but tiny |x|)."""
    # In place on the one float64 copy: the same operations in the same order, a third of the time
    # (each new 8-bytes-per-element temporary costs more than the arithmetic; a check runs between
    # timed calls).
    return {"y": inputs["x"].to(torch.float64, copy=True).add_(1.0).mul_(2.0).clamp_min_(0.0)}


def reference(case: Case, inputs: dict[str, Any]) -> None:
    """No reference: the pass rule compares with the exactly rounded value directly."""
    return None


def ulp(values: torch.Tensor, dtype_name: str) -> torch.Tensor:
    """The spacing of the dtype's numbers at |values|: 2^(e - precision) for |v| in [2^(e-1), 2^e),
    at least the dtype's smallest subnormal. At 0 (and Inf, NaN) e is 0, as `torch.frexp` has it
    there, so the spacing is 2^-precision: a zero is allowed that much.

    From the float64 exponent field, not frexp and ldexp (the same figures, a third of the time:
    a check runs between timed calls). Every value of the dtype is a normal float64, so the field
    is its binade's exponent plus 1023."""
    precision, smallest = _PRECISION[dtype_name]
    field = values.to(torch.float64).view(torch.int64).bitwise_right_shift(52).bitwise_and_(0x7FF)
    field = torch.where((field == 0) | (field == 0x7FF), 1022, field)  # 0, Inf, NaN: e = 0
    # e - precision, biased: (field - 1023 + 1) - precision + 1023; clamped to a normal float64's field
    spacing = field.add_(1 - precision).clamp_(1, 0x7FE).bitwise_left_shift_(52).view(torch.float64)
    return spacing.clamp_min_(smallest)


def check(
    case: Case, outputs: dict[str, Any], oracle: dict[str, Any], reference: dict[str, Any] | None
) -> dict[str, OutputCheck]:
    """y passes when finite and within 1 ulp (of the dtype) of the exactly rounded value everywhere."""
    tol = _tolerance()[case.dtype]
    x = outputs["y"].reshape(-1)
    truth = oracle["y"].reshape(-1)
    stats = error_stats(x, truth, floor=tol["mere_floor"], rtol=tol["mixed_tol"], atol=tol["mixed_tol"])
    reasons = []
    if not stats.finite:
        reasons.append(nonfinite_reason(stats.nan, stats.inf, first=stats.first_nonfinite, count=stats.count))
    bad, worst, worst_score, allowed = 0, 0, -1.0, 0.0
    # In chunks whose float64 temporaries stay in cache: a check runs between timed calls.
    step = chunk_elements(x)
    for start in range(0, x.numel(), step):
        exact = truth[start : start + step].to(DTYPES[case.dtype]).to(torch.float64)  # the exactly rounded value
        bound = ulp(exact, case.dtype).mul_(tol["ulps"])
        allowed = max(allowed, float(bound.max()))
        diff = (x[start : start + step].to(torch.float64) - exact).abs_()
        off = diff > bound  # False for NaN, which is counted above
        count = int(off.sum())
        if count:
            bad += count
            score = torch.where(off, diff.div_(bound), 0.0)
            index = int(score.argmax())
            if float(score[index]) > worst_score:  # the first of the worst, as over the whole output
                worst_score, worst = float(score[index]), start + index
    if bad:
        exact_worst = float(truth[worst].to(DTYPES[case.dtype]))
        reasons.append(
            f"{bad} element{'s' if bad != 1 else ''} off by more than {fmt(tol['ulps'])} ulp "
            f"(worst at index {worst}: got {fmt(float(x[worst]))}, want {fmt(exact_worst)})"
        )
    precision, _ = _PRECISION[case.dtype]
    return {
        "y": OutputCheck(
            passed=not reasons,
            max_abs_err=stats.max_abs_err,
            mere=stats.mere,
            mare=stats.mare,
            within_mixed_tol=stats.within_mixed_tol,
            allowed_abs_err=allowed,
            # Implied by the ulp rule for normal values (1 ulp plus the half ulp of rounding G); not checked.
            allowed_mere=1.5 * tol["ulps"] * 2.0 ** (1 - precision),
            reason=f"y: {'; '.join(reasons)}" if reasons else "",
        )
    }


def work(case: Case, inputs: dict[str, Any]) -> tuple[float, float]:
    """(3 flops per element, x read once + y written once)."""
    n = int(case.params["n"])
    size = torch.empty((), dtype=DTYPES[case.dtype]).element_size()
    return 3.0 * n, 2.0 * n * size
