"""Each track's typed settings, declared once (base.py says what a declaration holds).

One module per track, `judge/track_settings/<backend>.py`, defines `SETTINGS`, its record. They
live apart from `judge/tracks/<backend>/` because importing a track imports its device runtime
(torch, torch_npu), and the API, which builds its competition fields from these records, must not.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator

from judge.backends import Backend
from judge.track_settings.base import Declared, TrackSettings, setting


def settings_class(backend: Backend) -> type[TrackSettings]:
    """The settings record of `backend`'s track; its module is imported on first use."""
    record: type[TrackSettings] = importlib.import_module(f"judge.track_settings.{backend.value}").SETTINGS
    return record


def settings_classes() -> Iterator[type[TrackSettings]]:
    """Every track's settings record, in the backends' order."""
    return (settings_class(backend) for backend in Backend)


def overridable() -> dict[str, Declared]:
    """The settings organisers may set per competition, every track's, by public key."""
    return {key: item for record in settings_classes() for key, item in record.declared().items()
            if item.overridable}


__all__ = ["Declared", "TrackSettings", "overridable", "setting", "settings_class", "settings_classes"]
