"""Nsight Compute (`ncu`) for the CUDA profile of a timed case (docs/profiles.md, "CUDA").

One untimed, profiled pass of the runner child, after timing: the worker puts
`ncu_prefix(...)` in front of the child's argv and runs it once. ncu replays each matched
kernel launch several times to collect its counters, so nothing measured under it is a timing.

How the output is found after the run: the prefix passes `--log-file <out_csv>`, so ncu writes
its own report (the `--csv --page details` table, preceded by its `==PROF==` lines and any
`==ERROR==`/`==WARNING==` lines) to that file, and the target keeps its own stdout and stderr
(the runner protocol is not disturbed). Read the file and give its text to `parse_ncu_csv`; a
missing or empty file means ncu never started profiling (see its stderr and `ncu_available`).

What the flags come from (real usage in public repositories, see docs/profiles.md):
- `--csv --log-file X.csv --kernel-name ...` (ArthurinRUC/cutlass-notes `*/profile.sh`),
- `--kernel-name regex:...`, `--launch-count 1` (e.g. poiesis scripts profiling one launch),
- `--section SpeedOfLight|Occupancy|LaunchStats|WarpStateStats` (section identifiers listed by
  `ncu --list-sections`, e.g. AlexisPerry/kitsune-1 `experiments/raytracer/ncu-kokkos.sh`),
- `--metrics <smsp__average_warps_issue_stalled_*_per_issue_active.ratio>`: the stall metrics of
  the WarpStateStats section (its `.section` file, e.g. rodhuega/tfgMatrixNccl
  `ncclPruebas/sections/WarpStateStatistics.section`, and a recorded run listing all of them,
  AlexisPerry/kitsune-1 `experiments/raytracer/prof-reports/raytrace-cuda-ncu.64.log`); metrics
  asked with `--metrics` are printed under the section "Command line profiler metrics" (real
  `--metrics` outputs); stall rows are read from whichever section holds them.

The parser reads both the pre-2021 names (section "GPU Speed Of Light", "SM [%]", "Memory [%]",
recorded on a V100) and the current ones ("GPU Speed Of Light Throughput", "Compute (SM)
Throughput", "Memory Throughput", with the five rule columns), checked on the recorded files in
tests/judge/cuda/data/.
"""

from __future__ import annotations

import csv
import io
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from judge.profiling import Metric, ProfileSection, Table, unavailable

TOOL = "ncu"
# The oldest release this command line is written for. `--page details --csv` and
# `--kernel-name regex:` are older; the floor is a conservative choice, not a measured one.
MIN_NCU_VERSION = (2022, 1)
# Stall reasons of the WarpStateStats section on Volta and newer: the chart of its .section file,
# plus branch_resolving, which a recorded Ampere-era run lists too (tests/judge/cuda/data/).
# "selected" (the warp issued) is in both but is not a stall.
STALL_REASONS = (
    "long_scoreboard", "short_scoreboard", "wait", "barrier", "math_pipe_throttle", "mio_throttle",
    "lg_throttle", "not_selected", "dispatch_stall", "no_instruction", "drain", "membar", "imc_miss",
    "tex_throttle", "sleeping", "misc", "branch_resolving",
)
STALL_METRICS = tuple(f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in STALL_REASONS)
_STALL_RE = re.compile(r"^smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio$")
SECTIONS = ("SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats")
TOP_STALLS = 5

# (section, metric) pairs that mean the same figure across ncu releases, newest first.
_SM_THROUGHPUT = (("GPU Speed Of Light Throughput", "Compute (SM) Throughput"), ("GPU Speed Of Light", "SM [%]"))
_MEM_THROUGHPUT = (("GPU Speed Of Light Throughput", "Memory Throughput"), ("GPU Speed Of Light", "Memory [%]"))
_DRAM_THROUGHPUT = (("GPU Speed Of Light Throughput", "DRAM Throughput"), ("GPU Speed Of Light", "SOL FB"))
_DURATION = (("GPU Speed Of Light Throughput", "Duration"), ("GPU Speed Of Light", "Duration"))
_ACHIEVED = (("Occupancy", "Achieved Occupancy"),)
_THEORETICAL = (("Occupancy", "Theoretical Occupancy"),)
_CYCLES_PER_ISSUE = (("Warp State Statistics", "Warp Cycles Per Issued Instruction"),)
_NS_PER_UNIT = {"ns": 1.0, "nsecond": 1.0, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6,
                "s": 1e9, "second": 1e9}


