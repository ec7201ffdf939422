"""Policy rules of the NPU track; they live with the track (judge/tracks/npu/policy.py)."""

from __future__ import annotations

from judge.tracks.npu.policy import RULES

__all__ = ["RULES"]
