"""Nsight Compute: the command line, the details-CSV parser on recorded real outputs, tool detection.

The recorded files are in tests/judge/cuda/data/ (provenance in its README.md). The test marked
`cuda` runs the real ncu on a GPU host and is skipped elsewhere.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from judge.tracks.cuda.ncu import (
    SECTIONS,
    STALL_METRICS,
    STALL_REASONS,
    counters_restricted,
    ncu_available,
    ncu_prefix,
    parse_ncu_csv,
    parse_ncu_version,
    parse_number,
)

DATA = Path(__file__).parent / "data"
SM100 = DATA / "ncu_details_sm100_superbench.log"
V100 = DATA / "ncu_details_v100_xplacer.log"
KITSUNE = DATA / "ncu_warp_state_kitsune_excerpt.log"
# `ncu --version` as pasted in a public environment report (see data/README.md).
VERSION_2025 = ("NVIDIA (R) Nsight Compute Command Line Profiler\nCopyright (c) 2018-2025 NVIDIA Corporation\n"
                "Version 2025.1.1.0 (build 35528883) (public-release)\n")
# The message ncu prints when the counters are restricted (NVIDIA's text, quoted in public docs).
PERM_ERROR = ("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance "
              "Counters on the target device 0. For instructions on enabling permissions and to get more "
              "information see https://developer.nvidia.com/ERR_NVGPUCTRPERM\n")


def _metrics(section):  # type: ignore[no-untyped-def]
    return {m.name: m.value for m in section.metrics}


def _table(section, title):  # type: ignore[no-untyped-def]
    return next((t for t in section.tables if t.title == title), None)


def test_current_format_with_rule_columns_gives_the_speed_of_light_figures() -> None:
    section = parse_ncu_csv(SM100.read_text())
    assert section.available and section.tool == "ncu"
    figures = _metrics(section)
    assert figures["kernel"].startswith("cutlass3x_sm100_tensorop_s64x256x32gemm")
    assert figures["SM throughput"] == 23.59
    assert figures["memory throughput"] == 21.68
    assert figures["DRAM throughput"] == 0.74
    assert figures["achieved occupancy"] == 15.53
    assert figures["theoretical occupancy"] == 18.75
    assert figures["duration under ncu"] == 406.24  # "Duration","ns","406240"
    kernels = _table(section, "speed of light per kernel launch")
    assert kernels is not None and len(kernels.rows) == 1
    assert parse_ncu_csv(SM100.read_text(), raw_name="case3.ncu.csv").raw_name == "case3.ncu.csv"


def test_rule_rows_become_ncus_findings_and_not_metrics() -> None:
    section = parse_ncu_csv(SM100.read_text())
    findings = _table(section, "ncu's own findings")
    assert findings is not None
    sections = [row["section"] for row in findings.rows]
    assert sections.count("WorkloadDistribution") == 4
    assert sections[0] == "SpeedOfLight" and "low compute throughput" in findings.rows[0]["advice"]
    assert all(row["type"] == "OPT" for row in findings.rows)


def test_old_format_two_kernels_reports_each_and_the_longest_on_top() -> None:
    section = parse_ncu_csv(V100.read_text())
    kernels = _table(section, "speed of light per kernel launch")
    assert kernels is not None
    assert [(r["id"], r["kernel"]) for r in kernels.rows] == [("0", "cuda_compute_step_factor"),
                                                            ("1", "cuda_compute_flux")]
    assert [r["sm_pct"] for r in kernels.rows] == [18.70, 26.01]
    assert [r["duration_us"] for r in kernels.rows] == [10.72, 39.2]
    figures = _metrics(section)
    assert figures["kernel"] == "cuda_compute_flux"  # 39.2 us against 10.72 us
    assert figures["achieved occupancy"] == 38.71
    assert figures["warp cycles per issued instruction"] == 17.86


def test_memory_throughput_is_the_speed_of_light_percentage_not_the_byte_rate() -> None:
    # The same file has "Memory Workload Analysis","Memory Throughput","byte/second","300965714285.71".
    figures = _metrics(parse_ncu_csv(V100.read_text()))
    assert figures["memory throughput"] == 34.51


def test_neither_recorded_file_has_stall_rows_so_no_stall_table_is_made_up() -> None:
    for path in (SM100, V100):
        assert _table(parse_ncu_csv(path.read_text()), "top warp stall reasons") is None


def _kitsune_stalls() -> dict[str, str]:
    """Stall metric name -> value of the recorded Warp State Statistics section (text page)."""
    found = {}
    for line in KITSUNE.read_text().splitlines():
        parts = line.split()
        if parts and parts[0].startswith("smsp__average_warps_issue_stalled_"):
            found[parts[0]] = parts[-1]
    return found


def test_every_stall_metric_asked_for_exists_in_a_recorded_run() -> None:
    recorded = _kitsune_stalls()
    assert set(STALL_METRICS) <= set(recorded)
    # the only recorded one left out is "selected": the warp issued, which is not a stall
    assert set(recorded) - set(STALL_METRICS) == {"smsp__average_warps_issue_stalled_selected_per_issue_active.ratio"}


def test_stall_rows_are_ranked_and_selected_is_not_a_stall() -> None:
    """Rows of the recorded V100 file carrying the recorded stall names and values.

    The row shape and the section name "Command line profiler metrics" are ncu's (seen in real
    outputs of `--metrics` runs) and the names and values are those of the recorded Warp State
    section; the combination is built here. Only the `cuda`-marked test below sees it for real.
    """
    lines = V100.read_text().splitlines()
    template = next(line for line in lines if line.startswith('"1",') and "Warp Cycles Per Issued" in line)
    extra = [template.replace('"Warp State Statistics","Warp Cycles Per Issued Instruction","","17.86"',
                              f'"Command line profiler metrics","{name}","","{value}"')
             for name, value in _kitsune_stalls().items()]
    section = parse_ncu_csv("\n".join(lines + extra))
    stalls = _table(section, "top warp stall reasons")
    assert stalls is not None
    assert [r["reason"] for r in stalls.rows] == ["no instruction", "wait", "not selected", "math pipe throttle",
                                                  "branch resolving"]
    assert [r["cycles_per_instruction"] for r in stalls.rows] == [7.54, 1.61, 0.89, 0.8, 0.3]
    assert stalls.rows[0]["share_pct"] == round(100 * 7.541575 / 17.86, 1)
    assert {r["kernel"] for r in stalls.rows} == {"cuda_compute_flux"}


def test_counter_permission_error_becomes_the_reason() -> None:
    section = parse_ncu_csv("==PROF== Connected to process 87374 (/tmp/runner)\n" + PERM_ERROR)
    assert not section.available
    assert "ERR_NVGPUCTRPERM" in section.reason and "administrators" in section.reason


def test_text_without_a_table_is_unavailable_with_the_error_lines() -> None:
    section = parse_ncu_csv("==PROF== Connected to process 1\n==ERROR== Failed to profile kernel\n")
    assert not section.available and "Failed to profile kernel" in section.reason
    assert "no line starting" in parse_ncu_csv("").reason


def test_numbers_drop_thousands_separators_and_reject_na() -> None:
    assert parse_number("1,215,000,000.00") == 1215000000.0
    assert parse_number("406240") == 406240.0
    assert parse_number("n/a") is None


def test_prefix_profiles_one_launch_of_the_named_kernels_into_the_csv_file(tmp_path: Path) -> None:
    out = tmp_path / "ncu.csv"
    argv = ncu_prefix("sfa_.*grad", out, launch_count=1)
    assert argv[0] == "ncu"
    assert argv[argv.index("--kernel-name") + 1] == "regex:sfa_.*grad"
    assert argv[argv.index("--kernel-name-base") + 1] == "function"
    assert argv[argv.index("--launch-count") + 1] == "1"
    assert argv[argv.index("--log-file") + 1] == str(out)
    assert [argv[i + 1] for i, a in enumerate(argv) if a == "--section"] == list(SECTIONS)
    assert argv[argv.index("--metrics") + 1].split(",") == list(STALL_METRICS)
    assert argv[argv.index("--page") + 1] == "details" and "--csv" in argv
    assert "--launch-skip" not in argv


def test_prefix_without_a_kernel_filter_and_with_a_skip(tmp_path: Path) -> None:
    argv = ncu_prefix(None, tmp_path / "x.csv", launch_count=3, ncu="/opt/ncu/ncu", launch_skip=2)
    assert argv[0] == "/opt/ncu/ncu" and "--kernel-name" not in argv
    assert argv[argv.index("--launch-skip") + 1] == "2" and argv[argv.index("--launch-count") + 1] == "3"
    with pytest.raises(ValueError):
        ncu_prefix("k", tmp_path / "x.csv", launch_count=0)


def test_stall_metric_names_follow_the_warp_state_section() -> None:
    assert "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio" in STALL_METRICS
    assert len(set(STALL_METRICS)) == len(STALL_REASONS) == 17


def test_version_and_counter_restriction_parsing() -> None:
    assert parse_ncu_version(VERSION_2025) == (2025, 1)
    assert parse_ncu_version("ncu: command not found") is None
    assert counters_restricted("ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 1\n")
    assert not counters_restricted("RmProfilingAdminOnly: 0\n")
    assert counters_restricted("RestrictProfilingToAdminUsers: 1\n")


def _fake_ncu(folder: Path, version_text: str) -> Path:
    script = folder / "ncu"
    script.write_text(f"#!/bin/sh\nprintf '%s' '{version_text}'\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_ncu_available_reports_each_missing_piece(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert "not on PATH" in (ncu_available() or "")
    _fake_ncu(tmp_path, VERSION_2025)
    params = tmp_path / "params"
    params.write_text("RmProfilingAdminOnly: 1\n")
    reason = ncu_available(params_path=params, is_admin=False)
    assert reason is not None and "ERR_NVGPUCTRPERM" in reason
    assert ncu_available(params_path=params, is_admin=True) is None
    params.write_text("RmProfilingAdminOnly: 0\n")
    assert ncu_available(params_path=params, is_admin=False) is None
    _fake_ncu(tmp_path, VERSION_2025.replace("2025.1.1.0", "2020.1.0.0"))
    assert "older than" in (ncu_available(params_path=params, is_admin=False) or "")


def _cuda_skip_reason() -> str | None:
    reason = ncu_available()
    if reason:
        return reason
    try:
        import torch
    except ImportError:
        return "torch is missing"
    return None if torch.cuda.is_available() else "no CUDA device"


@pytest.mark.cuda
def test_real_ncu_profiles_a_torch_kernel(tmp_path: Path) -> None:
    reason = _cuda_skip_reason()
    if reason:
        pytest.skip(reason)
    out = tmp_path / "ncu.csv"
    child = [sys.executable, "-c",
             "import torch; x = torch.ones(1 << 22, device='cuda'); y = x * 2; torch.cuda.synchronize()"]
    done = subprocess.run(ncu_prefix("elementwise", out, launch_count=1) + child, capture_output=True, text=True,
                          timeout=600, env=os.environ.copy())
    assert out.is_file(), done.stderr[-2000:]
    section = parse_ncu_csv(out.read_text())
    assert section.available, section.reason
    figures = _metrics(section)
    assert 0 < figures["memory throughput"] <= 100 and 0 < figures["achieved occupancy"] <= 100
    stalls = _table(section, "top warp stall reasons")
    assert stalls is not None, "no stall rows: the --metrics rows are not where parse_ncu_csv looks"
    assert {r["reason"].replace(" ", "_") for r in stalls.rows} <= set(STALL_REASONS)
