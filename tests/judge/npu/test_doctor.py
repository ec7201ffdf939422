"""`opjudge doctor` on this machine: the NPU track is reported unavailable, with the reasons."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.doctor import CheckStatus, DoctorCheck, doctor_report, render_doctor
from judge.host_config import HostConfig
from judge.track_settings.npu import NpuSettings
from tests.judge.npu.conftest import npu_hardware_missing


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> list[DoctorCheck]:
    return doctor_report(HostConfig(work_root=tmp_path_factory.mktemp("doctor")))


def _check(report: list[DoctorCheck], area: str, name: str) -> DoctorCheck:
    return next(c for c in report if c.area == area and c.name == name)


def test_every_backend_and_the_sandbox_are_covered(report: list[DoctorCheck]) -> None:
    assert {c.area for c in report} >= {"host", "cpu", "cuda", "npu", "sandbox"}
    assert {c.name for c in report if c.area == "npu"} == {"CANN toolkit", "cmake", "torch_npu", "device nodes",
                                                           "driver"}
    assert all(c.detail for c in report)


@pytest.mark.skipif(npu_hardware_missing() is None, reason="this is an NPU host")
def test_on_this_machine_the_npu_track_is_unavailable_and_says_why(report: list[DoctorCheck]) -> None:
    cann = _check(report, "npu", "CANN toolkit")
    assert cann.status is CheckStatus.UNAVAILABLE and "ascend_home" in cann.detail and "set_env.sh" in cann.detail
    nodes = _check(report, "npu", "device nodes")
    assert nodes.status is CheckStatus.UNAVAILABLE and "/dev/davinci_manager" in nodes.detail
    text = render_doctor(report)
    ready = text.splitlines()[-1]
    assert ready.startswith("backends ready on this host:") and "npu" not in ready


def test_a_cann_tree_and_soc_make_the_toolkit_check_pass(tmp_path: Path, fake_cann: Path) -> None:
    cann_host = HostConfig(work_root=tmp_path, settings=(NpuSettings(ascend_home=fake_cann, soc="Ascend910B3"),))
    checks = doctor_report(cann_host)
    cann = _check(checks, "npu", "CANN toolkit")
    assert cann.status is CheckStatus.OK and cann.detail == "CANN 8.0.RC2 bisheng for Ascend910B3"


def test_the_cpu_track_is_ready_here(report: list[DoctorCheck]) -> None:
    assert _check(report, "cpu", "compiler").ok
    assert "cpu" in render_doctor(report).splitlines()[-1]


def test_rendering_aligns_columns() -> None:
    checks = [DoctorCheck("npu", "driver", CheckStatus.UNAVAILABLE, "missing"),
              DoctorCheck("cpu", "compiler", CheckStatus.OK, "g++ 12")]
    lines = render_doctor(checks).splitlines()
    assert lines[0] == "npu  driver    unavailable  missing"
    assert lines[1] == "cpu  compiler  ok           g++ 12"
    assert lines[-1] == "backends ready on this host: cpu"  # a backend with no checks is not called ready
