"""`msprof op` for the NPU profile of a timed case (docs/profiles.md, "NPU: msprof op").

One untimed, profiled pass of the runner child, after timing: the worker puts
`msprof_op_prefix(...)` in front of the child's argv, holds `device_lock(state_dir, device)`
for the whole run (CANN does not allow two profiling tasks on one device at a time), and
runs it once. The timings msprof reports are of that profiled pass, never the case's timing.

How the output is found after the run: `--output=<out_dir>` makes msprof op write one folder
`<out_dir>/OPPROF_<yyyymmddhhmmss>_<16 letters>/`. With one launch profiled it holds
OpBasicInfo.csv, PipeUtilization.csv, L2Cache.csv, Memory.csv (and ArithmeticUtilization.csv,
MemoryL0.csv, MemoryUB.csv, ResourceConflictRatio.csv, dump/, visualize_data.bin): the layout of
the real on-board run committed in hicann/catlass (tests/judge/npu/data/msprof_op/README.md).
With several launches, the msOpProf guide (Ascend/msopprof docs/en/user_guide/msopprof_user_guide.md)
shows one folder per launch, `OPPROF_*/<OpName>/<n>/` (and `OPPROF_*/device<id>/...` for
multi-device operators), whose files carry a time suffix (`L2Cache_20240603022812284.csv`).
Give `<out_dir>` (or the OPPROF_* folder) to `parse_msprof_op_dir`: it takes the newest
OPPROF_* folder, every folder below it holding an `OpBasicInfo*.csv` as one launch, and details
the first launch. The multi-launch layout is read from the guide only; no real one is recorded.

The command line follows the MindStudio msprof op guide ("tool usage", atlasopdev_16_00851):
`msprof op --launch-count=10 --kernel-name="Add|Sub" --output=./output_data ./test`, options
in `--name=value` form, the application last.
"""

from __future__ import annotations

import csv
import fcntl
import os
import re
import shutil
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from judge.errors import JudgeError
from judge.profiling import Metric, ProfileSection, Table, unavailable

TOOL = "msprof"
# Pipe ratio columns of PipeUtilization.csv: on a cube sub-block (cube0) the aic_* columns are
# filled and the aiv_* are N/A, on a vector sub-block (vector0, vector1) the other way round.
# Older CANN releases name the cube pipe "mac" (aic_mac_ratio, as op_summary still does).
_CUBE_COLUMNS = {"cube": ("aic_cube_ratio", "aic_mac_ratio"), "scalar": ("aic_scalar_ratio",),
                 "mte1": ("aic_mte1_ratio",), "mte2": ("aic_mte2_ratio",), "mte3": ("aic_mte3_ratio",),
                 "fixpipe": ("aic_fixpipe_ratio",)}
_VECTOR_COLUMNS = {"vector": ("aiv_vec_ratio",), "scalar": ("aiv_scalar_ratio",), "mte2": ("aiv_mte2_ratio",),
                   "mte3": ("aiv_mte3_ratio",)}
PIPES = ("cube", "vector", "scalar", "mte1", "mte2", "mte3", "fixpipe")
# L2Cache.csv counters: Atlas A2/A3 name them `<side>_write_cache_hit`, `<side>_r0_read_cache_miss_allocate`
# ...; Ascend 950 `<side>_read_close_hit`, `<side>_write_far_miss` ... (msopprof_performance_data.md).
_L2_HIT = re.compile(r"^(aic|aiv)_\w+_hit$")
_L2_MISS = re.compile(r"^(aic|aiv)_\w+_miss(_allocate)?$")
# What msprof op at CANN 8.x allows (the CANN 8.0 msprof op guide, atlasopdev_16_0082): names of
# [A-Za-z0-9_] joined by "|", matched by prefix, and 1..100 launches. The "*" wildcard and up to 5000
# launches are in the 2026 msOpProf sources and documents only (Ascend/msopprof arg_checker.cpp), not the
# pinned CANN 8.5.0: neither is used.
_KERNEL_NAME = re.compile(r"^[A-Za-z0-9_]+(\|[A-Za-z0-9_]+)*$")
MAX_KERNEL_NAME_CHARS = 1023
MAX_LAUNCH_COUNT = 100
MAX_LAUNCH_SKIP = 1000


class ProfilerBusyError(JudgeError):
    """Another msprof op task holds the device; carries which device and how long we waited."""


