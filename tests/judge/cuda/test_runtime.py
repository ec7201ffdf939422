"""CudaRuntime and the CUDA track's wiring: the parts that run without a GPU here, the rest on one."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from judge.backends import Backend
from judge.doctor import doctor_report
from judge.errors import InternalJudgeError, ToolchainUnavailableError
from judge.host_config import HostConfig
from judge.track_settings.cuda import CudaSettings
from judge.tracks import get_track
from judge.tracks.cuda import TRACK, readonly_paths, runner_env, runtime_options
from judge.tracks.cuda.device import PEAK_TABLE, device_nodes, find_peak, floor_peak_flops
from judge.tracks.cuda.runtime import (
    MIB,
    MIN_FLUSH_BYTES,
    OFFSET_GRANULE_BYTES,
    CudaRuntime,
    CudaRuntimeOptions,
    cuda_fault_reason,
    flush_size_bytes,
)

H200_L2 = 60 * MIB


def test_options_defaults_and_unknown_keys() -> None:
    options = CudaRuntimeOptions.from_json({"peak_flops": 1.0, "gpu_name": "x"})  # the pipeline's own keys
    assert options.device_index == 0 and options.min_flush_bytes == MIN_FLUSH_BYTES == 256 * MIB
    assert options.peak_dtype is None and options.driver_library is None


@pytest.mark.parametrize(
    "raw",
    [{"device_index": -1}, {"min_flush_bytes": 128 * MIB}, {"max_offset_granules": 0}, {"peak_dtype": "int8"}],
)
def test_options_are_checked(raw: dict) -> None:
    with pytest.raises(ValueError):
        CudaRuntimeOptions.from_json(raw)


def test_options_survive_json() -> None:
    host = HostConfig(work_root=Path("/tmp"), settings=(CudaSettings(gpu_name="NVIDIA H200", visible_devices="1"),))
    raw = runtime_options(host)
    again = json.loads(json.dumps(raw))
    assert again == raw
    assert raw["gpu_name"] == "NVIDIA H200" and raw["peak_flops"] == find_peak("NVIDIA H200").tensor16_flops
    assert CudaRuntimeOptions.from_json(again).device_index == 0  # the first GPU of the shared view


def test_child_gets_the_workers_gpu_view() -> None:
    """The child's environment starts empty: it must see the GPU the worker's own torch sees."""
    pinned = {"CUDA_VISIBLE_DEVICES": "GPU-8c1f", "CUDA_DEVICE_ORDER": "PCI_BUS_ID", "PATH": "/usr/bin"}
    settings = CudaSettings.from_env(pinned)
    assert settings == CudaSettings(visible_devices="GPU-8c1f", device_order="PCI_BUS_ID")
    env = runner_env(HostConfig(work_root=Path("/tmp"), settings=(settings,)))
    assert env["CUDA_VISIBLE_DEVICES"] == "GPU-8c1f" and env["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"
    # A worker started without an order keeps CUDA's default one: the child must not change it,
    # or "CUDA_VISIBLE_DEVICES=1" would name another GPU there.
    env = runner_env(HostConfig(work_root=Path("/tmp"),
                                settings=(CudaSettings.from_env({"CUDA_VISIBLE_DEVICES": "1"}),)))
    assert env["CUDA_VISIBLE_DEVICES"] == "1" and "CUDA_DEVICE_ORDER" not in env


def test_runner_env_and_read_only_paths() -> None:
    host = HostConfig(work_root=Path("/tmp"))
    env = runner_env(host)
    assert "CUDA_VISIBLE_DEVICES" not in env and "CUDA_DEVICE_ORDER" not in env  # the worker sees all, so does it
    paths = readonly_paths(host)
    assert Path("/sys/bus/pci") in paths and Path("/sys/devices") in paths
    assert TRACK.runner_env is runner_env and TRACK.readonly_paths is readonly_paths


def test_flush_is_at_least_256_mib_and_twice_the_l2() -> None:
    assert flush_size_bytes(H200_L2) == 256 * MIB  # 2 x 60 MB is below the floor
    assert flush_size_bytes(200 * MIB) == 400 * MIB
    assert flush_size_bytes(200 * MIB + 1) == 401 * MIB  # whole MiB, rounded up
    assert flush_size_bytes(0) == 256 * MIB
    assert flush_size_bytes(H200_L2, minimum_bytes=512 * MIB) == 512 * MIB


def test_offsets_are_aligned_random_and_never_zero() -> None:
    """The CUDA runtime's placement (FreshAddresses with 256-byte granules), on CPU memory."""
    from judge.runtimes.addresses import FreshAddresses

    blocks: list[torch.Tensor] = []

    def allocate(n: int) -> torch.Tensor:
        blocks.append(torch.empty(n, dtype=torch.uint8))
        return blocks[-1]

    addresses = FreshAddresses(allocate, align=OFFSET_GRANULE_BYTES, steps=64)
    seen = set()
    for _ in range(400):
        buffer = addresses.take(1000)
        seen.add(buffer.data_ptr() - blocks[-1].data_ptr())
    assert all(o % 256 == 0 and 256 <= o <= 64 * 256 for o in seen)  # never 0: not at the block's start
    assert len(seen) > 20  # random, so a kernel cannot predict the address


