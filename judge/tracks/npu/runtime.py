"""NpuRuntime: NPU global memory through torch_npu, the current aclrtStream, NPU event timing.

Built inside the runner child from plain JSON options (`runtime_options` in
judge/tracks/npu/__init__.py). torch_npu is imported only here, when the
runtime is made, so hosts without it can still import the NPU track, test it
and report it unavailable. The device calls go through `NpuApi`, a few lines
over torch_npu, so the runtime's own logic (fresh addresses, flushing, timing
arithmetic, options) is tested without a device by handing it another `NpuApi`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from judge.errors import ToolchainUnavailableError
from judge.runtimes.addresses import FreshAddresses
from judge.runtimes.base import DeviceRuntime
from judge.tracks.npu.faults import npu_fault_reason

MIB = 1 << 20
# judging.md: flush with a buffer of at least twice the last-level cache. The 910B family has
# 192 MiB of L2 (issue 6 asks for at least 384 MiB); 512 MiB leaves room for bigger parts.
DEFAULT_FLUSH_BYTES = 512 * MIB
MIN_FLUSH_BYTES = 384 * MIB
# Offsets are multiples of 512 bytes: more than the 32-byte alignment DataCopy needs, and what the
# caching allocator itself hands out, so an aligned kernel stays aligned at every fresh address.
ALIGN_BYTES = 512
MAX_OFFSET_STEPS = 64


class NpuEvent(Protocol):
    def record(self) -> None: ...
    def synchronize(self) -> None: ...
    def elapsed_time(self, end: Any) -> float: ...  # milliseconds, like torch.npu.Event


class NpuApi(Protocol):
    """The device operations the runtime uses; `TorchNpuApi` is the real one."""

    device: torch.device

    def stream_pointer(self) -> int: ...
    def synchronize(self) -> None: ...
    def timing_event(self) -> NpuEvent: ...
    def describe(self) -> dict[str, str]: ...


class TorchNpuApi:
    """torch_npu on one device; importing it needs CANN's libraries on the loader path."""

    def __init__(self, device_index: int) -> None:
        try:
            import torch_npu  # noqa: F401  (registers torch.npu)
        except ImportError as exc:
            raise ToolchainUnavailableError(
                f"the NPU runtime needs torch_npu, which cannot be imported here ({exc}). Install the "
                f"torch_npu wheel matching torch {torch.__version__} and the CANN version, and run with "
                "CANN's set_env.sh environment (LD_LIBRARY_PATH, ASCEND_OPP_PATH); see docs/npu-worker.md"
            ) from exc
        self._torch_npu = torch_npu
        torch.npu.set_device(device_index)
        self.device = torch.device(f"npu:{device_index}")

    def stream_pointer(self) -> int:
        # The raw aclrtStream behind the current stream: what kernel_args.stream carries.
        return int(torch.npu.current_stream().npu_stream)

    def synchronize(self) -> None:
        torch.npu.synchronize()

    def timing_event(self) -> NpuEvent:
        return torch.npu.Event(enable_timing=True)  # type: ignore[no-any-return]

    def describe(self) -> dict[str, str]:
        return {"device": str(torch.npu.get_device_name(self.device)),
                "torch_npu": str(getattr(self._torch_npu, "__version__", "unknown"))}


@dataclass(frozen=True)
class NpuRuntimeOptions:
    """The JSON options, checked: the child trusts nothing it is sent without looking at it."""

    device_index: int = 0
    flush_bytes: int = DEFAULT_FLUSH_BYTES
    peak_flops: float = 0.0
    soc: str = ""
    cann_version: str = "unknown"

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> NpuRuntimeOptions:
        options = cls(
            device_index=int(raw.get("device_index", 0)),
            flush_bytes=int(raw.get("flush_bytes", DEFAULT_FLUSH_BYTES)),
            peak_flops=float(raw.get("peak_flops", 0.0)),
            soc=str(raw.get("soc", "")),
            cann_version=str(raw.get("cann_version", "unknown")),
        )
        if options.device_index < 0:
            raise ValueError(f"device_index must be >= 0, not {options.device_index}")
        if options.flush_bytes < MIN_FLUSH_BYTES:
            raise ValueError(f"flush_bytes {options.flush_bytes} is under {MIN_FLUSH_BYTES} (2x the 910B's L2)")
        return options


