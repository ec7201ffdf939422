"""add_mul_relu's ulp from the float64 exponent field gives frexp and ldexp's figures exactly."""

from __future__ import annotations

import pytest
import torch

from judge.problem import load_problem

_PRECISION = {"float32": 24, "float16": 11, "bfloat16": 8}


def _by_frexp(values: torch.Tensor, precision: int, smallest: float) -> torch.Tensor:
    _, exponent = torch.frexp(values.to(torch.float64).abs())
    return torch.ldexp(torch.ones_like(values, dtype=torch.float64), exponent - precision).clamp_min(smallest)


@pytest.mark.parametrize("dtype_name", ["float32", "float16", "bfloat16"])
def test_ulp_matches_frexp_everywhere(dtype_name: str) -> None:
    module = load_problem("add_mul_relu").module
    dtype = getattr(torch, dtype_name)
    info = torch.finfo(dtype)
    smallest = float(info.smallest_normal) * float(info.eps)  # the smallest subnormal
    gen = torch.Generator().manual_seed(3)
    spread = torch.cat([torch.randn(1 << 16, generator=gen) * scale for scale in (1e-30, 1e-6, 1.0, 1e3, 1e30)])
    edges = torch.tensor([0.0, -0.0, smallest, -smallest, 2 * smallest, float(info.tiny), 0.5, 1.0, -1.0, 2.0,
                          float(info.max), -float(info.max), float("inf"), float("-inf"), float("nan")])
    values = torch.cat([spread.to(dtype), edges.to(dtype)]).to(torch.float64)
    got = module.ulp(values, dtype_name)
    want = _by_frexp(values, _PRECISION[dtype_name], smallest)
    assert torch.equal(got, want), values[got != want][:5]
    one = torch.tensor([1.0], dtype=torch.float64)
    assert float(module.ulp(one, dtype_name)) == 2.0 ** (1 - _PRECISION[dtype_name])  # [1, 2): 2^(1 - p)
