"""The device-time reader against recorded profiler tables (tests/judge/npu/data/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.tracks.npu.device_time import (
    DeviceReading,
    ProfileReadError,
    parse_tasks,
    profile_tables,
    read_profile,
)

DATA = Path(__file__).parent / "data"


def _text(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def test_torch_npu_kernel_details_of_an_a2_host() -> None:
    tasks = parse_tasks(_text("kernel_details_mstt_a2.csv"))
    assert [t.core for t in tasks] == ["AI_CORE", "AI_CORE", "MIX_AIC", "AI_VECTOR_CORE"]
    assert tasks[0].name == "aclnnMatmul_MatMulCommon_MatMulV2"
    assert tasks[0].start_us == pytest.approx(1736413971558972.912)  # quoted, with a trailing tab
    assert [t.duration_us for t in tasks] == [185.504, 501.17, 410.188, 26.78]
    reading = DeviceReading.of(tasks)
    assert (reading.launches, reading.device_ns) == (4, 1_123_642)


def test_older_kernel_details_with_communication_ai_cpu_and_dsa_tasks() -> None:
    tasks = parse_tasks(_text("kernel_details_mstt_training.csv"))
    assert [t.core for t in tasks] == ["AI_VECTOR_CORE", "HCCL", "AI_VECTOR_CORE", "AI_VECTOR_CORE", "AI_CPU",
                                       "DSA_SQE", "AI_CORE"]
    assert tasks[3].name == "atomic_memset-1_69_2208226_1_0"  # an operator's memset is a task of its own
    reading = DeviceReading.of(tasks)
    assert reading.launches == 7 and reading.device_ns == 311_611_120


def test_msprof_op_summary_names_the_same_fields_differently() -> None:
    tasks = parse_tasks(_text("op_summary_cann_mix.csv"), source="op_summary_001.csv")
    assert [(t.core, t.duration_us) for t in tasks] == [("MIX_AIC", 42399.12), ("MIX_AIC", 42058.48)]
    assert DeviceReading.of(tasks).device_ns == 84_457_600


def test_a_table_it_does_not_know_is_refused_with_the_reason() -> None:
    with pytest.raises(ProfileReadError, match="Duration"):
        parse_tasks("Name,Accelerator Core,Start Time(us)\nk,AI_CORE,1\n")
    broken = _text("kernel_details_mstt_a2.csv").replace(",185.504,", ",N/A,")
    with pytest.raises(ProfileReadError, match="line 2: the duration 'N/A'"):
        parse_tasks(broken)
    assert parse_tasks("") == []


def _profiler_folder(root: Path, table: str | None, layout: str = "torch_npu") -> Path:
    """The folder tree torch_npu's tensorboard_trace_handler leaves (Ascend PyTorch Profiler guide)."""
    run = root / "host_123_20250101000000000_ascend_pt"
    if layout == "torch_npu":
        out = run / "ASCEND_PROFILER_OUTPUT"
        name = "kernel_details.csv"
    else:
        out = run / "PROF_000001_20250101000000000_ABCDEFGH" / "mindstudio_profiler_output"
        name = "op_summary_20250101000000.csv"
    out.mkdir(parents=True)
    if table is not None:
        (out / name).write_text(_text(table), encoding="utf-8")
    return root


def test_reading_a_profilers_output_folder(tmp_path: Path) -> None:
    folder = _profiler_folder(tmp_path / "a", "kernel_details_mstt_a2.csv")
    assert read_profile(folder).launches == 4
    summary = _profiler_folder(tmp_path / "b", "op_summary_cann_mix.csv", layout="msprof")
    assert read_profile(summary).device_ns == 84_457_600
    # The profiler ran and saw no task: no table, no launches (the empty call's reading).
    assert profile_tables(_profiler_folder(tmp_path / "c", None)) == []
    assert read_profile(tmp_path / "c") == DeviceReading(0, 0)
    (tmp_path / "d").mkdir()
    with pytest.raises(ProfileReadError, match="wrote no output"):
        read_profile(tmp_path / "d")


def test_an_empty_windows_tasks_are_taken_off() -> None:
    call = DeviceReading(device_ns=5_000, launches=3)
    assert call.less(DeviceReading(device_ns=1_000, launches=1)) == DeviceReading(4_000, 2)
    assert DeviceReading(100, 0).less(DeviceReading(500, 1)) == DeviceReading(0, 0)