class NpuRuntime(DeviceRuntime):
    """Device tensors at fresh addresses, the current stream, events around each call."""

    name = "npu"

    def __init__(self, options: dict[str, Any], api: NpuApi | None = None) -> None:
        self.options = NpuRuntimeOptions.from_dict(options)
        self.api: NpuApi = api if api is not None else TorchNpuApi(self.options.device_index)
        self._addresses = FreshAddresses(  # offsets a kernel cannot predict from earlier calls
            lambda n: torch.empty(n, dtype=torch.uint8, device=self.api.device),
            align=ALIGN_BYTES, steps=MAX_OFFSET_STEPS - 1)
        # Allocated once, up front (before the submission's library is loaded).
        self._flush = torch.zeros(self.options.flush_bytes, dtype=torch.uint8, device=self.api.device)
        self._flush_value = 0

    def _fresh(self, nbytes: int) -> torch.Tensor:
        # Aligned offsets into blocks the caching allocator hands back call after call.
        return self._addresses.take(nbytes)

    def _typed(self, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
        numel = 1
        for dim in shape:
            numel *= dim
        itemsize = torch.empty((), dtype=dtype).element_size()
        return self._fresh(numel * itemsize).view(dtype).view(shape)

    def to_device(self, tensor: Any) -> Any:
        """A device copy of a CPU tensor at a fresh address."""
        out = self._typed(tuple(tensor.shape), tensor.dtype)
        out.copy_(tensor.contiguous())
        return out

    def empty(self, shape: tuple[int, ...], dtype: Any, fill: float) -> Any:
        """A device tensor filled with `fill` (NaN poisons outputs)."""
        out = self._typed(tuple(shape), dtype)
        out.fill_(fill)
        return out

    def garbage(self, nbytes: int) -> Any:
        """A workspace of random bytes."""
        buffer = self._fresh(nbytes)
        if nbytes:
            buffer.random_(0, 256)
        return buffer

    def to_host(self, tensor: Any) -> Any:
        self.api.synchronize()
        return tensor.cpu()

    def stream_handle(self) -> int:
        return self.api.stream_pointer()

    def synchronize(self) -> None:
        self.api.synchronize()

    def flush_caches(self) -> None:
        """Write the whole flush buffer (a new value each time, so nothing can skip the write)."""
        self._flush_value = (self._flush_value + 1) % 251
        self._flush.fill_(self._flush_value)
        self.api.synchronize()

    def time_call(self, call: Callable[[], int]) -> tuple[int, int]:
        """Events on the stream around `call`; the work it enqueued is finished before returning."""
        self.api.synchronize()
        start, end = self.api.timing_event(), self.api.timing_event()
        start.record()
        # torch_npu may queue the event record on its own task thread while kernel_run launches
        # straight onto the stream: without this wait the kernel could start before the clock.
        self.api.synchronize()
        rc = call()
        end.record()
        end.synchronize()
        self.api.synchronize()
        elapsed_ms = start.elapsed_time(end)
        return int(rc), max(0, round(elapsed_ms * 1e6))

    def peak_flops(self) -> float:
        return self.options.peak_flops

    def fault_reason(self, error: BaseException) -> str | None:
        """A kernel's fault or hang surfacing at the synchronisation after a call (RE or TLE; faults.py)."""
        return npu_fault_reason(error)

    def describe(self) -> dict[str, str]:
        return {**self.api.describe(), "soc": self.options.soc, "cann": self.options.cann_version}
