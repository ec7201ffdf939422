"""Fixtures for sandbox tests: a work folder, a secret outside it, a marker to find strays."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import pytest


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
def sentinel(tmp_path: Path) -> Path:
    """A secret file in a folder beside the work folder, readable by everyone on the host."""
    folder = tmp_path / "outside"
    folder.mkdir()
    secret = folder / "secret.txt"
    secret.write_text("opjudge-sentinel-" + uuid.uuid4().hex)
    secret.chmod(0o644)
    return secret


def processes_with(marker: str) -> list[int]:
    """Pids whose command line holds `marker` (stray processes a test must not leave)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                if marker.encode() in fh.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


def processes_left(marker: str, within_s: float = 30.0) -> list[int]:
    """`processes_with(marker)` once it is empty, or after `within_s` (a loaded host reaps late).

    A killed group is gone in milliseconds on an idle host; a fixed sleep before looking made the
    outcome depend on the host's load, a generous deadline does not.
    """
    deadline = time.monotonic() + within_s
    while (found := processes_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found
