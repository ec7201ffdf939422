"""NpuRuntime: NPU global memory through torch_npu, the current aclrtStream, NPU event timing.

Built inside the runner child from plain JSON options (`runtime_options` in
judge/tracks/npu/__init__.py). torch_npu is imported only here, when the
runtime is made, so hosts without it can still import the NPU track, test it
and report it unavailable. The device calls go through `NpuApi`, a few lines
over torch_npu, so the runtime's own logic (fresh addresses, flushing, timing
arithmetic, options) is tested without a device by handing it another `NpuApi`.
"""

from __future__ import annotations

import statistics
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import torch

from judge.errors import ToolchainUnavailableError
from judge.runtimes.addresses import FreshAddresses
from judge.runtimes.base import DeviceRuntime
from judge.track_settings.npu import NpuSettings
from judge.tracks.npu.device_time import DeviceReading, read_profile
from judge.tracks.npu.faults import npu_fault_reason

MIB = 1 << 20
# How calls are timed (a competition's setting, recorded with every run by `describe`):
# - "events": NPU events on the stream around kernel_run, the empty call's overhead taken off
#   (like the CUDA track): what a caller of the library would wait for, host work in it included;
# - "device": the device time of the tasks the call ran, from torch_npu's profiler (device_time.py),
#   with the launches counted; `max_launches` caps the team's kernel's (CANNjudge's rule: one kernel
#   per timed call). The cap is applied by the runner child to the submission only (judge/runner/child/main.py): the
#   vendor baseline's operator may launch several kernels, which are recorded, never capped.
# Both declared once, with the NPU's other settings (judge/track_settings/npu.py).
TIMING_EVENTS, TIMING_DEVICE = NpuSettings.declared()["npu_timing"].declaration.choices
MAX_LAUNCH_CAP = NpuSettings.declared()["npu_max_launches"].declaration.le
OVERHEAD_SAMPLES = 15
# docs/rules.md: flush with a buffer of at least twice the last-level cache. The 910B family has
# 192 MiB of L2 (twice that is MIN_FLUSH_BYTES); 512 MiB leaves room for bigger parts.
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
    def device_time(self, call: Callable[[], int]) -> tuple[int, DeviceReading]: ...  # rc, the profiler's reading


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

    def device_time(self, call: Callable[[], int]) -> tuple[int, DeviceReading]:
        """The call under torch_npu's profiler (NPU activity only, text export), and the device
        tasks its analysis recorded (device_time.py reads kernel_details.csv). The output goes to a
        fresh folder under the child's TMPDIR, which the sandbox leaves writable, and is removed.
        Not yet run on an NPU: that the profiler sees kernels launched by the team's library
        (aclrtlaunch from a ctypes-loaded library, not through torch) is for the first host to confirm."""
        profiler = self._torch_npu.profiler
        config: dict[str, Any] = {}
        # Level0 without AI Core counters: the cheapest collection that still writes kernel_details.csv.
        if hasattr(profiler, "_ExperimentalConfig"):
            config["experimental_config"] = profiler._ExperimentalConfig(
                profiler_level=profiler.ProfilerLevel.Level0, aic_metrics=profiler.AiCMetrics.AiCoreNone)
        with tempfile.TemporaryDirectory(prefix="opjudge-npu-profile-") as folder:
            with profiler.profile(activities=[profiler.ProfilerActivity.NPU],
                                  on_trace_ready=profiler.tensorboard_trace_handler(folder), **config):
                rc = call()
                torch.npu.synchronize()
            return rc, read_profile(Path(folder))


