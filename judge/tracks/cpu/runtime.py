"""CpuRuntime: host memory, no stream, a monotonic nanosecond clock."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from judge.runtimes.addresses import FreshAddresses
from judge.runtimes.base import DeviceRuntime
from judge.tracks.cpu.evict import EvictHelperError, LineEvictor

_ALIGN = 64
GARBAGE_BLOCK = 1 << 16  # random bytes made per call for the workspace, repeated to its size


def last_level_cache_bytes(cpus: set[int] | None = None, sys_cpu: Path = Path("/sys/devices/system/cpu")) -> int:
    """Total size of the highest cache level over the CPUs the kernel may use; 32 MiB when unknown.

    Hosts with several L3 instances (chiplets, sockets) have one per group of cores: a kernel
    whose threads span them fills all of them, so the flush must cover their sum.
    """
    cpus = os.sched_getaffinity(0) if cpus is None else cpus
    best_level, instances = 0, {}  # instance (its shared CPU list) -> size
    for cpu in sorted(cpus):
        for index in (sys_cpu / f"cpu{cpu}" / "cache").glob("index*"):
            try:
                level = int((index / "level").read_text())
                size = _cache_size((index / "size").read_text().strip())
                shared = (index / "shared_cpu_list").read_text().strip() if (index / "shared_cpu_list").exists() \
                    else f"cpu{cpu}"
            except (OSError, ValueError, KeyError):
                continue
            if level > best_level:
                best_level, instances = level, {}
            if level == best_level:
                instances[shared] = size
    return sum(instances.values()) or 32 << 20


def _cache_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def _load_evictor(library: str, *, required: bool) -> LineEvictor | None:
    if not library:
        return None
    try:
        return LineEvictor(library)
    except EvictHelperError:
        if required:
            raise
        return None


class CpuRuntime(DeviceRuntime):
    name = "cpu"

    def __init__(self, options: dict[str, Any]) -> None:
        # Offsets a kernel cannot predict (secrets' randomness), 64-byte aligned, up to 4 KiB in.
        self._addresses = FreshAddresses(lambda n: torch.empty(n, dtype=torch.uint8), align=_ALIGN, steps=63)
        # The flush (docs/rules.md, "Timing"): "lines" evicts every buffer handed out since the last
        # flush (judge/tracks/cpu/evict.py); "buffer" writes twice the last-level cache. Untimed calls
        # evict their lines under either, where the helper was built (`evict_call_buffers`). Under
        # "lines" an evictor that cannot load raises (the worker chose it because the helper loads);
        # under "buffer" untimed calls then get the buffer too.
        self.flush_method = str(options.get("flush", "buffer"))
        library = str(options.get("evict_library") or "")
        self._evictor = _load_evictor(library, required=self.flush_method == "lines")
        by_buffer = self.flush_method != "lines"
        self._flush = torch.zeros(int(options["flush_bytes"]), dtype=torch.uint8) if by_buffer else None
        self._handed_out: list[torch.Tensor] = []  # held, so none is freed (and unmapped) before its flush
        self._threads = int(options.get("threads", 1))
        self._model = str(options.get("cpu_model", "cpu"))
        self._peak_flops = float(options.get("peak_flops", 0.0))

    def _fresh(self, nbytes: int) -> torch.Tensor:
        buffer = self._addresses.take(nbytes)
        if self._evictor is not None:
            self._handed_out.append(buffer)
        return buffer

    def to_device(self, tensor: Any) -> Any:
        nbytes = tensor.numel() * tensor.element_size()
        out = self._fresh(nbytes).view(tensor.dtype).view(tensor.shape)
        out.copy_(tensor)
        return out

    def empty(self, shape: tuple[int, ...], dtype: Any, fill: float) -> Any:
        numel = 1
        for dim in shape:
            numel *= dim
        out = self._fresh(numel * torch.empty((), dtype=dtype).element_size()).view(dtype).view(shape)
        out.fill_(fill)
        return out

    def garbage(self, nbytes: int) -> Any:
        """Fresh random bytes every call: one random block of `GARBAGE_BLOCK` bytes, repeated. Random
        bytes for all of it cost more than the call (228 ms for the sparse FA baseline's 13 MiB)."""
        buffer = self._fresh(nbytes)
        block = torch.empty(min(nbytes, GARBAGE_BLOCK), dtype=torch.uint8).random_(0, 256)
        rows = nbytes // GARBAGE_BLOCK
        if rows:
            buffer[: rows * GARBAGE_BLOCK].view(rows, GARBAGE_BLOCK).copy_(block.expand(rows, GARBAGE_BLOCK))
        tail = nbytes - rows * GARBAGE_BLOCK
        buffer[nbytes - tail :].copy_(block[:tail])
        return buffer

    def to_host(self, tensor: Any) -> Any:
        return tensor

    def stream_handle(self) -> int:
        return 0

    def synchronize(self) -> None:
        pass

    def flush_caches(self) -> None:
        if self._flush is not None:
            self._flush.add_(1)
            self._handed_out = []
            return
        self.evict_call_buffers()

    def evict_call_buffers(self) -> None:
        """Every buffer handed out since the last flush, evicted by line (0.3-1 ms for a sparse FA
        call, against 76 ms for the buffer on a host whose L3 is 480 MiB); the buffer without the helper."""
        if self._evictor is None:
            self.flush_caches()
            return
        for buffer in self._handed_out:
            self._evictor.evict(buffer.data_ptr(), buffer.numel())
        self._handed_out = []

    def time_call(self, call: Callable[[], int]) -> tuple[int, int]:
        start = time.perf_counter_ns()
        rc = call()
        return rc, time.perf_counter_ns() - start

    def peak_flops(self) -> float:
        return self._peak_flops

    def describe(self) -> dict[str, str]:
        described = {"device": self._model, "threads": str(self._threads), "cache_flush": self.flush_method}
        if self._evictor is not None and self._flush is None:
            described["cache_flush"] = f"lines ({self._evictor.method})"
        return described