def ncu_prefix(kernel_regex: str | None, out_csv_or_report: str | Path, launch_count: int = 1, *,
               ncu: str = "ncu", launch_skip: int = 0) -> list[str]:
    """The argv to put before the runner child's argv for one profiled pass.

    `kernel_regex` selects the kernels by function name (None: every kernel); `launch_count`
    caps the launches profiled (each is replayed, so keep it small). `out_csv_or_report` is the
    CSV file ncu writes (its `--log-file`): this judge asks for the CSV directly, no .ncu-rep.
    """
    if launch_count < 1:
        raise ValueError(f"launch_count must be at least 1, got {launch_count}")
    argv = [ncu, "--target-processes", "all"]
    if kernel_regex:
        argv += ["--kernel-name-base", "function", "--kernel-name", f"regex:{kernel_regex}"]
    if launch_skip:
        argv += ["--launch-skip", str(launch_skip)]
    argv += ["--launch-count", str(launch_count)]
    for section in SECTIONS:
        argv += ["--section", section]
    argv += ["--metrics", ",".join(STALL_METRICS)]
    argv += ["--csv", "--page", "details", "--print-units", "base", "--log-file", str(out_csv_or_report)]
    return argv


@dataclass
class _Launch:
    launch_id: str
    kernel: str
    values: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)  # (section, name) -> (unit, value)
    rules: list[tuple[str, str, str]] = field(default_factory=list)  # (section, type, description)

    def first(self, keys: tuple[tuple[str, str], ...]) -> tuple[str, float] | None:
        for key in keys:
            if key in self.values:
                unit, text = self.values[key]
                number = parse_number(text)
                if number is not None:
                    return unit, number
        return None

    def stalls(self) -> list[tuple[str, float]]:
        found = []
        for (_section, name), (_unit, text) in self.values.items():
            match = _STALL_RE.match(name)
            number = parse_number(text) if match and match.group(1) in STALL_REASONS else None
            if match and number is not None:
                found.append((match.group(1), number))
        return sorted(found, key=lambda item: -item[1])


def parse_number(text: str) -> float | None:
    """ncu's value text as a number: thousands separators dropped; None for "n/a" and the like."""
    cleaned = text.strip().replace(",", "")
    try:
        return float(cleaned)
    except ValueError:
        return None


def _error_reason(text: str) -> str:
    errors = [line.strip() for line in text.splitlines() if line.startswith("==ERROR==")]
    if any("ERR_NVGPUCTRPERM" in line for line in errors):
        return ("ncu may not read the GPU performance counters on this host (ERR_NVGPUCTRPERM): the driver "
                "restricts them to administrators; see https://developer.nvidia.com/ERR_NVGPUCTRPERM")
    if errors:
        return "ncu failed: " + " ".join(errors)[:500]
    if "No kernels were profiled" in text:
        return "ncu profiled no kernel: the kernel name filter matched no launch"
    return "ncu wrote no CSV table (no line starting with \"ID\")"


def _read_launches(text: str) -> list[_Launch]:
    start = next((i for i, line in enumerate(text.splitlines()) if line.startswith('"ID",')), None)
    if start is None:
        return []
    body = "\n".join(text.splitlines()[start:])
    launches: dict[str, _Launch] = {}
    for row in csv.DictReader(io.StringIO(body)):
        launch_id = (row.get("ID") or "").strip()
        if not launch_id or row.get("Metric Name") is None:
            continue
        launch = launches.setdefault(launch_id, _Launch(launch_id, (row.get("Kernel Name") or "").strip()))
        section, name = (row.get("Section Name") or "").strip(), (row.get("Metric Name") or "").strip()
        if name:
            launch.values[(section, name)] = ((row.get("Metric Unit") or "").strip(), row.get("Metric Value") or "")
        elif (row.get("Rule Description") or "").strip():
            launch.rules.append((section, (row.get("Rule Type") or "").strip(), row["Rule Description"].strip()))
    return list(launches.values())


def _duration_ns(launch: _Launch) -> float | None:
    found = launch.first(_DURATION)
    if found is None or found[0] not in _NS_PER_UNIT:
        return None
    return found[1] * _NS_PER_UNIT[found[0]]


def _pct(launch: _Launch, keys: tuple[tuple[str, str], ...]) -> float | None:
    found = launch.first(keys)
    return None if found is None else found[1]


def _headline(launch: _Launch, several: bool) -> tuple[Metric, ...]:
    figures: list[Metric] = [Metric("kernel", launch.kernel, hint="the longest launch profiled" if several else "")]
    pairs = (
        ("SM throughput", _SM_THROUGHPUT, "busiest SM unit, % of its peak"),
        ("memory throughput", _MEM_THROUGHPUT, "busiest memory unit (DRAM, L2, L1), % of its peak"),
        ("DRAM throughput", _DRAM_THROUGHPUT, "device memory bandwidth, % of peak"),
        ("achieved occupancy", _ACHIEVED, "active warps per SM, % of the hardware maximum"),
        ("theoretical occupancy", _THEORETICAL, "the ceiling set by registers, shared memory and block size"),
    )
    for name, keys, hint in pairs:
        value = _pct(launch, keys)
        if value is not None:
            figures.append(Metric(name, round(value, 2), "%", hint))
    duration = _duration_ns(launch)
    if duration is not None:
        figures.append(Metric("duration under ncu", round(duration / 1e3, 3), "us",
                              "measured with replays and locked clocks; not the case's timing"))
    cycles = _pct(launch, _CYCLES_PER_ISSUE)
    if cycles is not None:
        figures.append(Metric("warp cycles per issued instruction", round(cycles, 2), "cycle",
                              "latency between two instructions of a warp; the stalls below share it"))
    return tuple(figures)


