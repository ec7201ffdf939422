"""Switching torch's deterministic algorithms without importing torch's compiler.

`torch.use_deterministic_algorithms` imports `torch._inductor.config` (and with it torch._dynamo)
only to copy the flag into the compiler's settings. The judge never compiles a graph, and that
import costs about half of `import torch` again: measured in this repository's venv (torch 2.13,
`python -X importtime`), 4.7 s of a 10.1 s `import torch` on a loaded host. Every runner child
switched the flag, so every judging paid it once or twice. The flag itself lives in torch's C++
context, and that is what this module sets.

Where torch's function has been replaced (an accelerator's plugin may wrap it to set its own
flags), or the C++ setter is missing, the public function is called as before.
"""

from __future__ import annotations

import torch


def _fast_path() -> bool:
    public = torch.use_deterministic_algorithms
    return getattr(public, "__module__", "") == "torch" and hasattr(torch._C, "_set_deterministic_algorithms")


def set_deterministic(mode: bool, *, warn_only: bool = True) -> None:
    """`torch.use_deterministic_algorithms(mode, warn_only=warn_only)`, for eager code only."""
    if _fast_path():
        torch._C._set_deterministic_algorithms(mode, warn_only=warn_only)
    else:
        torch.use_deterministic_algorithms(mode, warn_only=warn_only)


def prepare_before_seal() -> None:
    """Map now whatever switching the flag later would map: a sealed runner child may map no new
    code (judge/sandbox/seal.py). Nothing to do on the fast path; else the public function is
    called once, leaving the flag as it is, so its imports happen here."""
    if not _fast_path():
        torch.use_deterministic_algorithms(torch.are_deterministic_algorithms_enabled(),
                                           warn_only=torch.is_deterministic_algorithms_warn_only_enabled())
