"""A worker pinned to one accelerator: it, its probe and its runner children all see that one."""

from __future__ import annotations

import logging
import os

import pytest
from typer.testing import CliRunner

from api.cli import build_app
from judge.backends import Backend
from judge.track_settings.cuda import CudaSettings
from judge.track_settings.npu import NpuSettings
from judge.tracks.cuda import runner_env
from workers.context import WorkerContext, pin_device
from workers.settings import WorkerSettings


def test_pin_device_sets_the_view_of_each_backend() -> None:
    env: dict[str, str] = {"PATH": "/usr/bin"}
    assert pin_device(Backend.CUDA, "3", env) == {"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": "3"}
    assert env["CUDA_VISIBLE_DEVICES"] == "3" and env["PATH"] == "/usr/bin"
    npu: dict[str, str] = {}
    assert pin_device(Backend.NPU, "5", npu) == {"ASCEND_RT_VISIBLE_DEVICES": "5"} and npu
    untouched: dict[str, str] = {}
    assert pin_device(Backend.CUDA, None, untouched) == {} and untouched == {}
    assert pin_device(Backend.CPU, "1", untouched) == {} and untouched == {}


def test_a_cuda_workers_runner_child_gets_the_workers_gpu(settings, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "placeholder")  # restored after the test
    monkeypatch.setenv("CUDA_DEVICE_ORDER", "placeholder")
    pin_device(Backend.CUDA, "1")
    host = WorkerContext(settings).host_config(Backend.CUDA)
    env = runner_env(host)
    assert env["CUDA_VISIBLE_DEVICES"] == "1" and env["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"


def test_an_npu_worker_judges_on_its_device(settings) -> None:  # type: ignore[no-untyped-def]
    assert WorkerContext(settings).host_config(Backend.NPU).track_settings(NpuSettings).device == "0"
    pinned = settings.model_copy(update={"device": "6"})
    assert WorkerContext(pinned).host_config(Backend.NPU).track_settings(NpuSettings).device == "6"


@pytest.fixture
def worker_env(monkeypatch: pytest.MonkeyPatch, tmp_path):  # type: ignore[no-untyped-def]
    # `opjudge worker` configures the root logger for the process: undone after each test.
    monkeypatch.setattr(logging.root, "handlers", list(logging.root.handlers))
    monkeypatch.setattr(logging.root, "level", logging.root.level)
    monkeypatch.setenv("OPJUDGE_DATABASE_URL", f"sqlite:///{tmp_path / 'opjudge.db'}")
    monkeypatch.setenv("OPJUDGE_JUDGE_SECRET", "judge-secret-for-device-tests")
    monkeypatch.setenv("OPJUDGE_TOKEN_PEPPER", "token-pepper-for-device-tests")
    monkeypatch.setenv("OPJUDGE_BROKER_URL", "redis://127.0.0.1:1/0")
    monkeypatch.setenv("OPJUDGE_SANDBOX_MODE", "strict")
    monkeypatch.delenv("OPJUDGE_DEVICE", raising=False)
    for name in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"):
        monkeypatch.setenv(name, "placeholder")  # so that monkeypatch restores what the worker sets
    return tmp_path


def test_worker_device_option_pins_before_the_probe(worker_env, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    seen: dict[str, object] = {}

    def probe(backend, host, *, queue):  # type: ignore[no-untyped-def]
        # The probe runs first in a child process that inherits this environment: it must already
        # be pinned. The refusal below stops the worker before Celery starts.
        seen.update(visible=os.environ.get("CUDA_VISIBLE_DEVICES"), cuda=host.track_settings(CudaSettings), queue=queue)
        return {"sandbox": "degraded"}

    monkeypatch.setattr("workers.worker.describe_worker", probe)
    result = CliRunner().invoke(build_app(), ["worker", "--queue", "judge.cuda.h200", "--device", "2"])  # type: ignore[arg-type]
    assert result.exit_code == 2 and "this host gives 'degraded'" in result.output, result.output
    assert seen["visible"] == "2" and seen["queue"] == "judge.cuda.h200"
    assert seen["cuda"] == CudaSettings(visible_devices="2", device_order="PCI_BUS_ID")


def test_a_bad_device_is_refused_with_its_reason(worker_env) -> None:  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(build_app(), ["worker", "--queue", "judge.cuda.h200", "--device", "0;reboot"])  # type: ignore[arg-type]
    assert result.exit_code == 2 and "pattern" in result.output, result.output
    assert WorkerSettings(device="GPU-5e2b1f0c").device == "GPU-5e2b1f0c"
