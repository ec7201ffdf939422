"""judge/oracle_cache.py bounds (docs/operations.md): entries go by age and by size, least recently used first."""

from __future__ import annotations

import os
import time

import torch

from judge.doctor import doctor_report
from judge.host_config import HostConfig
from judge.oracle_cache import OracleCache, cache_usage

ENTRY = torch.zeros(64 * 1024, dtype=torch.float64)  # 512 KiB of float64, as an oracle output


def _fill(cache: OracleCache, keys: range) -> None:
    for key in keys:
        cache.get_or_compute(["case", key], lambda: {"dq": ENTRY})


def _age(cache: OracleCache, key: int, seconds: float) -> None:
    path = cache.path_for(["case", key])
    assert path is not None
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_size_cap_keeps_the_most_recently_used(tmp_path):
    cap = 4 * ENTRY.numel() * 8 + 64 * 1024  # four entries and their headers
    cache = OracleCache(tmp_path, max_bytes=cap)
    _fill(cache, range(4))
    for key, age_s in zip(range(4), (400, 300, 200, 100), strict=True):
        _age(cache, key, age_s)
    cache.get_or_compute(["case", 0], lambda: 1 / 0)  # a hit: entry 0 is now the most recent
    _fill(cache, range(4, 7))  # three more: three of the four old ones must go
    usage = cache_usage(tmp_path)
    assert usage.bytes <= cap and usage.entries == 4
    assert cache.path_for(["case", 0]).is_file()  # used last before the new ones: kept
    assert not any(cache.path_for(["case", k]).is_file() for k in (1, 2, 3))  # least recently used: gone


def test_old_entries_go_and_stale_temporaries_too(tmp_path):
    cache = OracleCache(tmp_path, max_age_s=3600)
    _fill(cache, range(3))
    _age(cache, 0, 7200)
    stale = tmp_path / "ab" / ".tmp-dead.pt"
    stale.parent.mkdir(exist_ok=True)
    stale.write_bytes(b"half")
    os.utime(stale, (time.time() - 7200, time.time() - 7200))
    report = OracleCache(tmp_path, max_age_s=3600).prune()  # the next run's cache prunes as it opens
    assert report.left.entries == 2 and not cache.path_for(["case", 0]).is_file()
    assert not stale.exists()
    calls = []
    cache.get_or_compute(["case", 0], lambda: calls.append(1) or {"dq": ENTRY})
    assert calls == [1]  # recomputed after pruning


def test_zero_bytes_turns_the_oracle_cache_off(tmp_path):
    cache = OracleCache(tmp_path / "oracle", max_bytes=0)
    _fill(cache, range(2))
    assert not cache.enabled and not (tmp_path / "oracle").exists()


def test_doctor_shows_the_cache_size(tmp_path):
    _fill(OracleCache(tmp_path / "oracle", max_bytes=10 * 1024 * 1024), range(3))
    host = HostConfig(work_root=tmp_path, cache_dir=tmp_path, oracle_cache_max_bytes=10 * 1024 * 1024,
                      oracle_cache_max_age_s=7200)  # fmt: skip
    check = next(c for c in doctor_report(host) if c.name == "cache")
    assert check.ok and "oracle 3 entries, 1.5 MiB (cap 10.0 MiB, kept 2.0 h)" in check.detail, check.detail
