"""Turning uploaded or local files into `SourceFile`s, with the limits every channel shares."""

from __future__ import annotations

import re
from pathlib import Path

from judge.errors import SubmissionFormatError
from judge.limits import Limits
from judge.toolchains.base import SourceFile

_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,99}$")
ALLOWED_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".cu", ".cuh", ".txt")


def check_name(name: str) -> str:
    """The file name as given, or SubmissionFormatError saying why it is refused."""
    if "/" in name or "\\" in name or ".." in name:
        raise SubmissionFormatError(f"file name {name!r} must be a plain name, without folders or '..'")
    if not _SAFE_NAME.match(name):
        raise SubmissionFormatError(
            f"file name {name!r} may use only letters, digits, '_', '-' and '.', and must not start with '.'"
        )
    if not name.endswith(ALLOWED_SUFFIXES):
        raise SubmissionFormatError(f"file {name!r} is not a source file ({', '.join(ALLOWED_SUFFIXES)})")
    return name


def make_sources(files: list[tuple[str, bytes]], limits: Limits) -> list[SourceFile]:
    """Validate names, sizes, count and duplicates of (name, content) pairs."""
    if not files:
        raise SubmissionFormatError("no source file was given")
    if len(files) > limits.max_source_files:
        raise SubmissionFormatError(f"{len(files)} files given; at most {limits.max_source_files} are accepted")
    seen: set[str] = set()
    sources = []
    for name, content in files:
        check_name(name)
        if name in seen:
            raise SubmissionFormatError(f"file name {name!r} is given twice")
        if len(content) > limits.source_limit_bytes:
            raise SubmissionFormatError(
                f"file {name!r} has {len(content)} bytes; the limit is {limits.source_limit_bytes}"
            )
        seen.add(name)
        sources.append(SourceFile(name=name, content=content))
    return sources


def read_sources(paths: list[Path], limits: Limits) -> list[SourceFile]:
    """Local files for the CLI; a missing one is a SubmissionFormatError naming it."""
    files = []
    for path in paths:
        if not path.is_file():
            raise SubmissionFormatError(f"no such file: {path}")
        files.append((path.name, path.read_bytes()))
    return make_sources(files, limits)
