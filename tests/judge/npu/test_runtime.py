"""NpuRuntime without torch_npu: its logic runs against a CPU stand-in for the device API."""

from __future__ import annotations

import ctypes
import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from judge.abi import kernel_args_struct, pack_args
from judge.errors import ToolchainUnavailableError
from judge.host_config import HostConfig
from judge.track_settings.npu import NpuSettings
from judge.tracks.npu import TRACK, device_nodes, logical_index, readonly_paths, runner_env, runtime_options
from judge.tracks.npu.device_time import read_profile
from judge.tracks.npu.faults import npu_fault_reason
from judge.tracks.npu.runtime import (
    ALIGN_BYTES,
    MIN_FLUSH_BYTES,
    NpuRuntime,
    NpuRuntimeOptions,
)
from tests.judge.npu.conftest import HEADER

DATA = Path(__file__).parent / "data"


class ScriptedClock:
    """The fake device's time: it moves only when a test's call says the call took so long, so the
    figures are exact on any host (a real sleep stretched by a loaded host broke the bounds)."""

    def __init__(self) -> None:
        self.now = 0.0

    def advance(self, seconds: float) -> int:
        self.now += seconds
        return 0


CLOCK = ScriptedClock()


class FakeEvent:
    def __init__(self, log: list[str]) -> None:
        self.log, self.at = log, 0.0

    def record(self) -> None:
        self.log.append("record")
        self.at = CLOCK.now

    def synchronize(self) -> None:
        self.log.append("event-sync")

    def elapsed_time(self, end: FakeEvent) -> float:
        return (end.at - self.at) * 1000.0


class FakeApi:
    """The device API on the CPU: tensors are host tensors, the stream a fixed number."""

    device = torch.device("cpu")

    def __init__(self) -> None:
        self.log: list[str] = []

    def stream_pointer(self) -> int:
        return 0xC0FFEE00

    def synchronize(self) -> None:
        self.log.append("sync")

    def timing_event(self) -> FakeEvent:
        return FakeEvent(self.log)

    def describe(self) -> dict[str, str]:
        return {"device": "fake NPU", "torch_npu": "none"}


OPTIONS = {"device_index": 0, "flush_bytes": MIN_FLUSH_BYTES, "peak_flops": 1e15, "soc": "Ascend910B3",
           "cann_version": "8.0.RC2"}


@pytest.fixture(scope="module")
def runtime() -> NpuRuntime:
    return NpuRuntime(OPTIONS, api=FakeApi())


def test_runtime_options_are_plain_json_and_checked(tmp_path: Path) -> None:
    host = HostConfig(work_root=tmp_path, settings=(NpuSettings(device="3", soc="Ascend910B3"),))
    options = runtime_options(host)
    assert json.loads(json.dumps(options)) == options
    assert options["flush_bytes"] >= 384 << 20 and options["peak_flops"] > 0 and options["device_index"] == 0
    parsed = NpuRuntimeOptions.from_dict(options)
    assert parsed.soc == "Ascend910B3"
    with pytest.raises(ValueError, match="flush_bytes"):
        NpuRuntimeOptions.from_dict({**options, "flush_bytes": 64 << 20})
    assert runtime_options(HostConfig(work_root=tmp_path))["peak_flops"] == 0.0  # unknown SoC: no floor check


def test_track_exposes_device_nodes_readonly_paths_and_child_environment(tmp_path: Path) -> None:
    host = HostConfig(work_root=tmp_path, settings=(NpuSettings(device="3", ascend_home=Path("/opt/cann")),))
    assert TRACK.device_nodes(host) == device_nodes(host) == [
        "/dev/davinci3", "/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"]
    assert Path("/usr/local/Ascend/driver") in readonly_paths(host) and Path("/opt/cann") in readonly_paths(host)
    env = runner_env(host)
    assert env["ASCEND_RT_VISIBLE_DEVICES"] == "3"  # the child's npu:0 is physical device 3
    assert env["LD_LIBRARY_PATH"].split(":")[0] == "/opt/cann/lib64"
    assert env["ASCEND_OPP_PATH"] == "/opt/cann/opp"


