"""judge/oracle_cache.py: keys, hits and misses, atomic writes, the disabled cache."""

from __future__ import annotations

import torch

from judge.oracle_cache import OracleCache, cache_key


def _compute_counter():
    calls = []

    def compute():
        calls.append(1)
        return {"dq": torch.arange(6, dtype=torch.float64).reshape(2, 3), "dk": None}

    return calls, compute


KEY = ["definition-hash", "t01", {"B": 1, "S1": 4}, "bfloat16", 1234]


def test_miss_then_hit(tmp_path):
    cache = OracleCache(tmp_path)
    calls, compute = _compute_counter()
    first = cache.get_or_compute(KEY, compute)
    second = OracleCache(tmp_path).get_or_compute(KEY, compute)  # a fresh process's view
    assert len(calls) == 1
    assert torch.equal(first["dq"], second["dq"]) and second["dk"] is None
    assert (cache.hits, cache.misses) == (0, 1)
    assert not list(tmp_path.rglob(".tmp-*"))  # the temporary file was renamed into place


def test_every_part_of_the_key_matters(tmp_path):
    cache = OracleCache(tmp_path)
    calls, compute = _compute_counter()
    cache.get_or_compute(KEY, compute)
    for changed in (
        ["other-hash", *KEY[1:]],
        [KEY[0], "t02", *KEY[2:]],
        [*KEY[:2], {"B": 1, "S1": 5}, *KEY[3:]],
        [*KEY[:3], "float16", KEY[4]],
        [*KEY[:4], 1235],
    ):
        cache.get_or_compute(changed, compute)
    assert len(calls) == 6
    assert cache_key({"a": 1, "b": 2}) == cache_key({"b": 2, "a": 1})  # dict order is not identity


def test_none_value_and_damaged_entry(tmp_path):
    cache = OracleCache(tmp_path)
    assert cache.get_or_compute(["ref", 1], lambda: None) is None
    assert cache.get_or_compute(["ref", 1], lambda: "recomputed") is None  # a stored None is a hit
    path = cache.path_for(KEY)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not a torch file")
    calls, compute = _compute_counter()
    assert torch.equal(cache.get_or_compute(KEY, compute)["dq"], compute()["dq"])
    assert len(calls) == 2  # recomputed once here, once by the comparison above
    assert cache.get_or_compute(KEY, lambda: 1 / 0)["dk"] is None  # and the entry was repaired


def test_disabled_cache_always_computes(tmp_path):
    cache = OracleCache(None)
    calls, compute = _compute_counter()
    cache.get_or_compute(KEY, compute)
    cache.get_or_compute(KEY, compute)
    assert len(calls) == 2 and not cache.enabled and cache.path_for(KEY) is None
