"""What a judging host offers: limits, isolation and each track's settings (its toolchain's location among them).

The record alone, below the tracks that read it (judge/tracks/__init__.py), so that importing it
imports no track; judge/host.py builds it from the environment and the registered tracks' settings.
Every module imports it from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from judge.limits import CPU_LIMITS, Limits
from judge.track_settings.base import TrackSettings

S = TypeVar("S", bound=TrackSettings)


@dataclass(frozen=True)
class HostConfig:
    work_root: Path  # runs get a fresh folder below this one
    limits: Limits = CPU_LIMITS
    sandbox_mode: str = "auto"  # strict | auto | off (judge/sandbox/select.py)
    # A memory cgroup per runner child (judge/sandbox/memcg.py): auto (where the host allows one),
    # required (else every run is IE with the reason), off.
    memory_cgroup: str = "auto"
    cache_dir: Path | None = None  # oracle results and baseline builds; None disables caching
    # Bounds of the oracle cache (judge/oracle_cache.py); None: unbounded, max bytes 0: no oracle cache.
    oracle_cache_max_bytes: int | None = None
    oracle_cache_max_age_s: float | None = None
    problems_dir: Path | None = None  # None: the repository's problems/
    reference_dir: Path | None = None  # None: the repository's reference_kernels/
    # The tracks' settings records (each track's `Track.settings`, judge/track_settings/base.py), read with
    # `track_settings`; a track without one here has its declared defaults. A toolchain's location is its
    # track's setting (docs/architecture.md, "The seams": nothing but the track names its backend).
    settings: tuple[TrackSettings, ...] = ()
    profile: bool = True  # the profiled pass after timing (judge/profiling/); OPJUDGE_PROFILE=off skips it
    # Switches for tests and benchmarks only: the policy check (the exploit corpus is judged without it
    # too), the call guard (bench/timing_stability.py measures what it costs), a run's folder kept.
    policy_check: bool = True
    call_guard: bool = True
    keep_workdir: bool = False

    def track_settings(self, kind: type[S]) -> S:
        """This host's settings record of one track (its defaults where none was given)."""
        for record in self.settings:
            if type(record) is kind:
                return record
        return kind()
