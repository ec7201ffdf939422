"""Each track's typed settings, declared once (base.py says what a declaration holds).

A track's record is its `Track.settings` (judge/tracks/__init__.py), so every lookup here goes
through the tracks' registry: a registered track's settings are known wherever its backend is, and
one that declares none has `NoSettings`. The built-in tracks' records live in this package
(`judge/track_settings/<backend>.py`), imported by their tracks and by tests and benchmarks that
build a host with one.
"""

from __future__ import annotations

from collections.abc import Iterator

from judge.backends import Backend
from judge.track_settings.base import Declared, NoSettings, TrackSettings, setting


def settings_class(backend: Backend) -> type[TrackSettings]:
    """The settings record of `backend`'s track (its track is imported on first use)."""
    # Imported here, not above: a track's import of judge.track_settings.base runs this package first.
    from judge.tracks import get_track

    return get_track(backend).settings


def settings_classes() -> Iterator[type[TrackSettings]]:
    """Every track's settings record, in the backends' order, each once (tracks without settings share one)."""
    return iter(dict.fromkeys(settings_class(backend) for backend in Backend))


def overridable() -> dict[str, Declared]:
    """The settings organisers may set per competition, every track's, by public key."""
    return {key: item for record in settings_classes() for key, item in record.declared().items()
            if item.overridable}


__all__ = ["Declared", "NoSettings", "TrackSettings", "overridable", "setting", "settings_class",
           "settings_classes"]