def msprof_op_prefix(kernel_name: str, out_dir: str | Path, launch_count: int = 1, *, msprof: str = "msprof",
                     aic_metrics: str | None = None, launch_skip: int = 0) -> list[str]:
    """The argv to put before the runner child's argv for one profiled pass of `kernel_name`.

    `kernel_name` is msprof's filter (a name, or names joined by "|"); `launch_count` caps the
    launches profiled; `aic_metrics` (e.g. "PipeUtilization,Memory") narrows the counters, None
    keeps msprof's default set, which holds the four files parsed here. msprof matches names by
    prefix. Without `--kill=on` the child runs to its end after the launches are collected.
    """
    if not 1 <= launch_count <= MAX_LAUNCH_COUNT:
        raise ValueError(f"launch_count must be within 1..{MAX_LAUNCH_COUNT}, got {launch_count}")
    if not 0 <= launch_skip <= MAX_LAUNCH_SKIP:
        raise ValueError(f"launch_skip must be within 0..{MAX_LAUNCH_SKIP}, got {launch_skip}")
    if not _KERNEL_NAME.match(kernel_name or "") or len(kernel_name) > MAX_KERNEL_NAME_CHARS:
        raise ValueError(f"msprof op takes kernel names of letters, digits and '_' joined by '|' (at most "
                         f"{MAX_KERNEL_NAME_CHARS} characters), "
                         f"got {kernel_name!r} (without one it profiles only the first kernel launched)")
    argv = [msprof, "op", f"--kernel-name={kernel_name}", f"--launch-count={launch_count}"]
    if launch_skip:
        argv.append(f"--launch-skip-before-match={launch_skip}")
    if aic_metrics:
        argv.append(f"--aic-metrics={aic_metrics}")
    argv.append(f"--output={out_dir}")
    return argv


@contextmanager
def device_lock(state_dir: Path, device_id: int | str, timeout_s: float = 600.0) -> Iterator[Path]:
    """Hold the msprof lock of one NPU (a file lock under the worker's state folder).

    Every worker of the host must pass the same `state_dir`. Raises ProfilerBusyError when the
    device stays taken for `timeout_s`; the lock goes with the process if it dies.
    """
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / f"msprof-device-{device_id}.lock"
    deadline = time.monotonic() + timeout_s
    with open(path, "a+") as handle:
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise ProfilerBusyError(f"NPU {device_id} is taken by another msprof op task for more than "
                                            f"{timeout_s:.0f} s (lock {path})") from None
                time.sleep(0.2)
        try:
            handle.seek(0)
            handle.truncate()
            handle.write(f"{os.getpid()}\n")
            handle.flush()
            yield path
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return float(text.strip())
    except ValueError:  # "N/A", ""
        return None


def _read_csv(path: Path) -> list[dict[str, str]]:
    """Rows of one msprof CSV; every line ends with a comma, so the empty last column is dropped."""
    with path.open(newline="", encoding="utf-8-sig") as handle:
        return [{(k or "").strip(): (v or "").strip() for k, v in row.items() if k} for row in csv.DictReader(handle)]


def metric_file(folder: Path, stem: str) -> Path | None:
    """`<stem>.csv` of one launch folder, or its time-suffixed form `<stem>_<digits>.csv` (newest)."""
    plain = folder / f"{stem}.csv"
    if plain.is_file():
        return plain
    suffixed = sorted(p for p in folder.glob(f"{stem}_*.csv") if p.stem[len(stem) + 1:].isdigit())
    return suffixed[-1] if suffixed else None


def _natural(path: Path) -> list[tuple[int, int | str]]:
    return [(0, int(part)) if part.isdigit() else (1, part) for part in path.parts]


def launch_dirs(path: Path) -> list[Path]:
    """The launch folders (each holding an OpBasicInfo*.csv) of the newest OPPROF_* run under `path`."""
    if metric_file(path, "OpBasicInfo") is not None:
        return [path]
    runs = sorted(p for p in path.glob("OPPROF_*") if p.is_dir())
    if not runs and path.name.startswith("OPPROF_"):
        runs = [path]
    if not runs:
        return []
    found = {f.parent for f in runs[-1].rglob("OpBasicInfo*.csv") if metric_file(f.parent, "OpBasicInfo") == f}
    return sorted(found, key=_natural)


@dataclass(frozen=True)
class _Basic:
    op_name: str
    op_type: str
    duration_us: float | None
    block_dim: int | None
    mix_block_dim: int | None


