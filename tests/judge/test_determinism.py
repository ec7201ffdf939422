"""judge/determinism.py: the flag torch's deterministic algorithms read, set without torch's compiler."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys, torch
from judge.determinism import prepare_before_seal, set_deterministic
assert not torch.are_deterministic_algorithms_enabled()
set_deterministic(True, warn_only=True)
assert torch.are_deterministic_algorithms_enabled() and torch.is_deterministic_algorithms_warn_only_enabled()
prepare_before_seal()  # leaves the flag as it is
assert torch.are_deterministic_algorithms_enabled()
set_deterministic(False, warn_only=False)
assert not torch.are_deterministic_algorithms_enabled()
print("inductor imported:", "torch._inductor.config" in sys.modules)
"""


def test_the_flag_is_set_without_importing_torchs_compiler(repo_root) -> None:
    # A fresh interpreter: this test process may have imported torch._inductor for another test.
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=repo_root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "inductor imported: False" in done.stdout


def test_a_replaced_public_switch_is_still_called(monkeypatch) -> None:
    """A plugin's wrapper of torch.use_deterministic_algorithms (its own flags) is not bypassed."""
    import torch

    from judge import determinism

    calls = []

    def wrapper(mode: bool, *, warn_only: bool = False) -> None:
        calls.append((mode, warn_only))

    wrapper.__module__ = "torch_npu.plugin"
    monkeypatch.setattr(torch, "use_deterministic_algorithms", wrapper)
    determinism.set_deterministic(True, warn_only=True)
    determinism.prepare_before_seal()
    assert calls == [(True, True), (torch.are_deterministic_algorithms_enabled(),
                                    torch.is_deterministic_algorithms_warn_only_enabled())]