def test_without_torch_npu_the_runtime_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch_npu", None)  # import torch_npu now raises ImportError
    with pytest.raises(ToolchainUnavailableError, match="torch_npu"):
        TRACK.make_runtime(OPTIONS)


def test_fresh_copies_land_at_new_aligned_addresses(runtime: NpuRuntime) -> None:
    source = torch.randn(4, 3, 5).to(torch.bfloat16)
    copies = [runtime.to_device(source) for _ in range(20)]
    addresses = {c.data_ptr() for c in copies}
    assert len(addresses) == 20  # each copy elsewhere, though all are alive at once
    offsets = {c.storage_offset() * c.element_size() for c in copies}
    assert all(o % ALIGN_BYTES == 0 and o > 0 for o in offsets) and len(offsets) > 1
    assert all(torch.equal(c, source) and c.dtype == source.dtype and c.shape == source.shape for c in copies)


def test_outputs_are_poisoned_and_workspace_is_garbage(runtime: NpuRuntime) -> None:
    out = runtime.empty((2, 3), torch.float16, math.nan)
    assert out.shape == (2, 3) and out.dtype == torch.float16 and torch.isnan(out).all()
    workspace = runtime.garbage(1 << 16)
    assert workspace.dtype == torch.uint8 and workspace.numel() == 1 << 16
    assert workspace.float().std() > 50  # random bytes, not a constant
    assert runtime.garbage(0).numel() == 0


def test_flush_rewrites_the_whole_buffer_with_a_new_value(runtime: NpuRuntime) -> None:
    runtime.flush_caches()
    first = int(runtime._flush[-1])
    runtime.flush_caches()
    assert int(runtime._flush[0]) == int(runtime._flush[-1]) != first
    assert runtime._flush.numel() >= 384 << 20


def test_time_call_brackets_the_call_with_events_and_waits_for_it(runtime: NpuRuntime) -> None:
    api: FakeApi = runtime.api  # type: ignore[assignment]
    api.log.clear()

    def call() -> int:
        api.log.append("call")
        CLOCK.advance(0.01)
        return 3

    rc, elapsed_ns = runtime.time_call(call)
    assert runtime.overhead_ns == 0.0  # the empty calls took no scripted time
    assert rc == 3 and elapsed_ns == pytest.approx(10_000_000, abs=1)
    # The task queue is off (runner_env), so no synchronise sits between the start event and the call
    # (its return would be timed); the device-wide one comes after the end event.
    assert api.log == ["sync", "record", "call", "record", "event-sync", "sync"]
    assert runner_env(HostConfig(work_root=Path("/tmp")))["TASK_QUEUE_ENABLE"] == "0"


