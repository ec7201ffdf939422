"""What a judging host offers, built at the edge: `HostConfig` (judge/host_config.py) from the environment.

judge/ never reads the environment: the CLI and the workers build a `HostConfig` with
`host_from_env`, from the environment and settings they read at start-up, and pass it down.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from judge.backends import Backend
from judge.host_config import HostConfig
from judge.track_settings import settings_class, settings_classes


def host_from_env(environ: Mapping[str, str], *, backend: Backend | None, work_root: Path,
                  competition: Mapping[str, Any] | None = None, overrides: Mapping[str, Any] | None = None,
                  **fields: Any) -> HostConfig:
    """The host as `environ` (the caller's environment, read at the edge) and the caller's settings describe it.

    Every track's settings are read from their variables (`opjudge doctor` checks every track
    with one host); `overrides` (public keys, e.g. "npu_device") are the caller's own settings and
    win over them; `competition` holds the organisers' per-competition values
    (api/store/judge_settings.py), applied to `backend`'s track only and only where its record lets
    organisers override (`backend` None: a host for no one track, `opjudge doctor`'s, which takes no
    competition). `fields` are `HostConfig`'s own. ValueError names a bad variable or key.
    """
    overrides = dict(overrides or {})
    if competition and backend is None:
        raise ValueError("a competition's settings are a backend's: name the backend")
    judged = settings_class(backend) if backend is not None else None
    records = []
    for kind in settings_classes():
        declared = kind.declared()
        record = kind.from_env(environ, {k: v for k, v in overrides.items() if k in declared})
        if kind is judged and competition:
            record = record.overridden({k: v for k, v in competition.items() if k in declared}, organiser=True)
        records.append(record)
    unknown = set(overrides) - {key for kind in settings_classes() for key in kind.declared()}
    if unknown:
        raise ValueError(f"no track declares the setting {', '.join(sorted(unknown))}")
    return HostConfig(work_root=work_root, settings=tuple(records),
                      profile=environ.get("OPJUDGE_PROFILE") != "off", **fields)
