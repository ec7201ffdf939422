"""Fixtures for the problem-package tests: the packages, ad-hoc cases, and a plain dense
implementation of sparse FA (masked attention under torch.autograd) to check the oracle against.

The dense code is written straight from the spec's definitions with Python loops for the mask,
sharing nothing with problem.py, so a mistake in one does not hide in the other.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from judge.backends import CaseSet
from judge.problem import Case, Problem, ProblemModule, load_problem

SFAG = "sparse_flash_attention_grad"


@pytest.fixture(scope="session")
def sfag_problem() -> Problem:
    return load_problem(SFAG)


@pytest.fixture(scope="session")
def sfag(sfag_problem: Problem) -> ProblemModule:
    return sfag_problem.module


@pytest.fixture(scope="session")
def amr_problem() -> Problem:
    return load_problem("add_mul_relu")


def make_case(dtype: str = "float32", flags: tuple[str, ...] = (), name: str = "adhoc", **params: Any) -> Case:
    """A case outside the package, with defaults for the sizes not given."""
    full = dict(B=1, S1=8, S2=16, N1=2, N2=1, D=8, Dr=4, K=4, block_size=2, sparse_mode=0)
    full.update(params)
    return Case(name=name, case_set=CaseSet.TESTS, dtype=dtype, params=full, seed=0, flags=flags)


@pytest.fixture(scope="session")
def case_factory() -> Callable[..., Case]:
    return make_case


def thr(s: int, p: dict[str, Any]) -> int:
    if p["sparse_mode"] == 0:
        return p["S2"]
    return min(max(p["S2"] - p["S1"] + s + 1, 0), p["S2"])


def dense_mask(p: dict[str, Any], indices: torch.Tensor) -> torch.Tensor:
    """Visible[b, n2, s, t], by the spec's "Which keys a query token sees", one row at a time."""
    mask = torch.zeros(p["B"], p["N2"], p["S1"], p["S2"], dtype=torch.bool)
    bs = p["block_size"]
    for b in range(p["B"]):
        for s in range(p["S1"]):
            for n2 in range(p["N2"]):
                for block in indices[b, s, n2].tolist():
                    if block == -1:  # the list ends at the first -1; what follows may be junk
                        break
                    for r in range(bs):
                        if block * bs + r < thr(s, p):
                            mask[b, n2, s, block * bs + r] = True
    return mask


def _heads(t: torch.Tensor, p: dict[str, Any]) -> torch.Tensor:
    # [B, S2, N2, X] -> [B, N1, S2, X]: query head h uses KV head h // G.
    g = p["N1"] // p["N2"]
    return t.permute(0, 2, 1, 3).repeat_interleave(g, dim=1)


def dense_forward(p: dict[str, Any], inputs: dict[str, Any], mask: torch.Tensor, scale: float):
    """float64 dense masked attention; returns (out [B,S1,N1,D], max, sum [B,N2,S1,G], graph leaves)."""
    f64 = torch.float64
    q = _cat(inputs["q"], inputs["q_rope"]).to(f64).requires_grad_()
    k = _cat(inputs["k"], inputs["k_rope"]).to(f64).requires_grad_()
    v = inputs["v"].to(f64).requires_grad_()
    g = p["N1"] // p["N2"]
    z = scale * (q.permute(0, 2, 1, 3) @ _heads(k, p).transpose(-1, -2))  # [B, N1, S1, S2]
    visible = mask.repeat_interleave(g, dim=1)
    m = torch.where(visible, z, -math.inf).amax(dim=-1)
    m = torch.where(visible.any(dim=-1), m, 0.0)
    e = torch.where(visible, torch.exp(z - m.unsqueeze(-1)), 0.0)
    total = e.sum(dim=-1)
    probs = e / torch.where(total > 0, total, 1.0).unsqueeze(-1)
    out = (probs @ _heads(v, p)).permute(0, 2, 1, 3)  # [B, S1, N1, D]
    stat = (p["B"], p["N2"], g, p["S1"])
    return out, m.reshape(stat).transpose(2, 3), total.reshape(stat).transpose(2, 3), (q, k, v)