@pytest.mark.parametrize(
    ("name", "row"),
    [
        ("NVIDIA H200", "H200"),
        ("NVIDIA H200 NVL", "H200 NVL"),
        ("NVIDIA H100 80GB HBM3", "H100"),
        ("NVIDIA H100 PCIe", "H100 PCIe"),
        ("NVIDIA GH200 480GB", "GH200"),
        ("NVIDIA A100-SXM4-80GB", "A100"),
        ("Tesla T4", None),
        ("", None),
    ],
)
def test_peak_table_lookup(name: str, row: str | None) -> None:
    found = find_peak(name)
    assert (found.name if found else None) == row


def test_floor_rate_per_dtype() -> None:
    h200 = find_peak("NVIDIA H200")
    assert h200 is not None
    assert floor_peak_flops(h200, "bfloat16") == floor_peak_flops(h200, "float16") == pytest.approx(989.4e12)
    # float32 may legally use split-TF32/bf16 tensor-core tricks: the TF32 rate bounds them.
    assert floor_peak_flops(h200, "float32") == pytest.approx(494.7e12)
    assert floor_peak_flops(h200, None) == pytest.approx(989.4e12)  # dtype unknown: the top rate
    assert floor_peak_flops(None, "bfloat16") == 0.0  # unknown GPU: no floor check
    for entry in PEAK_TABLE:  # sanity of the data: tensor >= tf32, every rate positive
        assert entry.tensor16_flops >= entry.tf32_flops > 0 and entry.fp32_flops > 0


def test_runtime_options_carry_the_peak_for_the_pipeline() -> None:
    host = HostConfig(work_root=Path("/tmp"), settings=(CudaSettings(gpu_name="NVIDIA H200"),))
    options = runtime_options(host)
    assert options["peak_flops"] == pytest.approx(989.4e12)
    assert options["peak_flops_by_dtype"]["float32"] == pytest.approx(494.7e12)
    assert options["min_flush_bytes"] >= 256 * MIB and options["device_index"] == 0