def _basic(folder: Path) -> _Basic:
    found = metric_file(folder, "OpBasicInfo")
    if found is None:
        raise OSError(f"no OpBasicInfo csv in {folder}")
    row = _read_csv(found)[0]
    block, mix = _number(row.get("Block Dim")), _number(row.get("Mix Block Dim"))
    return _Basic(row.get("Op Name", ""), row.get("Op Type", ""), _number(row.get("Task Duration(us)")),
                  None if block is None else int(block), None if mix is None else int(mix))


def _first(row: dict[str, str], names: tuple[str, ...]) -> float | None:
    for name in names:
        value = _number(row.get(name))
        if value is not None:
            return value
    return None


def pipe_rows(folder: Path) -> list[dict[str, object]]:
    """One row per sub-block: its busy time and each pipe's share of it, in %."""
    rows: list[dict[str, object]] = []
    found = metric_file(folder, "PipeUtilization")
    for raw in _read_csv(found) if found else []:
        core = raw.get("sub_block_id", "")
        # Atlas inference parts have one core type and only aic_* columns (msopprof_performance_data.md).
        is_cube = core.startswith("cube") or "aiv_time(us)" not in raw
        columns = _CUBE_COLUMNS if is_cube else _VECTOR_COLUMNS
        time_us = _number(raw.get("aic_time(us)" if is_cube else "aiv_time(us)"))
        row: dict[str, object] = {"block": raw.get("block_id", ""), "core": core, "time_us": time_us}
        for pipe in PIPES:
            ratio = _first(raw, columns[pipe]) if pipe in columns else None
            row[pipe] = None if ratio is None else round(100.0 * ratio, 2)
        rows.append(row)
    return rows


def l2_hit_rate(folder: Path) -> tuple[float | None, list[dict[str, object]]]:
    """The L2 hit rate of all cores (hits over hits and misses, from the counters) and each core's own."""
    hits = accesses = 0.0
    per_core: list[dict[str, object]] = []
    found = metric_file(folder, "L2Cache")
    for raw in _read_csv(found) if found else []:
        for side in ("aic", "aiv"):
            core_hits = [_number(v) for k, v in raw.items() if k.startswith(side) and _L2_HIT.match(k)]
            core_misses = [_number(v) for k, v in raw.items() if k.startswith(side) and _L2_MISS.match(k)]
            if not core_hits or any(c is None for c in core_hits + core_misses):
                continue  # the other core type's cells read N/A
            row_hits = sum(c for c in core_hits if c is not None)
            row_all = row_hits + sum(c for c in core_misses if c is not None)
            hits, accesses = hits + row_hits, accesses + row_all
            own = _number(raw.get(f"{side}_total_hit_rate(%)"))
            if own is None and row_all:
                own = round(100.0 * row_hits / row_all, 6)
            per_core.append({"block": raw.get("block_id", ""), "core": raw.get("sub_block_id", ""), "l2_hit_pct": own})
    return (None if accesses == 0 else 100.0 * hits / accesses), per_core


def main_memory_kib(folder: Path) -> tuple[float, float]:
    """KiB read from and written to main memory (GM) by all cores, summed over Memory.csv's rows."""
    read = write = 0.0
    found = metric_file(folder, "Memory")
    for raw in _read_csv(found) if found else []:
        read += _number(raw.get("read_main_memory_datas(KB)")) or 0.0
        write += _number(raw.get("write_main_memory_datas(KB)")) or 0.0
    return read, write


def _spread(values: list[float]) -> float | None:
    positive = [v for v in values if v > 0]
    if len(positive) < 2:
        return None
    return max(positive) / (sum(positive) / len(positive))


def _mean(values: list[float]) -> float | None:
    return None if not values else sum(values) / len(values)