def dense_autograd(case: Case, inputs: dict[str, Any]) -> tuple[dict[str, torch.Tensor], tuple]:
    """Gradients of the dense forward by autograd (float64), and the forward's (out, max, sum)."""
    p = case.params
    mask = dense_mask(p, inputs["sparse_indices"])
    out, m, total, (q, k, v) = dense_forward(p, inputs, mask, inputs["scale"])
    out.backward(inputs["d_out"].to(torch.float64))
    d = p["D"]
    grads = {"dq": q.grad[..., :d], "dk": k.grad[..., :d], "dv": v.grad}
    if p["Dr"]:
        grads["dq_rope"] = q.grad[..., d:]
        grads["dk_rope"] = k.grad[..., d:]
    return grads, (out.detach(), m.detach(), total.detach())


def dense_reference(case: Case, inputs: dict[str, Any], dtype: torch.dtype) -> dict[str, torch.Tensor]:
    """The spec's recipe for R, densely and without autograd: float32, P and dS rounded to T."""
    p = case.params
    f32 = torch.float32
    g = p["N1"] // p["N2"]
    scale = inputs["scale"]
    visible = dense_mask(p, inputs["sparse_indices"]).repeat_interleave(g, dim=1)
    q = _cat(inputs["q"], inputs["q_rope"]).to(f32).permute(0, 2, 1, 3)  # [B, N1, S1, Dt]
    k = _heads(_cat(inputs["k"], inputs["k_rope"]).to(f32), p)  # [B, N1, S2, Dt]
    v = _heads(inputs["v"].to(f32), p)
    d_out = inputs["d_out"].to(f32).permute(0, 2, 1, 3)
    out = inputs["out"].to(f32).permute(0, 2, 1, 3)
    m = inputs["softmax_max"].to(f32).transpose(2, 3).reshape(p["B"], p["N1"], p["S1"], 1)
    total = inputs["softmax_sum"].to(f32).transpose(2, 3).reshape(p["B"], p["N1"], p["S1"], 1)
    z = (q @ k.transpose(-1, -2)) * scale
    probs = torch.where(visible, torch.exp(z - m) / total, 0.0)
    delta = (d_out * out).sum(dim=-1, keepdim=True)
    ds = probs * (d_out @ v.transpose(-1, -2) - delta)
    probs, ds = probs.to(dtype).to(f32), ds.to(dtype).to(f32)
    dq = (ds @ k) * scale  # [B, N1, S1, Dt]
    dk_heads = ds.transpose(-1, -2) @ q  # [B, N1, S2, Dt], summed over the G heads below
    dv_heads = probs.transpose(-1, -2) @ d_out
    fold = (p["B"], p["N2"], g, p["S2"], -1)
    dk = dk_heads.reshape(fold).sum(dim=2).permute(0, 2, 1, 3) * scale
    dv = dv_heads.reshape(fold).sum(dim=2).permute(0, 2, 1, 3)
    dq = dq.permute(0, 2, 1, 3)
    d = p["D"]
    result = {"dq": dq[..., :d], "dk": dk[..., :d], "dv": dv}
    if p["Dr"]:
        result["dq_rope"] = dq[..., d:]
        result["dk_rope"] = dk[..., d:]
    return {name: t.to(dtype) for name, t in result.items()}


def _cat(main: torch.Tensor, rope: torch.Tensor | None) -> torch.Tensor:
    return main if rope is None else torch.cat([main, rope], dim=-1)


@pytest.fixture(scope="session")
def dense() -> SimpleNamespace:
    """The dense helpers above, for test modules (conftest is not importable by name)."""
    return SimpleNamespace(mask=dense_mask, autograd=dense_autograd, reference=dense_reference, thr=thr)
