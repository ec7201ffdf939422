"""`opjudge doctor --baselines`: every timed case's baseline runs once before a contest."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from judge.backends import Backend, CaseSet
from judge.baseline_preflight import BaselineSourcesMissing, baseline_sources, check_baselines, plan
from judge.baseline_trust import BASELINE_KERNEL
from judge.host_config import HostConfig
from judge.problem import load_problem
from judge.track_settings.npu import NpuSettings
from judge.tracks import get_track
from tests.judge.conftest import least_timing
from tests.judge.npu.conftest import make_fake_cann

VENDOR = "torch_npu.npu_sparse_flash_attention_grad"


def _npu_host(tmp_path: Path, version: str) -> HostConfig:
    cann = make_fake_cann(tmp_path / "cann" / version, version=version)
    return HostConfig(work_root=tmp_path / "work", settings=(NpuSettings(ascend_home=cann, soc="Ascend910B3"),))


def test_the_plan_follows_the_workers_cann_version(tmp_path: Path) -> None:
    problem = load_problem("sparse_flash_attention_grad")
    pinned = {c.name: c for c in plan(problem, Backend.NPU, _npu_host(tmp_path, "8.5.0"), vendor_name=VENDOR)}
    # The K = 1024 cases failed at the vendor's tiling at 8.5.0 (IE before); the baseline kernel times them.
    for name in ("b06_mla_absorb_bs16", "p06_mla_absorb_bs8"):
        assert pinned[name].baseline == BASELINE_KERNEL and "K = 1024" in (pinned[name].why_not_vendor or "")
    assert pinned["b05_mla_absorb_tokens"].baseline == VENDOR
    newer = {c.name: c for c in plan(problem, Backend.NPU, _npu_host(tmp_path, "9.0.0"), vendor_name=VENDOR)}
    assert newer["b06_mla_absorb_bs16"].baseline == VENDOR
    # A worker without the operator: the baseline kernel times every case.
    assert {c.baseline for c in plan(problem, Backend.NPU, _npu_host(tmp_path, "8.5.0"))} == {BASELINE_KERNEL}


def test_the_npu_baselines_sources_are_the_starters_files() -> None:
    names = [s.name for s in baseline_sources(load_problem("sparse_flash_attention_grad"), Backend.NPU)]
    assert names == ["sfag_device.h", "sfag_finalize_kernel.cpp", "sfag_host.cpp", "sfag_main_kernel.cpp",
                     "sfag_tiling.h", "sfag_zero_kernel.cpp"]
    problem = load_problem("add_mul_relu")
    with pytest.raises(BaselineSourcesMissing, match="no npu baseline"):
        baseline_sources(dataclasses.replace(problem, baselines={}), Backend.NPU)


@pytest.fixture
def cpu_host(tmp_path: Path) -> HostConfig:
    return HostConfig(work_root=tmp_path, limits=least_timing(get_track(Backend.CPU).limits), sandbox_mode="auto",
                      cache_dir=tmp_path / "cache")


@pytest.mark.usefixtures("no_forged_timer_check")
def test_every_timed_case_of_the_cpu_baseline_runs_once(cpu_host: HostConfig) -> None:
    problem = load_problem("add_mul_relu")
    report = check_baselines(problem, Backend.CPU, cpu_host)
    timed = {c.name for c in problem.cases_for(Backend.CPU, [s for s in CaseSet if s.timed])}
    assert report.ok, report.render()
    assert set(report.case_verdicts) == timed == {c.name for c in report.planned}
    assert set(report.timed_by.values()) == {BASELINE_KERNEL}
    assert "baselines ready: yes" in report.render()


@pytest.mark.usefixtures("no_forged_timer_check")
def test_a_baseline_that_fails_is_reported_to_the_organiser(cpu_host: HostConfig, tmp_path: Path) -> None:
    problem = load_problem("add_mul_relu")
    broken = tmp_path / "broken_baseline.cpp"
    broken.write_text(problem.baselines[Backend.CPU].read_text().replace("return 0;", "return 3;"))
    report = check_baselines(dataclasses.replace(problem, baselines={Backend.CPU: broken}), Backend.CPU, cpu_host)
    assert not report.ok
    assert "baselines ready: NO" in report.render() and report.verdict != "AC"