@dataclass(frozen=True)
class NpuRuntimeOptions:
    """The JSON options, checked: the child trusts nothing it is sent without looking at it."""

    device_index: int = 0
    flush_bytes: int = DEFAULT_FLUSH_BYTES
    peak_flops: float = 0.0
    soc: str = ""
    cann_version: str = "unknown"
    timing: str = TIMING_EVENTS
    max_launches: int = 0  # device tasks one timed call of the team's kernel may run, 0 for any ("device" only)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> NpuRuntimeOptions:
        options = cls(
            device_index=int(raw.get("device_index", 0)),
            flush_bytes=int(raw.get("flush_bytes", DEFAULT_FLUSH_BYTES)),
            peak_flops=float(raw.get("peak_flops", 0.0)),
            soc=str(raw.get("soc", "")),
            cann_version=str(raw.get("cann_version", "unknown")),
            timing=str(raw.get("timing", TIMING_EVENTS)),
            max_launches=int(raw.get("max_launches", 0)),
        )
        if options.timing not in (TIMING_EVENTS, TIMING_DEVICE):
            raise ValueError(f"timing must be {TIMING_EVENTS!r} or {TIMING_DEVICE!r}, not {options.timing!r}")
        if not 0 <= options.max_launches <= MAX_LAUNCH_CAP:
            raise ValueError(f"max_launches must be from 0 (any number) to {MAX_LAUNCH_CAP}, "
                             f"not {options.max_launches}")
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
        self.overhead_ns = self._measure_overhead_ns() if self.options.timing == TIMING_EVENTS else 0.0
        # Device timing: what the profiler shows for an empty window (its own tasks, if any) is taken
        # off every call, as the events' empty-call overhead is.
        self.empty_reading = DeviceReading(0, 0)
        if self.options.timing == TIMING_DEVICE:
            self.api.synchronize()
            self.empty_reading = self.api.device_time(lambda: 0)[1]
        self._last_launches: int | None = None

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

    def _elapsed_ns(self, call: Callable[[], int]) -> tuple[int, float]:
        # TASK_QUEUE_ENABLE=0 (runner_env): event records go to the stream at once, not through
        # torch_npu's task thread, so nothing needs to wait between the start event and the call.
        start, end = self.api.timing_event(), self.api.timing_event()
        start.record()
        rc = call()
        end.record()
        end.synchronize()
        return rc, start.elapsed_time(end) * 1e6

    def _measure_overhead_ns(self) -> float:
        """The median of empty intervals, timed exactly like a call (the CUDA track's way)."""
        self.api.synchronize()
        samples = [self._elapsed_ns(lambda: 0)[1] for _ in range(OVERHEAD_SAMPLES)]
        return float(statistics.median(samples))

    def time_call(self, call: Callable[[], int]) -> tuple[int, int]:
        """The call's time: events minus the empty call's overhead, or the profiler's device time
        (its launches then kept for `last_launches`).

        The device is idle when the call starts, and its work is finished when this returns."""
        self.api.synchronize()
        if self.options.timing == TIMING_DEVICE:
            rc, reading = self.api.device_time(call)
            reading = reading.less(self.empty_reading)
            self._last_launches = reading.launches
            return int(rc), reading.device_ns
        rc, elapsed_ns = self._elapsed_ns(call)
        self.api.synchronize()  # device-wide: a fault or stray work surfaces here
        return int(rc), max(0, round(elapsed_ns - self.overhead_ns))

    def last_launches(self) -> int | None:
        """Device tasks the last timed call ran, under device timing; None under events (not counted)."""
        return self._last_launches if self.options.timing == TIMING_DEVICE else None

    def launch_limit(self) -> int:
        """The competition's cap on the team's kernel's launches per timed call (0: none)."""
        return self.options.max_launches if self.options.timing == TIMING_DEVICE else 0

    def peak_flops(self) -> float:
        return self.options.peak_flops

    def fault_reason(self, error: BaseException) -> str | None:
        """A kernel's fault or hang surfacing at the synchronisation after a call (RE or TLE; faults.py)."""
        return npu_fault_reason(error)

    def describe(self) -> dict[str, str]:
        """The device, and the clock that timed the run (recorded with it and shown on its report)."""
        described = {**self.api.describe(), "soc": self.options.soc, "cann": self.options.cann_version}
        return {**described, **timing_record(self.options), "event_overhead_ns": f"{self.overhead_ns:.0f}",
                **({"profiler_empty_launches": str(self.empty_reading.launches)}
                   if self.options.timing == TIMING_DEVICE else {})}


def timing_record(options: NpuRuntimeOptions) -> dict[str, str]:
    """The run's clock in the words its report shows: `timing` (the setting), `timing_detail` (a
    sentence) and, under device timing, `max_launches`."""
    if options.timing == TIMING_EVENTS:
        return {"timing": TIMING_EVENTS,
                "timing_detail": "NPU events around each call, task queue off, an empty call's time taken off"}
    cap = (f"at most {options.max_launches} launch{'es' if options.max_launches > 1 else ''} per call of "
           "your kernel" if options.max_launches else "any number of launches")
    return {"timing": TIMING_DEVICE, "max_launches": str(options.max_launches),
            "timing_detail": f"device time of the tasks each call ran (torch_npu profiler), {cap}; "
                             "the baseline's launches are counted, never capped"}