def _kernel_table(launches: list[_Launch]) -> Table:
    rows = []
    for launch in launches:
        duration = _duration_ns(launch)
        rows.append({"id": launch.launch_id, "kernel": launch.kernel,
                     "duration_us": None if duration is None else round(duration / 1e3, 3),
                     "sm_pct": _pct(launch, _SM_THROUGHPUT), "memory_pct": _pct(launch, _MEM_THROUGHPUT),
                     "achieved_occupancy_pct": _pct(launch, _ACHIEVED)})
    return Table("speed of light per kernel launch",
                 ("id", "kernel", "duration_us", "sm_pct", "memory_pct", "achieved_occupancy_pct"), tuple(rows))


def _stall_table(launches: list[_Launch]) -> Table | None:
    rows = []
    for launch in launches:
        cycles = _pct(launch, _CYCLES_PER_ISSUE)
        for reason, value in launch.stalls()[:TOP_STALLS]:
            share = round(100.0 * value / cycles, 1) if cycles else None
            rows.append({"id": launch.launch_id, "kernel": launch.kernel, "reason": reason.replace("_", " "),
                         "cycles_per_instruction": round(value, 2), "share_pct": share})
    if not rows:
        return None
    return Table("top warp stall reasons", ("id", "kernel", "reason", "cycles_per_instruction", "share_pct"),
                 tuple(rows))


def _rule_table(launches: list[_Launch]) -> Table | None:
    rows = [{"id": launch.launch_id, "section": section, "type": kind, "advice": text}
            for launch in launches for section, kind, text in launch.rules if kind in ("OPT", "WRN")]
    if not rows:
        return None
    return Table("ncu's own findings", ("id", "section", "type", "advice"), tuple(rows))


def parse_ncu_csv(text: str, *, raw_name: str = "") -> ProfileSection:
    """The speed-of-light summary from the text of `ncu --csv --page details` (the `--log-file`).

    `raw_name` names the CSV when the caller keeps it beside the report.
    """
    launches = [launch for launch in _read_launches(text) if launch.values]
    if not launches:
        return unavailable(TOOL, _error_reason(text))
    main = max(launches, key=lambda launch: _duration_ns(launch) or 0.0)
    tables = [_kernel_table(launches)]
    tables += [t for t in (_stall_table(launches), _rule_table(launches)) if t is not None]
    return ProfileSection(tool=TOOL, available=True, metrics=_headline(main, len(launches) > 1),
                          tables=tuple(tables), raw_name=raw_name)


def parse_ncu_version(text: str) -> tuple[int, int] | None:
    """(year, release) from `ncu --version`, whose last line reads "Version 2025.1.1.0 (build ...)"."""
    match = re.search(r"Version (\d{4})\.(\d+)", text)
    return None if match is None else (int(match.group(1)), int(match.group(2)))


def counters_restricted(params_text: str) -> bool:
    """Whether /proc/driver/nvidia/params keeps the counters to administrators.

    The open kernel module publishes `RmProfilingAdminOnly: 1`; older drivers echo the module
    option as `RestrictProfilingToAdminUsers: 1`. Either one set means ERR_NVGPUCTRPERM for others.
    """
    return re.search(r"^\s*(RmProfilingAdminOnly|\w*RestrictProfilingToAdminUsers)\s*:\s*1\s*$",
                     params_text, re.M) is not None


def ncu_available(ncu: str = "ncu", *, params_path: Path = Path("/proc/driver/nvidia/params"),
                  is_admin: bool | None = None) -> str | None:
    """None when `ncu` can profile here, else the reason a person reads on the report."""
    path = shutil.which(ncu)
    if path is None:
        return f"Nsight Compute is not installed here ({ncu!r} is not on PATH)"
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"ncu --version failed: {exc}"
    version = parse_ncu_version(done.stdout + done.stderr)
    if version is None:
        return f"ncu --version printed no version: {(done.stdout + done.stderr).strip()[:200]!r}"
    if version < MIN_NCU_VERSION:
        return f"ncu {version[0]}.{version[1]} is older than {MIN_NCU_VERSION[0]}.{MIN_NCU_VERSION[1]}"
    admin = (os.geteuid() == 0) if is_admin is None else is_admin
    try:
        params = params_path.read_text()
    except OSError:
        params = ""
    if not admin and counters_restricted(params):
        return ("the driver keeps GPU performance counters to administrators (RmProfilingAdminOnly: 1), so ncu "
                "would stop with ERR_NVGPUCTRPERM; load nvidia with NVreg_RestrictProfilingToAdminUsers=0")
    return None
