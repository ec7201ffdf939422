"""Turning uploaded or local files into `SourceFile`s, with the limits every channel shares."""

from __future__ import annotations

import re
from pathlib import Path

from judge.backends import Backend
from judge.errors import SubmissionFormatError
from judge.limits import Limits
from judge.toolchains.base import SourceFile

MAX_NAME_CHARS = 64  # the source policy's limit (judge/policy/sources.py), so no name passes here to fail there
_SAFE_NAME = re.compile(rf"^[A-Za-z0-9][A-Za-z0-9_.\-]{{0,{MAX_NAME_CHARS - 1}}}$")


def source_suffixes(backend: Backend | None = None) -> tuple[str, ...]:
    """The file types a submission to `backend` may hold: its track's one list (`Track.source_suffixes`, which
    the source check enforces too); with no backend, those of every backend."""
    from judge.tracks import get_track  # the tracks import the toolchains, which import this module

    backends = [backend] if backend is not None else list(Backend)
    return tuple(sorted(set().union(*(get_track(b).source_suffixes for b in backends))))


def check_name(name: str, backend: Backend | None = None) -> str:
    """The file name as given, or SubmissionFormatError saying why it is refused (for `backend`'s file
    types when given: a file the policy would refuse is refused here, before it costs a submission)."""
    if "/" in name or "\\" in name or ".." in name:
        raise SubmissionFormatError(f"file name {name!r} must be a plain name, without folders or '..'")
    if len(name) > MAX_NAME_CHARS:
        raise SubmissionFormatError(
            f"file name {name[:40]!r}... is {len(name)} characters long; the limit is {MAX_NAME_CHARS}"
        )
    if not _SAFE_NAME.match(name):
        raise SubmissionFormatError(
            f"file name {name!r} may use only letters, digits, '_', '-' and '.', and must not start with '.'"
        )
    allowed = source_suffixes(backend)
    if not name.endswith(allowed):
        where = f" for the {backend.value} backend" if backend is not None else ""
        raise SubmissionFormatError(f"file {name!r} is not a source file{where}: accepted are {', '.join(allowed)}")
    return name


def check_content(name: str, content: bytes) -> bytes:
    """The content unchanged, or SubmissionFormatError for an empty or a binary file.

    Both are in practice mistakes (the wrong file, an unsaved editor buffer, an object file or
    archive named .cpp): judged, they would only fail and spend one of the team's submissions
    (a binary one would be refused as SV by the source check, wiping the team's standing).
    Sources are text: UTF-8 (ASCII is UTF-8) without NUL bytes.
    """
    if not content:
        raise SubmissionFormatError(f"file {name!r} is empty (0 bytes): check that you chose the right file and "
                                    "saved it before uploading")
    if b"\0" in content:
        at = content.index(b"\0")
        raise SubmissionFormatError(f"file {name!r} is binary (a NUL byte at offset {at}), not source text; "
                                    "upload the source file, not a built object or an archive")  # fmt: skip
    try:
        content.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SubmissionFormatError(f"file {name!r} is not UTF-8 text (an invalid byte at offset {error.start}); "
                                    "save the source as UTF-8") from None  # fmt: skip
    return content


def make_sources(files: list[tuple[str, bytes]], limits: Limits, backend: Backend | None = None) -> list[SourceFile]:
    """Validate names (and file types, for `backend`), sizes, count and duplicates of (name, content) pairs."""
    if not files:
        raise SubmissionFormatError("no source file was given")
    if len(files) > limits.max_source_files:
        raise SubmissionFormatError(f"{len(files)} files given; at most {limits.max_source_files} are accepted")
    seen: set[str] = set()
    sources = []
    for name, content in files:
        check_name(name, backend)
        if name in seen:
            raise SubmissionFormatError(f"file name {name!r} is given twice")
        if len(content) > limits.source_limit_bytes:
            raise SubmissionFormatError(
                f"file {name!r} has {len(content)} bytes; the limit is {limits.source_limit_bytes}"
            )
        seen.add(name)
        sources.append(SourceFile(name=name, content=content))
    for source in sources:  # after the checks above, so a count or duplicate is reported first
        check_content(source.name, source.content)
    return sources


def read_sources(paths: list[Path], limits: Limits, backend: Backend | None = None) -> list[SourceFile]:
    """Local files for the CLI; a missing one is a SubmissionFormatError naming it."""
    files = []
    for path in paths:
        if not path.is_file():
            raise SubmissionFormatError(f"no such file: {path}")
        files.append((path.name, path.read_bytes()))
    return make_sources(files, limits, backend)
