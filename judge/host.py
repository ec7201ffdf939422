"""What a judging host offers: limits, isolation and each track's settings (its toolchain's location among them).

judge/ never reads the environment: the CLI and the workers build a `HostConfig` with
`host_from_env`, from the environment and settings they read at start-up, and pass it down.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from judge.backends import Backend
from judge.limits import CPU_LIMITS, Limits
from judge.track_settings import TrackSettings, settings_class, settings_classes

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
    # The tracks' settings records (judge/track_settings/), read with `track_settings`; a track
    # without one here has its declared defaults. A toolchain's location is its track's setting
    # (docs/architecture.md, "The seams": nothing but the track names its backend).
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


def host_from_env(environ: Mapping[str, str], *, backend: Backend, work_root: Path,
                  competition: Mapping[str, Any] | None = None, overrides: Mapping[str, Any] | None = None,
                  **fields: Any) -> HostConfig:
    """The host as `environ` (the caller's environment, read at the edge) and the caller's settings describe it.

    Every track's settings are read from their variables (`opjudge doctor` checks every track
    with one host); `overrides` (public keys, e.g. "npu_device") are the caller's own settings and
    win over them; `competition` holds the organisers' per-competition values
    (api/store/judge_settings.py), applied to `backend`'s track only and only where its record lets
    organisers override. `fields` are `HostConfig`'s own. ValueError names a bad variable or key.
    """
    overrides = dict(overrides or {})
    records = []
    for kind in settings_classes():
        declared = kind.declared()
        record = kind.from_env(environ, {k: v for k, v in overrides.items() if k in declared})
        if kind is settings_class(backend) and competition:
            record = record.overridden({k: v for k, v in competition.items() if k in declared}, organiser=True)
        records.append(record)
    unknown = set(overrides) - {key for kind in settings_classes() for key in kind.declared()}
    if unknown:
        raise ValueError(f"no track declares the setting {', '.join(sorted(unknown))}")
    return HostConfig(work_root=work_root, settings=tuple(records),
                      profile=environ.get("OPJUDGE_PROFILE") != "off", **fields)
