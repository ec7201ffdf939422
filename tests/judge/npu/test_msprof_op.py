"""msprof op: the command line, the output-folder parser on a recorded real run, the device lock.

The recorded run is tests/judge/npu/data/msprof_op/OPPROF_20250304172135_UZXJVIHHTTNZFAJD/, an
on-board run of a mix (cube+vector) GEMV kernel on an Ascend910B3 committed in hicann/catlass
(provenance in data/msprof_op/README.md). The `npu`-marked test runs the real tool.
"""

from __future__ import annotations

import csv
import multiprocessing
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from judge.tracks.npu.msprof_op import (
    PIPES,
    ProfilerBusyError,
    device_lock,
    l2_hit_rate,
    launch_dirs,
    main_memory_kib,
    metric_file,
    msprof_available,
    msprof_op_prefix,
    output_dir_problem,
    parse_msprof_op_dir,
    pipe_rows,
)
from tests.judge.npu.conftest import npu_hardware_missing

OUT = Path(__file__).parent / "data" / "msprof_op"
RUN = OUT / "OPPROF_20250304172135_UZXJVIHHTTNZFAJD"


def _metrics(section):  # type: ignore[no-untyped-def]
    return {m.name: m.value for m in section.metrics}


def _table(section, title_start):  # type: ignore[no-untyped-def]
    return next((t for t in section.tables if t.title.startswith(title_start)), None)


def test_output_folder_is_found_from_the_output_root_or_the_run_itself() -> None:
    assert launch_dirs(OUT) == [RUN]
    assert launch_dirs(RUN) == [RUN]


def test_basic_info_gives_duration_and_block_dims() -> None:
    figures = _metrics(parse_msprof_op_dir(OUT))
    assert figures["kernel"] == "FP32CMGemvAiv"
    assert figures["task duration under msprof"] == 494.24
    assert figures["block dim"] == 20 and figures["mix block dim"] == 40
    assert parse_msprof_op_dir(OUT, raw_name="case3.msprof").raw_name == "case3.msprof"


def test_pipe_ratios_per_block_read_the_cube_and_vector_columns_of_each_core() -> None:
    rows = pipe_rows(RUN)
    assert len(rows) == 60  # 20 blocks x (cube0, vector0, vector1)
    first_cube, first_vector = rows[0], rows[1]
    assert (first_cube["block"], first_cube["core"], first_cube["time_us"]) == ("0", "cube0", 1.010556)
    assert first_cube["cube"] == 0.0 and first_cube["scalar"] == 0.2 and first_cube["vector"] is None
    assert (first_vector["core"], first_vector["time_us"]) == ("vector0", 386.785004)
    assert first_vector["vector"] == 38.32 and first_vector["mte2"] == 63.21 and first_vector["mte3"] == 0.03
    assert first_vector["cube"] is None and first_vector["fixpipe"] is None
    section = parse_msprof_op_dir(OUT)
    table = _table(section, "pipe ratios per block")
    assert table is not None and table.columns == ("block", "core", "time_us") + PIPES and len(table.rows) == 60


def test_the_cube_left_idle_and_the_uneven_vector_cores_show_in_the_summary() -> None:
    figures = _metrics(parse_msprof_op_dir(OUT))
    assert figures["cube busy (mean over cube cores)"] == 0.0
    # vector core times run from 2.77 us to 388.96 us in the file: most cores wait for a few.
    assert figures["slowest core / mean"] > 2.5
    with (RUN / "PipeUtilization.csv").open() as handle:
        times = [float(r["aiv_time(us)"]) for r in csv.DictReader(handle) if r["sub_block_id"] != "cube0"]
    assert figures["slowest core / mean"] == round(max(times) / (sum(times) / len(times)), 3)


