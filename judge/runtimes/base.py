"""The DeviceRuntime seam: memory, stream, clock and cache flush of one backend.

Used inside the runner child (judge/runner/child/main.py); every method is cheap to
call between kernel calls and none of it is timed except `time_call`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any


class DeviceRuntime(ABC):
    name: str

    @abstractmethod
    def to_device(self, tensor: Any) -> Any:
        """A copy of a CPU torch tensor on the device, at a fresh address (random offset)."""

    @abstractmethod
    def empty(self, shape: tuple[int, ...], dtype: Any, fill: float) -> Any:
        """A new device tensor filled with `fill` (NaN for outputs), at a fresh address."""

    @abstractmethod
    def garbage(self, nbytes: int) -> Any:
        """A workspace of `nbytes` bytes of random garbage (a uint8 tensor)."""

    @abstractmethod
    def to_host(self, tensor: Any) -> Any:
        """A CPU copy, after synchronising."""

    @abstractmethod
    def stream_handle(self) -> int:
        """The value for `kernel_args.stream`: 0 on CPU, the raw stream pointer on devices."""

    @abstractmethod
    def synchronize(self) -> None:
        """Wait until all work on the stream is done."""

    @abstractmethod
    def flush_caches(self) -> None:
        """Evict the last-level cache: write a buffer of at least twice its size."""

    def evict_call_buffers(self) -> None:
        """Before an untimed call (the correctness check, the profiled pass): none of the call's own
        buffers in any cache, as cheaply as the runtime can (docs/rules.md, "Timing"). Where it has
        no cheaper way, the full flush."""
        self.flush_caches()

    @abstractmethod
    def time_call(self, call: Callable[[], int]) -> tuple[int, int]:
        """Run `call` once and return (its return code, elapsed nanoseconds on the backend's clock)."""

    def last_launches(self) -> int | None:
        """Kernel launches the last timed call made, where the clock counts them (the NPU's device
        timing); None where it does not."""
        return None

    def launch_limit(self) -> int:
        """Launches one timed call of the team's kernel may make, 0 for any number. The runner child
        holds the submission to it, never the baseline (judge/runner/child/main.py)."""
        return 0

    def peak_flops(self) -> float:
        """The device's peak rate for the physical-floor check (docs/rules.md); 0 disables it."""
        return 0.0

    def describe(self) -> dict[str, str]:
        """Device name and driver versions for the run's record."""
        return {"device": self.name}

    def fault_reason(self, error: BaseException) -> str | None:
        """What a device error raised around a kernel call says, when the kernel caused it (an
        illegal address, a trap, a failed assert: RE); None for the judge's own errors (IE).

        A CPU kernel that faults kills the process instead, which the worker sees directly.
        """
        return None
