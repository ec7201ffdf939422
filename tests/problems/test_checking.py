"""judge/checking.py: the problem-independent error metrics."""

from __future__ import annotations

import math

import pytest
import torch

from judge import checking
from judge.checking import error_stats, nonfinite_reason


def test_metrics_on_hand_made_numbers():
    truth = torch.tensor([1.0, -2.0, 0.001, 0.0], dtype=torch.float64)
    x = torch.tensor([1.1, -2.0, 0.002, 0.5], dtype=torch.float32)
    s = error_stats(x, truth, floor=0.01, rtol=0.0, atol=0.05)
    assert s.count == 4 and s.nan == 0 and s.inf == 0 and s.finite
    assert s.max_abs_err == pytest.approx(0.5)
    # MERE/MARE only over |G| >= 0.01: elements 0 and 1.
    rel0 = abs(float(torch.tensor(1.1, dtype=torch.float32)) - 1.0) / (1.0 + 1e-7)
    assert s.mere == pytest.approx(rel0 / 2)
    assert s.mare == pytest.approx(rel0)
    assert s.within_mixed_tol == pytest.approx(2 / 4)  # -2.0 and 0.002 are within 0.05
    assert s.max_abs_truth == 2.0


def test_nan_and_inf_are_counted_not_spread():
    truth = torch.ones(6, dtype=torch.float64)
    x = torch.tensor([1.0, math.nan, math.inf, -math.inf, 1.25, math.nan])
    s = error_stats(x, truth, floor=0.0, rtol=0.0, atol=0.0)
    assert (s.nan, s.inf) == (2, 2) and not s.finite
    assert s.max_abs_err == 0.25 and s.mere == pytest.approx(0.125) and s.mare == pytest.approx(0.25)
    assert s.within_mixed_tol == pytest.approx(1 / 6)
    assert nonfinite_reason(2, 2) == "2 NaN values and 2 Inf values"
    assert nonfinite_reason(1, 0) == "1 NaN value"


def test_no_element_above_the_floor_gives_zero_mere():
    s = error_stats(torch.ones(3), torch.zeros(3, dtype=torch.float64), floor=1.0, rtol=0.0, atol=0.0)
    assert s.mere == 0.0 and s.mare == 0.0 and s.max_abs_err == 1.0


def test_chunked_equals_whole(monkeypatch):
    gen = torch.Generator().manual_seed(0)
    truth = torch.randn(1000, generator=gen, dtype=torch.float64)
    x = (truth + 1e-3 * torch.randn(1000, generator=gen, dtype=torch.float64)).to(torch.bfloat16)
    whole = error_stats(x, truth, floor=2.0**-8, rtol=2.0**-7, atol=2.0**-7)
    monkeypatch.setattr(checking, "_CPU_CHUNK", 7)
    chunked = error_stats(x, truth, floor=2.0**-8, rtol=2.0**-7, atol=2.0**-7)
    for field in ("count", "nan", "inf", "max_abs_err", "mare", "within_mixed_tol", "max_abs_truth"):
        assert getattr(chunked, field) == getattr(whole, field), field
    assert chunked.mere == pytest.approx(whole.mere, rel=1e-12)


def test_shape_mismatch_is_an_error():
    with pytest.raises(ValueError, match="shape mismatch"):
        error_stats(torch.ones(3), torch.ones(4), floor=0.0, rtol=0.0, atol=0.0)


def test_the_first_nonfinite_element_is_named_and_nan_explained() -> None:
    x = torch.zeros(10)
    x[7] = float("nan")
    x[9] = float("inf")
    s = error_stats(x, torch.zeros(10, dtype=torch.float64), floor=0.0, rtol=0.0, atol=0.0)
    assert s.first_nonfinite == 7 and s.nan == 1 and s.inf == 1
    reason = nonfinite_reason(s.nan, s.inf, first=s.first_nonfinite, count=s.count)
    assert reason.startswith("1 NaN value and 1 Inf value (the first at element 7 of 10)")
    assert "fills every output with NaN" in reason
    clean = error_stats(torch.zeros(3), torch.zeros(3, dtype=torch.float64), floor=0.0, rtol=0.0, atol=0.0)
    assert clean.first_nonfinite is None