def _summary(basic: _Basic, pipes: list[dict[str, object]], l2: float | None,
             memory: tuple[float, float]) -> list[Metric]:
    figures = [Metric("kernel", basic.op_name, hint=f"op type {basic.op_type}" if basic.op_type else "")]
    if basic.duration_us is not None:
        figures.append(Metric("task duration under msprof", round(basic.duration_us, 3), "us",
                              "the profiled pass, not the case's timing"))
    if basic.block_dim is not None:
        figures.append(Metric("block dim", basic.block_dim, "", "blocks launched (cube+vector groups on a mix op)"))
    if basic.mix_block_dim is not None:
        figures.append(Metric("mix block dim", basic.mix_block_dim, ""))
    cubes = [r for r in pipes if str(r["core"]).startswith("cube")]
    vectors = [r for r in pipes if not str(r["core"]).startswith("cube")]
    for label, rows, pipe in (("cube busy (mean over cube cores)", cubes, "cube"),
                              ("vector busy (mean over vector cores)", vectors, "vector"),
                              ("MTE2 busy (mean over vector cores)", vectors, "mte2")):
        mean = _mean([float(r[pipe]) for r in rows if r[pipe] is not None])  # type: ignore[arg-type]
        if mean is not None:
            figures.append(Metric(label, round(mean, 2), "%", "share of the core's time the pipe worked"))
    spread = _spread([float(r["time_us"]) for r in vectors or cubes if r["time_us"] is not None])  # type: ignore[arg-type]
    if spread is not None:
        figures.append(Metric("slowest core / mean", round(spread, 3), "",
                              "1.0 is even work; more means some cores idle while one finishes"))
    if l2 is not None:
        figures.append(Metric("L2 hit rate", round(l2, 2), "%", "all cores, from the hit and miss counters"))
    read_kib, write_kib = memory
    if basic.duration_us and (read_kib or write_kib):
        gbps = (read_kib + write_kib) * 1024 / (basic.duration_us * 1e-6) / 1e9
        figures.append(Metric("main memory bandwidth", round(gbps, 2), "GB/s",
                              f"{read_kib / 1024:.1f} MiB read + {write_kib / 1024:.1f} MiB written over the task"))
    return figures


def parse_msprof_op_dir(path: str | Path, *, raw_name: str = "") -> ProfileSection:
    """The msprof op summary of the run written under `path` (the `--output` folder).

    `raw_name` names a copy of the run's CSVs when the caller keeps one beside the report.
    """
    folders = launch_dirs(Path(path))
    if not folders:
        return unavailable(TOOL, f"msprof op wrote no OPPROF_* folder with an OpBasicInfo csv under {path}")
    first = folders[0]
    try:
        basic = _basic(first)
    except (OSError, IndexError, csv.Error) as exc:
        return unavailable(TOOL, f"unreadable OpBasicInfo csv in {first}: {exc}")
    pipes = pipe_rows(first)
    l2, l2_rows = l2_hit_rate(first)
    memory = main_memory_kib(first)
    tables = []
    if pipes:
        tables.append(Table("pipe ratios per block (% of the core's time)", ("block", "core", "time_us") + PIPES,
                            tuple(pipes)))
    if l2_rows:
        tables.append(Table("L2 hit rate per core", ("block", "core", "l2_hit_pct"), tuple(l2_rows)))
    if len(folders) > 1:
        root = next(p for p in first.parents if p.name.startswith("OPPROF_") or p == Path(path))
        rows = []
        for folder in folders:
            try:
                launch = _basic(folder)
            except (OSError, IndexError, csv.Error):
                continue
            rows.append({"launch": folder.relative_to(root).as_posix(), "kernel": launch.op_name,
                         "duration_us": launch.duration_us, "block_dim": launch.block_dim})
        tables.append(Table("launches profiled", ("launch", "kernel", "duration_us", "block_dim"), tuple(rows)))
    return ProfileSection(tool=TOOL, available=True, metrics=tuple(_summary(basic, pipes, l2, memory)),
                          tables=tuple(tables), raw_name=raw_name)


def output_dir_problem(out_dir: str | Path) -> str | None:
    """Why msprof op would refuse `out_dir`, or None.

    The guide asks that the parent of `--output` belong to the current user and be writable by
    neither its group nor others.
    """
    parent = Path(out_dir).resolve().parent
    try:
        info = parent.stat()
    except OSError as exc:
        return f"the parent of the msprof output folder is unreadable: {exc}"
    if info.st_uid != os.geteuid():
        return f"{parent} (parent of the msprof output folder) does not belong to the worker's user"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{parent} (parent of the msprof output folder) is writable by its group or others"
    return None


def msprof_available(msprof: str = "msprof", *, device_node: Path = Path("/dev/davinci_manager")) -> str | None:
    """None when `msprof op` can run here, else the reason a person reads on the report."""
    if shutil.which(msprof) is None:
        return (f"msprof is not on PATH ({msprof!r}): source the CANN toolkit's set_env.sh on the NPU host "
                "(msprof op also needs the toolkit's msopprof)")
    if not device_node.exists():
        return f"no Ascend NPU here ({device_node} is missing)"
    return None
