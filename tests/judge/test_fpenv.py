"""The runner puts the floating-point environment back after a kernel's call."""

from __future__ import annotations

import ctypes

import pytest
import torch

from judge.runner.child.fpenv import FloatingPointGuard

FE_TOWARDZERO = {"x86_64": 0xC00, "aarch64": 0xC00000}


def test_a_rounding_mode_left_behind_is_put_back_and_the_next_inputs_match() -> None:
    import platform

    toward_zero = FE_TOWARDZERO.get(platform.machine())
    if toward_zero is None:
        pytest.skip(f"no rounding-mode constant known for {platform.machine()}")
    guard = FloatingPointGuard()
    libm = ctypes.CDLL("libm.so.6")
    nearest = guard.rounding_mode()
    torch.manual_seed(7)
    expected = torch.randn(4096)
    try:
        assert libm.fesetround(toward_zero) == 0
        assert guard.rounding_mode() == toward_zero
        torch.manual_seed(7)
        assert not torch.equal(torch.randn(4096), expected)  # what the red team's kernel caused
        guard.restore()
        assert guard.rounding_mode() == nearest
        torch.manual_seed(7)
        assert torch.equal(torch.randn(4096), expected)
    finally:
        libm.fesetround(nearest)