def _plain_error_stats(x: torch.Tensor, truth: torch.Tensor, *, floor: float, rtol: float, atol: float):
    """The metrics written out the obvious way, in float64 over the whole tensor."""
    xs, gs = x.reshape(-1).to(torch.float64), truth.reshape(-1).to(torch.float64)
    finite = torch.isfinite(xs)
    err = torch.where(finite, (xs - gs).abs(), torch.zeros_like(xs))
    big = (gs.abs() >= floor) & finite
    rel = (err / (gs.abs() + 1e-7))[big]
    bad = (~finite).nonzero()
    return {
        "nan": int(torch.isnan(xs).sum()), "inf": int(torch.isinf(xs).sum()), "max_abs_err": float(err.max()),
        "mere": float(rel.mean()) if rel.numel() else 0.0, "mare": float(rel.max()) if rel.numel() else 0.0,
        "within_mixed_tol": float(((err <= atol + rtol * gs.abs()) & finite).sum()) / xs.numel(),
        "max_abs_truth": float(gs.abs().max()), "first_nonfinite": int(bad[0, 0]) if bad.numel() else None,
    }


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("spoil", [False, True])
def test_the_metrics_equal_the_plain_formulas(monkeypatch, dtype: torch.dtype, spoil: bool) -> None:
    """Every figure, over several chunks, with and without NaN/Inf in X and with |G| on both sides of the floor."""
    import judge.checking as checking

    monkeypatch.setattr(checking, "_CPU_CHUNK", 1000)
    gen = torch.Generator().manual_seed(7)
    truth = torch.randn(4500, generator=gen, dtype=torch.float64) * 3
    x = (truth + torch.randn(4500, generator=gen, dtype=torch.float64) * 0.01).to(dtype)
    if spoil:
        x[[17, 1200, 3999]] = torch.tensor([float("nan"), float("inf"), -float("inf")], dtype=dtype)
    got = error_stats(x, truth, floor=0.5, rtol=0.003, atol=0.002)
    want = _plain_error_stats(x, truth, floor=0.5, rtol=0.003, atol=0.002)
    for name, value in want.items():
        if isinstance(value, float):
            assert getattr(got, name) == pytest.approx(value, rel=1e-12, abs=0.0), name
        else:
            assert getattr(got, name) == value, name
    assert got.count == 4500 and got.finite is (not spoil)


def test_metrics_of_several_outputs_and_beside_a_thread_are_the_same_bits(monkeypatch) -> None:
    """error_stats_many (X and R against one G) equals error_stats of each; inside `beside` the later
    half of the chunks runs on the given thread and the figures, folded in chunk order, do not move."""
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setattr(checking, "_CPU_CHUNK", 1000)
    gen = torch.Generator().manual_seed(11)
    truth = torch.randn(9500, generator=gen, dtype=torch.float64)
    truth[[3, 7000]] = torch.tensor([float("nan"), float("inf")], dtype=torch.float64)  # G not finite too
    x = (truth + torch.randn(9500, generator=gen, dtype=torch.float64) * 0.01).to(torch.bfloat16)
    x[[17, 5200, 8999]] = torch.tensor([float("nan"), float("inf"), -float("inf")], dtype=torch.bfloat16)
    r = (truth * 1.001).to(torch.bfloat16)
    clean = truth.nan_to_num(posinf=1.0)
    options = dict(floor=0.5, rtol=0.003, atol=0.002)
    for g in (truth, clean):
        alone = [error_stats(x, g, **options), error_stats(r, g, **options)]
        assert checking.error_stats_many([x, r], g, **options) == alone
        ran: list[range] = []
        with ThreadPoolExecutor(1) as pool:

            def run(function, part, ran=ran, pool=pool):  # type: ignore[no-untyped-def]
                ran.append(part)
                return pool.submit(function, part)

            with checking.beside(run):
                assert checking.error_stats_many([x, r], g, **options) == alone
        assert ran == [range(5000, 9500, 1000)]  # the later 5 of 10 chunks


def test_the_largest_finite_magnitude() -> None:
    assert checking.max_abs_finite(torch.tensor([1.0, -3.5, 2.0], dtype=torch.float64)) == 3.5
    assert checking.max_abs_finite(torch.tensor([1.0, float("nan"), -2.0, float("inf")])) == 2.0
    assert checking.max_abs_finite(torch.tensor([float("nan"), -float("inf")])) == 0.0
    assert checking.max_abs_finite(torch.zeros(0)) == 0.0