def test_l2_hit_rate_is_recomputed_from_the_counters_and_matches_each_cores_own_column() -> None:
    overall, per_core = l2_hit_rate(RUN)
    vector0 = next(r for r in per_core if (r["block"], r["core"]) == ("0", "vector0"))
    assert vector0["l2_hit_pct"] == 13.810987
    # Block 0 vector0: hits 24+9525+9731 of 24+4+9525+60203+9731+60112 accesses = 13.81 %, the file's figure.
    assert round(100 * (24 + 9525 + 9731) / (24 + 4 + 9525 + 60203 + 9731 + 60112), 4) == round(13.810987, 4)
    assert overall is not None and 0 < overall < 100
    assert _metrics(parse_msprof_op_dir(OUT))["L2 hit rate"] == round(overall, 2)


def test_main_memory_bandwidth_uses_the_data_volumes_over_the_task_duration() -> None:
    read_kib, write_kib = main_memory_kib(RUN)
    # The per-core bandwidth column of the file is that core's volume over the task duration (GiB/s):
    # block 0 vector0 read 17446.375 KiB in 494.24 us -> 33.664131 GiB/s, as Memory.csv says.
    assert round(17446.375 * 1024 / 494.24e-6 / 2**30, 4) == round(33.664131, 4)
    expected = (read_kib + write_kib) * 1024 / 494.24e-6 / 1e9
    assert _metrics(parse_msprof_op_dir(OUT))["main memory bandwidth"] == round(expected, 2)
    # Only 16 of the 40 vector cores (blocks 0-7) read anything; they are the 16 that ran long.
    with (RUN / "Memory.csv").open() as handle:
        readers = {(r["block_id"], r["sub_block_id"]) for r in csv.DictReader(handle)
                   if r["read_main_memory_datas(KB)"] != "N/A" and float(r["read_main_memory_datas(KB)"]) > 100}
    busy = {(r["block"], r["core"]) for r in pipe_rows(RUN) if r["core"] != "cube0" and float(r["time_us"]) > 100}
    assert len(readers) == 16 and readers == busy
    assert read_kib == pytest.approx(16 * 17446.375, rel=0.01)


def test_a_folder_without_a_run_is_unavailable(tmp_path: Path) -> None:
    section = parse_msprof_op_dir(tmp_path)
    assert not section.available and "OPPROF_" in section.reason


def test_several_launches_in_the_guides_layout_are_listed_and_the_first_is_detailed(tmp_path: Path) -> None:
    """The multi-launch layout of the msOpProf guide, `OPPROF_*/<OpName>/<n>/<metric>_<time>.csv`.

    The guide shows the layout but no real run of it is recorded: the files are the recorded
    single-launch run's, copied under the guide's names.
    """
    run = tmp_path / "OPPROF_20250304172135_UZXJVIHHTTNZFAJD"
    for index in (0, 1, 10, 2):
        launch = run / "FP32CMGemvAiv" / str(index)
        launch.mkdir(parents=True)
        for source in RUN.glob("*.csv"):
            shutil.copy(source, launch / f"{source.stem}_2025030417213{index % 10}000.csv")
    assert metric_file(run / "FP32CMGemvAiv" / "0", "L2Cache") is not None
    section = parse_msprof_op_dir(tmp_path)
    launches = _table(section, "launches profiled")
    assert launches is not None
    assert [r["launch"] for r in launches.rows] == [f"FP32CMGemvAiv/{i}" for i in (0, 1, 2, 10)]
    assert _metrics(section)["block dim"] == 20 and _table(section, "pipe ratios per block") is not None


def test_l2_counters_of_the_ascend_950_names_are_summed_too(tmp_path: Path) -> None:
    """Column names from the guide's Ascend 950 L2Cache table (no recorded 950 file exists here)."""
    (tmp_path / "L2Cache.csv").write_text(
        "block_id,sub_block_id,aiv_time(us),aiv_read_close_hit,aiv_read_close_miss,aiv_read_far_hit,"
        "aiv_read_far_miss,aiv_write_close_hit,aiv_write_close_miss,aiv_read_hit_rate(%),\n"
        "0,vector0,10.0,30,10,20,20,40,0,62.5,\n")
    overall, per_core = l2_hit_rate(tmp_path)
    assert overall == 100.0 * 90 / 120 and per_core[0]["l2_hit_pct"] == 75.0


