"""CudaRuntime: torch CUDA memory, the judge's own stream, CUDA-event timing.

Constructed inside the runner child from JSON options (`CudaRuntimeOptions`),
before any submission library is loaded: it initialises CUDA (which loads the
libcudart that the kernels' libraries link against) and makes its own stream
current, so every tensor operation of the child (inputs, NaN poison, flush,
copies back for checking) runs on the stream the kernel is given.
"""

from __future__ import annotations

import ctypes
import secrets
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from judge.errors import ToolchainUnavailableError
from judge.runtimes.addresses import FreshAddresses
from judge.runtimes.base import DeviceRuntime
from judge.tracks.cuda.device import GpuPeak, find_peak, floor_peak_flops

MIB = 1 << 20
MIN_FLUSH_BYTES = 256 * MIB  # docs/rules.md: at least 256 MiB on devices
OFFSET_GRANULE_BYTES = 256  # offsets keep 256-byte alignment: vector loads and TMA stay legal
OVERHEAD_SAMPLES = 50


@dataclass(frozen=True)
class CudaRuntimeOptions:
    """What the worker tells the child's runtime (plain JSON; see judge/tracks/cuda/__init__.py)."""

    device_index: int = 0  # CUDA ordinal inside the child
    min_flush_bytes: int = MIN_FLUSH_BYTES  # the flush is max(this, 2 x the device's L2)
    max_offset_granules: int = 64  # fresh addresses: offsets up to 64 x 256 B into each block
    peak_dtype: str | None = None  # the dtype `peak_flops()` answers for; None: the chip's top rate
    driver_library: str | None = None  # libcuda.so.1 to preload (the child's environment is cleared)

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> CudaRuntimeOptions:
        """Parse and check the options; unknown keys are ignored (the pipeline reads some itself)."""
        options = cls(
            device_index=int(raw.get("device_index", 0)),
            min_flush_bytes=int(raw.get("min_flush_bytes", MIN_FLUSH_BYTES)),
            max_offset_granules=int(raw.get("max_offset_granules", 64)),
            peak_dtype=raw.get("peak_dtype"),
            driver_library=raw.get("driver_library"),
        )
        if options.device_index < 0:
            raise ValueError(f"device_index must be >= 0, not {options.device_index}")
        if options.min_flush_bytes < MIN_FLUSH_BYTES:
            raise ValueError(f"min_flush_bytes must be at least {MIN_FLUSH_BYTES} (docs/rules.md), "
                             f"not {options.min_flush_bytes}")
        if options.max_offset_granules < 1:
            raise ValueError("max_offset_granules must be at least 1")
        if options.peak_dtype not in (None, "float32", "float16", "bfloat16"):
            raise ValueError(f"peak_dtype must be float32, float16 or bfloat16, not {options.peak_dtype!r}")
        return options


