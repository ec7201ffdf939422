"""On-disk cache of oracle (and reference) results (docs/operations.md, "The oracle cache"),
bounded in size and age so a worker's disk does not fill.

The oracle of a case is a pure function of the problem definition and the case's inputs, and
those inputs are a pure function of (case, dtype, seed); so a sha256 over all of them names the
result. Which entries can ever be read again depends on the seed:
- the CLI and the tests judge with one secret again and again: every entry is reused;
- the service salts each run's secret (docs/rules.md: seeds a submission cannot predict, not even
  from an earlier run), so an entry is read again only when the same run is judged again: an IE
  retry, a run taken back from a lost worker, a redelivered task, all within the run's retry window.
So the cache is bounded by age (`max_age_s`: the workers use that retry window) and by size
(`max_bytes`: least recently used entries go first); a hit refreshes an entry's age. Entries are
written to a temporary file in the same folder and renamed into place, so a reader (another
worker, a crashed writer's successor) sees a whole entry or none; pruning deletes whole entries.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch


def cache_key(key_parts: Any) -> str:
    """sha256 of a canonical JSON encoding of `key_parts` (dict keys sorted, tuples as lists)."""
    encoded = json.dumps(key_parts, sort_keys=True, separators=(",", ":"), default=_encode_other)
    return hashlib.sha256(encoded.encode()).hexdigest()


def _encode_other(value: Any) -> Any:
    # Enums (dtype, case set), Paths and other simple values: their string form is their identity.
    return str(value)


ENTRY_SUFFIX = ".pt"
_TEMP_PREFIX = ".tmp-"
_STALE_TEMP_S = 3600.0  # a temporary file this old belongs to a writer that died


@dataclass(frozen=True)
class CacheUsage:
    entries: int
    bytes: int


@dataclass(frozen=True)
class PruneReport:
    removed: int  # entries deleted (too old, or over the size cap)
    freed_bytes: int
    left: CacheUsage


def _entries(directory: Path) -> Iterator[os.DirEntry[str]]:
    """Every file in the two-level fan-out (entries and temporary files)."""
    with os.scandir(directory) as shards:
        for shard in shards:
            if shard.is_dir(follow_symlinks=False):
                with os.scandir(shard.path) as files:
                    yield from (f for f in files if f.is_file(follow_symlinks=False))


def cache_usage(directory: Path) -> CacheUsage:
    """How many entries the cache at `directory` holds and their size (0 when it does not exist)."""
    if not directory.is_dir():
        return CacheUsage(0, 0)
    count = size = 0
    for entry in _entries(directory):
        if entry.name.endswith(ENTRY_SUFFIX) and not entry.name.startswith(_TEMP_PREFIX):
            count += 1
            size += entry.stat().st_size
    return CacheUsage(count, size)


class OracleCache:
    """`get_or_compute(key_parts, compute_fn)`: the stored result when present, else compute and store.

    With `directory=None` (or `max_bytes=0`) the cache is disabled: every call computes. Values
    are what `torch.save` can store under `weights_only` loading: dicts and lists of tensors,
    numbers, strings and None. `max_bytes` / `max_age_s` of None: no bound of that kind.
    """

    def __init__(self, directory: Path | str | None, *, max_bytes: int | None = None,
                 max_age_s: float | None = None) -> None:  # fmt: skip
        self.directory = Path(directory) if directory is not None and max_bytes != 0 else None
        self.max_bytes = max_bytes
        self.max_age_s = max_age_s
        self.hits = 0
        self.misses = 0
        self._written_since_prune = 0
        if self.directory is not None:
            self.directory.mkdir(parents=True, exist_ok=True)
            if self.bounded:
                self.prune()

    @property
    def enabled(self) -> bool:
        return self.directory is not None

    @property
    def bounded(self) -> bool:
        return self.max_bytes is not None or self.max_age_s is not None

    def path_for(self, key_parts: Any) -> Path | None:
        """Where the entry for `key_parts` lives (None when disabled)."""
        if self.directory is None:
            return None
        key = cache_key(key_parts)
        # Two-level fan-out keeps folders small when a competition caches thousands of entries.
        return self.directory / key[:2] / f"{key}{ENTRY_SUFFIX}"

    def get_or_compute(self, key_parts: Any, compute_fn: Callable[[], Any]) -> Any:
        """The cached value for `key_parts`, or `compute_fn()` stored under it."""
        path = self.path_for(key_parts)
        if path is None:
            self.misses += 1
            return compute_fn()
        if path.is_file():
            try:
                stored = torch.load(path, map_location="cpu", weights_only=True)
                if isinstance(stored, dict) and "value" in stored:
                    self.hits += 1
                    os.utime(path)  # used now: the last to be pruned
                    return stored["value"]
            except Exception:  # noqa: BLE001 - a damaged (or just pruned) entry is recomputed and overwritten
                pass
        self.misses += 1
        value = compute_fn()
        self._write(path, value)
        return value

    def prune(self, now: float | None = None) -> PruneReport:
        """Delete entries older than `max_age_s`, then the least recently used over `max_bytes`."""
        if self.directory is None:
            return PruneReport(0, 0, CacheUsage(0, 0))
        now = time.time() if now is None else now
        kept: list[tuple[float, int, str]] = []  # (last used, size, path)
        removed = freed = 0
        for entry in _entries(self.directory):
            info = entry.stat()
            if entry.name.startswith(_TEMP_PREFIX):
                if now - info.st_mtime > _STALE_TEMP_S:
                    _unlink(entry.path)
                continue
            if self.max_age_s is not None and now - info.st_mtime > self.max_age_s:
                removed, freed = removed + _unlink(entry.path), freed + info.st_size
            else:
                kept.append((info.st_mtime, info.st_size, entry.path))
        total = sum(size for _, size, _ in kept)
        if self.max_bytes is not None and total > self.max_bytes:
            kept.sort()  # oldest use first
            while kept and total > self.max_bytes:
                _, size, path = kept.pop(0)
                removed, freed, total = removed + _unlink(path), freed + size, total - size
        self._written_since_prune = 0
        return PruneReport(removed, freed, CacheUsage(len(kept), total))

    def _write(self, path: Path, value: Any) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=_TEMP_PREFIX, suffix=ENTRY_SUFFIX, dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                torch.save({"value": value}, handle)
            size = os.path.getsize(tmp_name)
            os.replace(tmp_name, path)
        except BaseException:
            Path(tmp_name).unlink(missing_ok=True)
            raise
        self._written_since_prune += size
        # Prune once an eighth of the cap was written since the last time (each prune scans the folder).
        if self.max_bytes is not None and self._written_since_prune * 8 >= self.max_bytes:
            self.prune()


def _unlink(path: str) -> int:
    """1 when this call deleted the file, 0 when another worker's prune did first."""
    try:
        os.unlink(path)
        return 1
    except FileNotFoundError:
        return 0