def test_prefix_is_msprof_op_with_the_documented_options(tmp_path: Path) -> None:
    argv = msprof_op_prefix("sfa_grad", tmp_path / "prof", launch_count=1)
    assert argv == ["msprof", "op", "--kernel-name=sfa_grad", "--launch-count=1", f"--output={tmp_path / 'prof'}"]
    argv = msprof_op_prefix("Add|Sub", "out", 10, aic_metrics="PipeUtilization", launch_skip=5)
    assert "--launch-skip-before-match=5" in argv and "--aic-metrics=PipeUtilization" in argv
    assert argv[-1] == "--output=out"
    names = "sfag_zero|sfag_main|sfag_finalize"
    assert msprof_op_prefix(names, "out")[2] == f"--kernel-name={names}"
    # CANN 8.x takes [A-Za-z0-9_] names only (no "*", which only 2026 msOpProf documents allow), 1..100 launches.
    for bad_name in ("", "add-custom", "a b", "Add||Sub", "x;rm", "*", "sfa_*", "k" * 1024):
        with pytest.raises(ValueError):
            msprof_op_prefix(bad_name, "out")
    assert msprof_op_prefix("k", "out", launch_count=100)[3] == "--launch-count=100"
    for bad_count in (0, 101, 5000):
        with pytest.raises(ValueError):
            msprof_op_prefix("k", "out", launch_count=bad_count)
    with pytest.raises(ValueError):
        msprof_op_prefix("k", "out", launch_skip=1001)


def test_output_folder_parent_must_be_private_to_the_worker(tmp_path: Path) -> None:
    parent = tmp_path / "state"
    parent.mkdir(mode=0o755)
    parent.chmod(0o755)
    assert output_dir_problem(parent / "prof") is None
    parent.chmod(0o777)
    assert "writable by its group or others" in (output_dir_problem(parent / "prof") or "")


def _hold_lock(state_dir: str, ready, release) -> None:  # type: ignore[no-untyped-def]
    with device_lock(Path(state_dir), 3):
        ready.set()
        release.wait(10)


def test_device_lock_lets_one_task_per_device_and_frees_it(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    ready, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold_lock, args=(str(tmp_path), ready, release))
    holder.start()
    try:
        assert ready.wait(10)
        with pytest.raises(ProfilerBusyError, match="NPU 3"):
            with device_lock(tmp_path, 3, timeout_s=0.5):
                pass
        with device_lock(tmp_path, 4, timeout_s=0.5):  # another device is free
            pass
    finally:
        release.set()
        holder.join(10)
    started = time.monotonic()
    with device_lock(tmp_path, 3, timeout_s=5):
        assert time.monotonic() - started < 5


def test_msprof_available_names_what_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert "not on PATH" in (msprof_available() or "")
    fake = tmp_path / "msprof"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    assert "no Ascend NPU" in (msprof_available(device_node=tmp_path / "davinci_manager") or "")
    (tmp_path / "davinci_manager").touch()
    assert msprof_available(device_node=tmp_path / "davinci_manager") is None


@pytest.mark.npu
def test_real_msprof_op_profiles_a_torch_npu_kernel(tmp_path: Path) -> None:
    reason = npu_hardware_missing() or msprof_available()
    if reason:
        pytest.skip(reason)
    child = [sys.executable, "-c", "import torch, torch_npu; x = torch.ones(1 << 20).npu(); y = x + x; "
             "torch.npu.synchronize()"]
    with device_lock(tmp_path / "state", 0):
        subprocess.run(msprof_op_prefix("Add", tmp_path / "prof", 1) + child, timeout=600, check=False)
    section = parse_msprof_op_dir(tmp_path / "prof")
    assert section.available, section.reason
    figures = _metrics(section)
    assert figures["task duration under msprof"] > 0 and figures["block dim"] >= 1
    assert _table(section, "pipe ratios per block") is not None
