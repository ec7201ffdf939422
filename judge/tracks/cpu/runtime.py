"""CpuRuntime: host memory, no stream, a monotonic nanosecond clock."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from judge.runtimes.base import DeviceRuntime

_ALIGN = 64


def last_level_cache_bytes(sys_cpu: Path = Path("/sys/devices/system/cpu/cpu0/cache")) -> int:
    """Size of the highest cache level the kernel reports; 32 MiB when unknown."""
    best_level, best_size = 0, 32 << 20
    for index in sys_cpu.glob("index*"):
        try:
            level = int((index / "level").read_text())
            text = (index / "size").read_text().strip()
        except (OSError, ValueError):
            continue
        units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
        size = int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)
        if level > best_level:
            best_level, best_size = level, size
    return best_size


class CpuRuntime(DeviceRuntime):
    name = "cpu"

    def __init__(self, options: dict[str, Any]) -> None:
        self._rng = random.Random()  # seeded from os.urandom: offsets a kernel cannot predict
        self._flush = torch.zeros(int(options["flush_bytes"]), dtype=torch.uint8)
        self._threads = int(options.get("threads", 1))
        self._model = str(options.get("cpu_model", "cpu"))
        self._peak_flops = float(options.get("peak_flops", 0.0))

    def _fresh(self, nbytes: int) -> torch.Tensor:
        # A random offset into a slightly larger block: the same size asked twice
        # in a row lands at another address, so a cache keyed by pointer never hits.
        pad = self._rng.randrange(1, 64) * _ALIGN
        block = torch.empty(nbytes + pad, dtype=torch.uint8)
        return block[pad : pad + nbytes]

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
        buffer = self._fresh(nbytes)
        buffer.random_(0, 256)
        return buffer

    def to_host(self, tensor: Any) -> Any:
        return tensor

    def stream_handle(self) -> int:
        return 0

    def synchronize(self) -> None:
        pass

    def flush_caches(self) -> None:
        self._flush.add_(1)

    def time_call(self, call: Callable[[], int]) -> tuple[int, int]:
        start = time.perf_counter_ns()
        rc = call()
        return rc, time.perf_counter_ns() - start

    def peak_flops(self) -> float:
        return self._peak_flops

    def describe(self) -> dict[str, str]:
        return {"device": self._model, "threads": str(self._threads)}