def flush_size_bytes(l2_cache_bytes: int, minimum_bytes: int = MIN_FLUSH_BYTES) -> int:
    """Bytes written before each timed call: at least twice the L2 and `minimum_bytes`, in whole MiB."""
    wanted = max(2 * max(l2_cache_bytes, 0), minimum_bytes)
    return -(-wanted // MIB) * MIB


def _element_size(dtype: torch.dtype) -> int:
    return torch.empty((), dtype=dtype).element_size()


class CudaRuntime(DeviceRuntime):
    """One GPU, one judge-owned stream, events for the clock."""

    name = "cuda"

    def __init__(self, raw_options: dict[str, Any]) -> None:
        self.options = CudaRuntimeOptions.from_json(raw_options)
        if self.options.driver_library:
            try:  # later dlopen("libcuda.so.1") calls find this already-loaded copy by its soname
                ctypes.CDLL(self.options.driver_library, mode=ctypes.RTLD_GLOBAL)
            except OSError as exc:
                raise ToolchainUnavailableError(
                    f"cannot load the CUDA driver {self.options.driver_library}: {exc}") from exc
        if not torch.cuda.is_available():
            raise ToolchainUnavailableError(
                f"torch {torch.__version__} sees no CUDA device (built for CUDA {torch.version.cuda})")
        self.device = torch.device("cuda", self.options.device_index)
        torch.cuda.set_device(self.device)
        properties = torch.cuda.get_device_properties(self.device)
        self.device_name = properties.name
        self.capability = f"{properties.major}.{properties.minor}"
        self.l2_bytes = int(getattr(properties, "L2_cache_size", 0))
        self.peak: GpuPeak | None = find_peak(self.device_name)
        # A stream of the judge's own (not the legacy default stream): a kernel that ignores
        # args->stream and launches on stream 0 is then neither ordered nor timed with it.
        self.stream = torch.cuda.Stream(device=self.device)
        torch.cuda.set_stream(self.stream)
        self._flush = torch.empty(flush_size_bytes(self.l2_bytes, self.options.min_flush_bytes) // 4,
                                  dtype=torch.int32, device=self.device)
        self._flush_value = 0
        self._addresses = FreshAddresses(
            lambda n: torch.empty(n, dtype=torch.uint8, device=self.device),
            align=OFFSET_GRANULE_BYTES, steps=self.options.max_offset_granules)
        self._generator = torch.Generator(device=self.device)
        self._generator.manual_seed(secrets.randbits(63))
        self.overhead_ns = self._measure_overhead_ns()
        self._exercise()

    def _exercise(self) -> None:
        """Use every path of the runtime once: a thread the driver or torch starts lazily then
        exists before the child records its threads, and is not taken for the kernel's."""
        self.to_host(self.garbage(4096))
        self.to_host(self.to_device(torch.zeros(64, dtype=torch.bfloat16)))
        self.flush_caches()
        self.synchronize()

    # -- memory ---------------------------------------------------------------------------

    def _fresh(self, nbytes: int) -> torch.Tensor:
        # 256-byte-aligned offsets into blocks the caching allocator hands back again and again.
        return self._addresses.take(nbytes)

    def to_device(self, tensor: Any) -> Any:
        """A copy of a CPU tensor on the GPU at a fresh address, written on the judge's stream."""
        nbytes = tensor.numel() * tensor.element_size()
        out = self._fresh(nbytes).view(tensor.dtype).view(tensor.shape)
        out.copy_(tensor.contiguous())
        return out

    def empty(self, shape: tuple[int, ...], dtype: Any, fill: float) -> Any:
        """A new GPU tensor filled with `fill` (NaN poison for outputs) at a fresh address."""
        numel = 1
        for dim in shape:
            numel *= dim
        out = self._fresh(numel * _element_size(dtype)).view(dtype).view(shape)
        out.fill_(fill)
        return out

    def garbage(self, nbytes: int) -> Any:
        """A workspace of random bytes (never zeros: a kernel must clear what it needs)."""
        buffer = self._fresh(nbytes)
        buffer.random_(0, 256, generator=self._generator)
        return buffer

    def to_host(self, tensor: Any) -> Any:
        """A CPU copy, after everything on the device is finished."""
        self.synchronize()
        return tensor.cpu()

    # -- stream and clock -------------------------------------------------------------------

    def stream_handle(self) -> int:
        """The raw cudaStream_t for `kernel_args.stream`: the current (judge-owned) stream."""
        return int(torch.cuda.current_stream(self.device).cuda_stream)

    def synchronize(self) -> None:
        """Wait for the whole device, not only the stream: work moved elsewhere is caught too."""
        torch.cuda.synchronize(self.device)

    def flush_caches(self) -> None:
        """Write the whole flush buffer with a new value (a kernel on the stream, not timed)."""
        self._flush_value = (self._flush_value + 1) & 0x7FFFFFFF
        self._flush.fill_(self._flush_value)

    def _elapsed_ns(self, call: Callable[[], int]) -> tuple[int, float]:
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record(self.stream)
        rc = call()
        # Device-wide synchronisation before the end event: work the call left on any other
        # stream (or on stream 0) finishes inside the timed interval instead of after it.
        torch.cuda.synchronize(self.device)
        end.record(self.stream)
        end.synchronize()
        return rc, start.elapsed_time(end) * 1e6

    def _measure_overhead_ns(self) -> float:
        """The median of empty start/sync/stop intervals, timed exactly like a call."""
        for _ in range(5):
            self._elapsed_ns(lambda: 0)
        samples = [self._elapsed_ns(lambda: 0)[1] for _ in range(OVERHEAD_SAMPLES)]
        return float(statistics.median(samples))

    def time_call(self, call: Callable[[], int]) -> tuple[int, int]:
        """Run `call` between two CUDA events; nanoseconds with the event overhead taken off."""
        rc, elapsed = self._elapsed_ns(call)
        return rc, max(0, round(elapsed - self.overhead_ns))

    def fault_reason(self, error: BaseException) -> str | None:
        """A CUDA error surfacing at the synchronisation after a call: the kernel's fault (RE)."""
        return cuda_fault_reason(error)

    # -- description ------------------------------------------------------------------------

    def peak_flops(self, dtype: str | None = None) -> float:
        """The floor-check rate for `dtype` (default: the option's `peak_dtype`); 0 for unknown GPUs."""
        return floor_peak_flops(self.peak, dtype if dtype is not None else self.options.peak_dtype)

    def describe(self) -> dict[str, str]:
        """Device, capability, driver and CUDA versions, and the clock's measured overhead."""
        return {
            "device": self.device_name,
            "capability": self.capability,
            "driver": driver_version(),
            "cuda_runtime": str(torch.version.cuda),
            "torch": torch.__version__,
            "l2_mib": f"{self.l2_bytes / MIB:.0f}",
            "flush_mib": f"{self._flush.numel() * 4 // MIB}",
            "event_overhead_ns": f"{self.overhead_ns:.0f}",
            "peak_tensor16_tflops": f"{self.peak.tensor16_flops / 1e12:.1f}" if self.peak else "unknown",
        }


def cuda_fault_reason(error: BaseException) -> str | None:
    """The first line of a CUDA error torch raised, e.g. "CUDA error: an illegal memory access was
    encountered"; None for any other error.

    torch raises AcceleratorError (a RuntimeError) for CUDA errors, older releases a plain
    RuntimeError naming CUDA. After such an error the context is unusable: the child ends.
    """
    accelerator_error = getattr(torch, "AcceleratorError", None)
    text = str(error).strip()
    if (accelerator_error is not None and isinstance(error, accelerator_error)) or (
        isinstance(error, RuntimeError) and text.startswith("CUDA error")
    ):
        return text.splitlines()[0][:300] if text else type(error).__name__
    return None


def driver_version() -> str:
    """The kernel driver's version (e.g. 580.159.03), else the driver API's CUDA version."""
    try:
        with open("/proc/driver/nvidia/version") as text:
            for word in text.readline().split():
                if word.count(".") >= 1 and word.replace(".", "").isdigit():
                    return word
    except OSError:
        pass
    try:
        version = ctypes.c_int()
        if ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(version)) == 0:
            return f"CUDA driver API {version.value // 1000}.{version.value % 1000 // 10}"
    except OSError:
        pass
    return "unknown"
