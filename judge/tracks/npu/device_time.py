"""Device time and kernel launches of one timed call, read from torch_npu's profiler output.

The NPU track's "device" timing (a competition setting, runtime.py) runs each timed call under
`torch_npu.profiler.profile` and reads what the profiler's analysis writes:

- `<worker>_<time>_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv`, one row per task the
  device ran (torch_npu's own table: `Name`, `Accelerator Core`, `Start Time(us)`, `Duration(us)`);
- failing that, msprof's `mindstudio_profiler_output/op_summary_*.csv`, the same rows under
  msprof's names (`Op Name`, `Task Type`, `Task Start Time(us)`, `Task Duration(us)`).

The two namings are torch_npu's own mapping (Ascend/pytorch
`torch_npu/profiler/analysis/prof_common_func/_csv_headers.py`: `OP_SUMMARY_SHOW_HEADERS` and
`OP_SUMMARY_KERNEL_BASE_HEADERS`). The parser was written against recorded files, excerpts of which
are in tests/judge/npu/data (README there says where each came from). Quirks those files show and
this parser handles: extra columns that depend on the profiler's settings (a table is read by its
header, never by position), start times quoted with a trailing tab (`"1736413971558972.912\t"`),
shapes quoted twice, `N/A` in columns a task type has no value for (a communication task's ids).

What counts: every row is one task the call put on the device (AI Core, vector core, MIX, AI CPU,
DSA and memset tasks alike), so the launches of a call are its rows and its device time is the sum
of their durations. Gaps between tasks and host work are not device time.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from judge.errors import JudgeError

# (torch_npu's kernel_details.csv name, msprof's op_summary name) of each field read.
NAME_COLUMNS = ("Name", "Op Name")
CORE_COLUMNS = ("Accelerator Core", "Task Type")
START_COLUMNS = ("Start Time(us)", "Task Start Time(us)")
DURATION_COLUMNS = ("Duration(us)", "Task Duration(us)")

KERNEL_DETAILS = "kernel_details.csv"
PROFILER_OUTPUT = "ASCEND_PROFILER_OUTPUT"
MSPROF_OUTPUT = "mindstudio_profiler_output"


class ProfileReadError(JudgeError):
    """The profiler's output is missing or is not the table this parser knows; the reason says which."""


@dataclass(frozen=True)
class DeviceTask:
    name: str  # the kernel's or task's name, e.g. "aclnnAdd_AddAiCore_Add"
    core: str  # where it ran: AI_CORE, AI_VECTOR_CORE, MIX_AIC, AI_CPU, ...
    start_us: float
    duration_us: float


@dataclass(frozen=True)
class DeviceReading:
    """One call's device tasks, summed."""

    device_ns: int  # summed task durations
    launches: int  # device tasks the call ran
    tasks: tuple[DeviceTask, ...] = ()

    @classmethod
    def of(cls, tasks: Iterable[DeviceTask]) -> DeviceReading:
        kept = tuple(tasks)
        return cls(device_ns=round(sum(t.duration_us for t in kept) * 1000), launches=len(kept), tasks=kept)

    def less(self, empty: DeviceReading) -> DeviceReading:
        """This reading less an empty call's (what the profiler itself put on the device, if anything)."""
        return DeviceReading(device_ns=max(0, self.device_ns - empty.device_ns),
                             launches=max(0, self.launches - empty.launches), tasks=self.tasks)


def _column(header: list[str], names: tuple[str, ...], source: str) -> int:
    for name in names:
        if name in header:
            return header.index(name)
    raise ProfileReadError(f"{source}: no {' or '.join(repr(n) for n in names)} column; its header is "
                           f"{', '.join(header[:12])}{', ...' if len(header) > 12 else ''}")


def _number(text: str, what: str, source: str, line: int) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise ProfileReadError(f"{source} line {line}: the {what} {text.strip()!r} is not a number") from None
    if value < 0 or value != value:
        raise ProfileReadError(f"{source} line {line}: the {what} {value} is not a time")
    return value


def parse_tasks(text: str, source: str = KERNEL_DETAILS) -> list[DeviceTask]:
    """The device tasks of a kernel_details.csv or op_summary_*.csv text."""
    rows = list(csv.reader(io.StringIO(text.lstrip("\ufeff"))))
    if not rows:
        return []
    header = [h.strip() for h in rows[0]]
    name, core = _column(header, NAME_COLUMNS, source), _column(header, CORE_COLUMNS, source)
    start, duration = _column(header, START_COLUMNS, source), _column(header, DURATION_COLUMNS, source)
    tasks = []
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) < len(header):
            raise ProfileReadError(f"{source} line {line}: {len(row)} fields for {len(header)} columns")
        tasks.append(DeviceTask(name=row[name].strip(), core=row[core].strip(),
                                start_us=_number(row[start], "start time", source, line),
                                duration_us=_number(row[duration], "duration", source, line)))
    return tasks


def profile_tables(folder: Path) -> list[Path]:
    """The tables to read in a profiler's output folder: torch_npu's kernel_details.csv where the
    analysis wrote one, else msprof's op_summary files. Empty when the profiler ran but saw no task
    (it writes no kernel table then); ProfileReadError when it wrote nothing at all."""
    details = sorted(folder.glob(f"**/{PROFILER_OUTPUT}/{KERNEL_DETAILS}"))
    if details:
        return details
    summaries = sorted(folder.glob(f"**/{MSPROF_OUTPUT}/op_summary_*.csv"))
    if summaries:
        return summaries
    if not any(folder.glob("*_ascend_pt")) and not any(folder.glob("**/PROF_*")):
        raise ProfileReadError(f"the profiler wrote no output under {folder} (no *_ascend_pt or PROF_* folder): "
                               "its analysis failed or never ran")
    return []


def read_profile(folder: Path) -> DeviceReading:
    """Every device task the profiled window ran, from the profiler's output under `folder`."""
    tasks: list[DeviceTask] = []
    for table in profile_tables(folder):
        tasks += parse_tasks(table.read_text(encoding="utf-8", errors="replace"), source=table.name)
    return DeviceReading.of(sorted(tasks, key=lambda t: t.start_us))
