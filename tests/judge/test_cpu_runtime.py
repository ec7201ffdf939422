"""CpuRuntime: fresh addresses for every buffer, and a flush sized to every last-level cache."""

from __future__ import annotations

from pathlib import Path

import torch

from judge.runtimes.addresses import FreshAddresses
from judge.tracks.cpu.runtime import CpuRuntime, last_level_cache_bytes


def test_no_buffer_lands_where_a_recent_one_was() -> None:
    """The runner's pattern: each call's input made while the last one is freed, the two kernels
    alternating. With offsets alone about one buffer in ten repeated a recent address."""
    runtime = CpuRuntime({"flush_bytes": 1 << 20})
    recent: list[int] = []
    repeats = 0
    for call in range(3000):
        x = runtime.to_device(torch.zeros(1000 + call % 2, dtype=torch.float32))
        repeats += x.data_ptr() in recent[-64:]
        recent.append(x.data_ptr())
        del x
    assert repeats == 0


def test_an_allocator_that_always_hands_back_one_block_still_gives_new_addresses() -> None:
    pool = torch.empty(1 << 16, dtype=torch.uint8)
    handed: list[torch.Tensor] = []

    def allocate(n: int) -> torch.Tensor:  # the same block while it is free, as a caching allocator does
        block = pool[:n] if len(handed) % 8 == 0 else torch.empty(n, dtype=torch.uint8)
        handed.append(block)
        return block

    addresses = FreshAddresses(allocate, align=64, steps=4, memory=16, randbelow=lambda n: 0)
    seen = [addresses.take(100).data_ptr() for _ in range(40)]
    for i, address in enumerate(seen):
        assert address not in seen[max(0, i - 16) : i]


def _cache(root: Path, cpu: int, index: int, level: int, size: str, shared: str) -> None:
    folder = root / f"cpu{cpu}" / "cache" / f"index{index}"
    folder.mkdir(parents=True)
    (folder / "level").write_text(f"{level}\n")
    (folder / "size").write_text(f"{size}\n")
    (folder / "shared_cpu_list").write_text(f"{shared}\n")


def test_flush_covers_every_l3_instance_the_kernel_may_use(tmp_path: Path) -> None:
    for cpu in range(4):  # two chiplets of two cores, 32 MiB of L3 each, private 1 MiB L2s
        _cache(tmp_path, cpu, 2, 2, "1024K", str(cpu))
        _cache(tmp_path, cpu, 3, 3, "32768K", "0-1" if cpu < 2 else "2-3")
    assert last_level_cache_bytes({0, 1, 2, 3}, tmp_path) == 64 << 20
    assert last_level_cache_bytes({0, 1}, tmp_path) == 32 << 20
    assert last_level_cache_bytes({7}, tmp_path) == 32 << 20  # unknown: the default