def test_device_nodes_bind_every_gpu_and_the_control_nodes(tmp_path: Path) -> None:
    for name in ("nvidia0", "nvidia1", "nvidia10", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset"):
        (tmp_path / name).touch()
    (tmp_path / "nvidia-caps").mkdir()
    names = [Path(p).name for p in device_nodes(tmp_path)]
    assert names == ["nvidia0", "nvidia1", "nvidia10", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"]
    assert device_nodes(tmp_path / "none") == []


def test_track_wiring() -> None:
    assert get_track(Backend.CUDA) is TRACK
    assert TRACK.backend is Backend.CUDA
    assert TRACK.limits.memory_limit_mib == 0  # no RLIMIT_AS: CUDA reserves huge address ranges
    assert TRACK.limits.min_warmup_s == pytest.approx(0.025)
    toolchain = TRACK.make_toolchain(HostConfig(work_root=Path("/tmp"), settings=(CudaSettings(arch="sm_80"),)))
    assert toolchain.arch == "sm_80" and toolchain.backend is Backend.CUDA
    assert TRACK.make_toolchain(HostConfig(work_root=Path("/tmp"))).arch == "sm_90a"
    # The worker's OPJUDGE_CUDA_HOME / OPJUDGE_CUDA_ARCH are the track's settings; the runner child gets neither.
    worker = CudaSettings.from_env({"OPJUDGE_CUDA_HOME": "/opt/cuda-12", "OPJUDGE_CUDA_ARCH": "sm_80",
                                    "CUDA_VISIBLE_DEVICES": "1"})
    built = TRACK.make_toolchain(HostConfig(work_root=Path("/tmp"), settings=(worker,)))
    assert (built.cuda_home, built.arch) == (Path("/opt/cuda-12"), "sm_80")
    assert worker.child_environment() == {"CUDA_VISIBLE_DEVICES": "1"}
    assert TRACK.make_runtime is CudaRuntime


@pytest.mark.skipif(torch.cuda.is_available(), reason="this host has a GPU: the refusal cannot be seen")
def test_runtime_without_a_gpu_is_a_typed_error() -> None:
    with pytest.raises(ToolchainUnavailableError, match="sees no CUDA device"):
        CudaRuntime({})


# ---- on a GPU ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def runtime() -> CudaRuntime:
    return CudaRuntime(runtime_options(HostConfig(work_root=Path("/tmp"))))


@pytest.mark.cuda
def test_fresh_addresses_and_contents(runtime: CudaRuntime) -> None:
    host = torch.randn(1000).to(torch.bfloat16)
    copies = [runtime.to_device(host) for _ in range(12)]
    assert all(c.device.type == "cuda" and c.data_ptr() % 256 == 0 for c in copies)
    assert len({c.data_ptr() for c in copies}) > 1
    assert torch.equal(runtime.to_host(copies[0]), host)
    poisoned = runtime.empty((3, 5), torch.float16, math.nan)
    assert torch.isnan(runtime.to_host(poisoned)).all()
    garbage = runtime.to_host(runtime.garbage(4096))
    assert garbage.dtype == torch.uint8 and int(garbage.count_nonzero()) > 3000


@pytest.mark.cuda
def test_stream_is_the_judges_own(runtime: CudaRuntime) -> None:
    handle = runtime.stream_handle()
    assert handle != 0  # not the legacy default stream
    assert handle == torch.cuda.current_stream().cuda_stream == runtime.stream.cuda_stream


@pytest.mark.cuda
def test_flush_covers_twice_the_l2(runtime: CudaRuntime) -> None:
    flush_bytes = runtime._flush.numel() * 4
    assert flush_bytes >= max(256 * MIB, 2 * runtime.l2_bytes)
    runtime.flush_caches()
    runtime.synchronize()


@pytest.mark.cuda
def test_event_timing_subtracts_the_overhead_and_catches_other_streams(runtime: CudaRuntime) -> None:
    assert runtime.overhead_ns > 0
    rc, empty_ns = runtime.time_call(lambda: 0)
    assert rc == 0 and empty_ns < 50_000
    cycles = 20_000_000  # ~10 ms at 2 GHz
    side = torch.cuda.Stream()

    def here() -> int:
        torch.cuda._sleep(cycles)
        return 0

    def elsewhere() -> int:
        with torch.cuda.stream(side):
            torch.cuda._sleep(cycles)
        return 0

    # The first launch of each loads the kernel and ramps the clock (16 ms on an H200 where the
    # warm call takes 10): compare warm calls only.
    runtime.time_call(here)
    runtime.time_call(elsewhere)
    rc, on_stream = runtime.time_call(here)
    rc, off_stream = runtime.time_call(elsewhere)
    assert on_stream > 3e6 and off_stream > 0.7 * on_stream  # work left on another stream is still timed


@pytest.mark.cuda
def test_describe_and_peak(runtime: CudaRuntime) -> None:
    info = runtime.describe()
    assert {"device", "driver", "cuda_runtime", "flush_mib", "event_overhead_ns"} <= info.keys()
    if "H200" in runtime.device_name or "H100" in runtime.device_name:
        assert runtime.peak_flops("bfloat16") > 7e14 and runtime.peak_flops("float32") > 4e14


@pytest.mark.cuda
def test_device_fingerprints_compare_like_with_like(runtime: CudaRuntime) -> None:
    """The device form (integer reductions) is stable and sees a one-bit change, but is not the CPU
    form (XXH3) of the same bytes: the child must fingerprint before and after on one device."""
    from judge.fingerprint import fingerprint
    from judge.problem import load_problem, make_inputs

    made = torch.randn(1 << 20, device="cuda").to(torch.bfloat16)
    copy = runtime.to_device(made)
    assert fingerprint(copy) == fingerprint(made) != fingerprint(made.cpu())
    copy.view(torch.int16)[12345] ^= 1
    assert fingerprint(copy) != fingerprint(made)
    # Inputs made twice on the GPU with one seed are the same bytes (the worker regenerates them).
    problem = load_problem("sparse_flash_attention_grad")
    case = next(c for c in problem.cases_for(Backend.CUDA) if c.name.startswith("t03"))
    first, second = (make_inputs(problem.module, case, 2103, "cuda") for _ in range(2))
    assert {k: fingerprint(v) for k, v in first.items() if isinstance(v, torch.Tensor)} == \
        {k: fingerprint(v) for k, v in second.items() if isinstance(v, torch.Tensor)}


def test_cuda_errors_are_the_kernels_fault_and_others_are_not() -> None:
    illegal = torch.AcceleratorError("CUDA error: an illegal memory access was encountered\n"
                                     "CUDA kernel errors might be asynchronously reported")
    assert cuda_fault_reason(illegal) == "CUDA error: an illegal memory access was encountered"
    assert cuda_fault_reason(RuntimeError("CUDA error: device-side assert triggered")) is not None
    assert cuda_fault_reason(RuntimeError("shape '[3]' is invalid for input of size 4")) is None
    assert cuda_fault_reason(ValueError("CUDA error: not from torch")) is None


def test_child_shares_the_workers_cublas_settings() -> None:
    worker = {"CUBLAS_WORKSPACE_CONFIG": ":4096:8", "NVIDIA_TF32_OVERRIDE": "0", "HOME": "/root"}
    env = runner_env(HostConfig(work_root=Path("/tmp"), settings=(CudaSettings.from_env(worker),)))
    assert env["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8" and env["NVIDIA_TF32_OVERRIDE"] == "0"
    assert "HOME" not in env


@pytest.mark.parametrize("value", ["1", "true"])
def test_a_host_forcing_tf32_is_refused_before_judging(value: str) -> None:
    """R must be true float32: a worker with the TF32 override judges nothing (IE, named)."""
    settings = CudaSettings.from_env({"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE": value}, {"cuda_gpu_name": "NVIDIA H200"})
    with pytest.raises(InternalJudgeError, match="TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"):
        runtime_options(HostConfig(work_root=Path("/tmp"), settings=(settings,)))
    checks = {c.name: c for c in doctor_report_for({"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE": value})}
    assert not checks["float32 matmul"].ok and "unset it" in checks["float32 matmul"].detail


def test_tf32_override_off_is_accepted() -> None:
    settings = CudaSettings.from_env({"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE": "0"}, {"cuda_gpu_name": "NVIDIA H200"})
    assert runtime_options(HostConfig(work_root=Path("/tmp"), settings=(settings,)))["gpu_name"] == "NVIDIA H200"
    assert {c.name: c for c in doctor_report_for({})}["float32 matmul"].ok


def doctor_report_for(environ: dict[str, str]) -> list:
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", raising=False)
        for name, value in environ.items():
            patch.setenv(name, value)
        return doctor_report(HostConfig(work_root=Path("/tmp")))