def test_the_empty_calls_overhead_is_taken_off(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeApi()
    runtime = NpuRuntime(OPTIONS, api=fake)
    assert runtime.overhead_ns >= 0 and runtime.describe()["event_overhead_ns"] == f"{runtime.overhead_ns:.0f}"
    monkeypatch.setattr(runtime, "overhead_ns", 4_000_000.0)
    _, elapsed_ns = runtime.time_call(lambda: CLOCK.advance(0.01))
    assert elapsed_ns == pytest.approx(6_000_000, abs=1)  # 10 ms less the 4 ms overhead
    assert runtime.time_call(lambda: 0)[1] == 0  # never below zero


class ProfilingApi(FakeApi):
    """The profiler on the CPU: each call leaves the folder tree torch_npu's trace handler writes, with
    the first `kernels` rows of a recorded kernel_details.csv (data/kernel_details_mstt_a2.csv, whose
    durations are 185.504, 501.17, 410.188 and 26.78 us); an empty window leaves no table."""

    def __init__(self, kernels: int, root: Path) -> None:
        super().__init__()
        self.kernels, self.root, self.calls = kernels, root, 0
        self.table = (DATA / "kernel_details_mstt_a2.csv").read_text().splitlines()

    def device_time(self, call):  # type: ignore[no-untyped-def]
        self.calls += 1
        folder = self.root / f"call{self.calls}"
        out = folder / "host_1_20250101_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
        out.mkdir(parents=True)
        rc = call()
        if self.calls > 1:  # the first is the runtime's own empty window
            (out / "kernel_details.csv").write_text("\n".join(self.table[: 1 + self.kernels]) + "\n")
        return rc, read_profile(folder)


def test_device_timing_reads_the_profilers_tables_and_counts_launches(tmp_path: Path) -> None:
    options = {**OPTIONS, "timing": "device", "max_launches": 1}
    one = NpuRuntime(options, api=ProfilingApi(1, tmp_path / "one"))
    assert one.last_launches() is None  # nothing timed yet
    assert one.time_call(lambda: 7) == (7, 185_504)
    assert (one.last_launches(), one.launch_limit(), one.overhead_ns) == (1, 1, 0.0)
    described = one.describe()
    assert described["timing"] == "device" and described["max_launches"] == "1"
    assert "at most 1 launch per call" in described["timing_detail"] and described["profiler_empty_launches"] == "0"
    three = NpuRuntime({**options, "max_launches": 0}, api=ProfilingApi(3, tmp_path / "three"))
    # The runtime counts; the runner child holds only the submission to the cap (test_child_launches).
    assert three.time_call(lambda: 0) == (0, 1_096_862) and three.last_launches() == 3
    assert three.launch_limit() == 0 and "any number of launches" in three.describe()["timing_detail"]
    with pytest.raises(ValueError, match="timing"):
        NpuRuntimeOptions.from_dict({**OPTIONS, "timing": "wallclock"})
    with pytest.raises(ValueError, match="max_launches"):
        NpuRuntimeOptions.from_dict({**OPTIONS, "timing": "device", "max_launches": -1})


def test_events_timing_counts_no_launches(runtime: NpuRuntime) -> None:
    assert runtime.last_launches() is None and runtime.launch_limit() == 0
    assert NpuRuntime({**OPTIONS, "max_launches": 1}, api=FakeApi()).launch_limit() == 0  # a cap needs "device"


def test_worker_environment_is_only_the_default_of_the_timing_setting() -> None:
    settings = NpuSettings.from_env({"OPJUDGE_NPU_TIMING": "device", "OPJUDGE_NPU_MAX_LAUNCHES": "1", "HOME": "/x"})
    assert (settings.timing, settings.max_launches) == ("device", 1) and NpuSettings.from_env({}) == NpuSettings()
    host = HostConfig(work_root=Path("/tmp"), settings=(settings,))
    assert (runtime_options(host)["timing"], runtime_options(host)["max_launches"]) == ("device", 1)


def test_a_kernels_device_exception_is_its_fault() -> None:
    aicore = RuntimeError("npuSynchronizeDevice:torch_npu/csrc/core/npu/NPUStream.cpp:506 NPU function error: "
                          "AclrtSynchronizeDeviceWithTimeout, error code is 507015\n[ERROR] PTA call acl api failed\n"
                          "[Error]: The aicore execution is abnormal.\nEZ9999: Inner Error!")
    reason = npu_fault_reason(aicore)
    assert reason is not None and "aicore execution is abnormal" in reason and "507015" in reason
    vector = RuntimeError("NPU function error: c10_npu::acl::AclrtSynchronizeStreamWithTimeout(copy_stream), "
                          "error code is 507035")
    assert npu_fault_reason(vector) is not None
    assert npu_fault_reason(RuntimeError("NPU function error: aclrtMalloc, error code is 207001")) is None
    assert npu_fault_reason(ValueError("The aicore execution is abnormal")) is None
    assert NpuRuntime(OPTIONS, api=FakeApi()).fault_reason(aicore) == reason


def test_kernel_args_carry_the_stream_and_device_pointers(runtime: NpuRuntime) -> None:
    # What the runner child does for every call: device tensors and the stream into kernel_args.
    struct = kernel_args_struct(HEADER)
    q = runtime.to_device(torch.ones(1, 2, 4, 8))
    dq = runtime.empty((1, 2, 4, 8), torch.float32, math.nan)
    pointers: dict[str, Any] = {name: None for name, ctype in struct._fields_ if ctype is ctypes.c_void_p}
    pointers.update(q=q.data_ptr(), dq=dq.data_ptr(), stream=runtime.stream_handle())
    scalars = {name: 1 for name, ctype in struct._fields_ if ctype is not ctypes.c_void_p}
    args = pack_args(struct, pointers=pointers, scalars=scalars)
    assert args.stream == 0xC0FFEE00
    assert args.q == q.data_ptr() and args.dq == dq.data_ptr() and args.q_rope is None


def test_describe_names_device_soc_and_cann(runtime: NpuRuntime) -> None:
    assert runtime.describe() == {"device": "fake NPU", "torch_npu": "none", "soc": "Ascend910B3",
                                  "cann": "8.0.RC2", "timing": "events",
                                  "timing_detail": "NPU events around each call, task queue off, an empty call's "
                                                   "time taken off",
                                  "event_overhead_ns": f"{runtime.overhead_ns:.0f}"}
    assert runtime.peak_flops() == 1e15


def test_the_runtime_id_counts_the_npus_this_host_or_container_shows(tmp_path: Path) -> None:
    container = tmp_path / "container"
    container.mkdir()
    (container / "davinci5").touch()
    (container / "davinci_manager").touch()
    assert logical_index(5, container) == 0  # a container given only NPU 5 calls it 0
    host = tmp_path / "host"
    host.mkdir()
    for n in (0, 1, 2, 3, 4, 5, 6, 7, 10):
        (host / f"davinci{n}").touch()
    assert logical_index(5, host) == 5 and logical_index(10, host) == 8
    assert logical_index(3, tmp_path) == 3  # no node: the number itself, for the runtime to refuse
    assert TRACK.deterministic_generation and TRACK.limits.oracle_threads == 0


def test_a_local_judge_run_takes_the_clock_from_its_environment(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from judge.backends import Backend
    from judge.cli import host_config

    monkeypatch.setenv("OPJUDGE_NPU_TIMING", "device")
    monkeypatch.setenv("OPJUDGE_NPU_MAX_LAUNCHES", "1")
    host = host_config(backend=Backend.NPU, sandbox="off", cache_dir=None, work_root=tmp_path)
    assert (runtime_options(host)["timing"], runtime_options(host)["max_launches"]) == ("device", 1)
    monkeypatch.delenv("OPJUDGE_NPU_TIMING")
    host = host_config(backend=Backend.NPU, sandbox="off", cache_dir=None, work_root=tmp_path)
    assert runtime_options(host)["timing"] == "events"


def test_under_msprof_op_the_child_picks_its_device_by_runtime_id(tmp_path: Path) -> None:
    # msprof op does not honour ASCEND_RT_VISIBLE_DEVICES (CANN 8.0 msprof op guide): the profiled child
    # has none and sets the device itself, by the runtime's id of the worker's NPU (physical 3 here).
    from judge.tracks.npu import under_profiler

    host = HostConfig(work_root=tmp_path, settings=(NpuSettings(device="3"),))
    env, options = TRACK.under_profiler(host, runner_env(host), runtime_options(host))
    assert TRACK.under_profiler is under_profiler
    assert "ASCEND_RT_VISIBLE_DEVICES" not in env and env["TASK_QUEUE_ENABLE"] == "0"
    assert runtime_options(host)["device_index"] == 0  # the timed child: its only visible device
    assert options["device_index"] == logical_index(3)
