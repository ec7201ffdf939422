"""The CPU track's settings (base.py: how a setting is declared)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from judge.track_settings.base import TrackSettings, setting


@dataclass(frozen=True)
class CpuSettings(TrackSettings):
    track: ClassVar[str] = "cpu"

    # Not a competition's setting: calls after the line flush ran 1-2 % faster than after the buffer
    # (docs/benchmarks.md, "The cache flush"), so one host judges a whole competition with one method.
    flush: str = setting(
        "buffer", env="OPJUDGE_CPU_FLUSH", choices=("buffer", "lines"),
        meaning="the cache flush before each call: a buffer of twice the LLC, or the call's own lines evicted")


SETTINGS = CpuSettings
