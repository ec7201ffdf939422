"""Backends (device kinds) and case sets: typed values, never bare strings across seams.

A backend is the name of a registered track (judge/tracks/__init__.py): a folder of
`judge/tracks/`, one named in OPJUDGE_EXTRA_TRACKS, or one given to `register_track`. The
names live here, below every other module, so that validating one imports no track.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

BUILT_IN_TRACKS = Path(__file__).resolve().parent / "tracks"
# Folders of tracks outside judge/tracks/, separated by os.pathsep; the runner child learns an extra
# track's folder from it too (its environment starts empty: judge/tracks/__init__.py sets it there).
EXTRA_TRACKS_VARIABLE = "OPJUDGE_EXTRA_TRACKS"
# A backend's name is a queue's part, a folder's and a module's: lowercase letters, digits, '_'.
_NAME = re.compile(r"[a-z][a-z0-9_]{0,15}")
_registered: dict[str, Path] = {}  # register_track's, on top of the folders found


def _track_folder(path: Path) -> tuple[str, Path]:
    folder = path.resolve()
    if not (folder / "__init__.py").is_file():
        raise ValueError(f"{folder} is not a track: it has no __init__.py defining TRACK")
    if not _NAME.fullmatch(folder.name):
        raise ValueError(f"track folder {folder.name!r}: a backend's name is lowercase letters, digits and '_'")
    return folder.name, folder


@cache
def _found(extra: str) -> dict[str, Path]:
    folders = [p for p in sorted(BUILT_IN_TRACKS.iterdir()) if (p / "__init__.py").is_file()]
    folders += [Path(p) for p in extra.split(os.pathsep) if p]
    return dict(_track_folder(p) for p in folders)


def track_folders() -> dict[str, Path]:
    """Every registered track's folder by its backend's name: judge/tracks/'s, then the extra ones."""
    return {**_found(os.environ.get(EXTRA_TRACKS_VARIABLE, "")), **_registered}


def add_track_folder(path: Path) -> str:
    """Register the track in `path` (a folder whose name is the backend's); its backend's name."""
    name, folder = _track_folder(path)
    known = track_folders().get(name)
    if known is not None and known != folder:
        raise ValueError(f"backend {name!r} is already the track in {known}")
    _registered[name] = folder
    return name


def remove_track_folder(name: str) -> None:
    """Forget a track added by `add_track_folder` (tests)."""
    _registered.pop(name, None)


class _Backends(type):
    """`for b in Backend` and `x in Backend` go over the registered tracks, as they did over an enum."""

    def __iter__(cls) -> Iterator[Backend]:
        return iter([Backend(name) for name in track_folders()])

    def __contains__(cls, value: object) -> bool:
        return isinstance(value, str) and str.__str__(value) in track_folders()

    def __len__(cls) -> int:
        return len(track_folders())


class Backend(str, metaclass=_Backends):
    """A registered track's name; `Backend("x")` raises ValueError for any other. One object per
    name, so `backend is Backend.CPU` holds as it did for the enum."""

    CPU: ClassVar[Backend]
    CUDA: ClassVar[Backend]
    NPU: ClassVar[Backend]
    _interned: ClassVar[dict[str, Backend]] = {}

    def __new__(cls, value: object) -> Backend:
        if type(value) is cls:
            return value  # type: ignore[return-value]
        name = str.__str__(value) if isinstance(value, str) else str(value)
        found = cls._interned.get(name)
        if found is None:
            if name not in track_folders():
                raise ValueError(f"{name!r} is not a backend; the registered backends are {', '.join(track_folders())}")
            found = cls._interned[name] = super().__new__(cls, name)
        return found

    @property
    def value(self) -> str:
        return str.__str__(self)

    @property
    def name(self) -> str:
        return self.value.upper()

    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, spec: str) -> str:
        return format(str.__str__(self), spec)

    def __repr__(self) -> str:
        return f"Backend({str.__str__(self)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return Backend, (str.__str__(self),)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        """Validated against the registry at request time: a 422 names the registered backends."""
        from pydantic_core import core_schema

        return core_schema.no_info_plain_validator_function(
            cls, json_schema_input_schema=core_schema.str_schema(),
            serialization=core_schema.plain_serializer_function_ser_schema(str.__str__),
            ref="Backend")  # one component in OpenAPI, "Backend", as the enum had

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: Any, handler: Any) -> dict[str, Any]:
        # The enum's schema, as it was when Backend was one (the registered names at schema time).
        return {"enum": list(track_folders()), "title": "Backend", "type": "string"}


Backend.CPU, Backend.CUDA, Backend.NPU = Backend("cpu"), Backend("cuda"), Backend("npu")


class CaseSet(StrEnum):
    TESTS = "tests"  # correctness only, errors shown to teams
    BENCHMARKS = "benchmarks"  # timed and scored on the public board
    PRIVATE = "private"  # timed and scored for the final ranking; seeds from the judge's secret

    @property
    def timed(self) -> bool:
        return self is not CaseSet.TESTS


class Stage(StrEnum):
    """Stages of a run (docs/rules.md, "What happens to a submission"), reported as they start."""

    QUEUED = "queued"
    POLICY = "policy"
    BUILDING = "building"
    CHECKING = "checking"
    TIMING = "timing"
    SCORING = "scoring"
    DONE = "done"


class Isolation(StrEnum):
    """How strongly the submission was isolated; recorded on every result."""

    STRICT = "strict"  # namespaces + rlimits + seccomp
    DEGRADED = "degraded"  # rlimits + seccomp without namespaces
    OFF = "off"  # development only: no isolation at all
