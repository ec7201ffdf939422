"""Counters of a process's threads through perf_event_open(2), opened by the worker.

The runner child is sealed once its libraries are loaded (judge/sandbox/seal.py): it may do nothing
new, so it never opens a counter itself. The worker opens one counter per event on each of the
child's threads (pid = the thread id, cpu = -1: that thread on any CPU), disabled; it enables them
right before the "go" of an untimed call and disables them right after its "ran", and reads
each counter's value scaled by its enabled over running time (counters share the PMU's slots).

User-space only (`exclude_kernel`, `exclude_hv`): what the kernel's own code did, which is also
all that `perf_event_paranoid` 2 (the usual default) lets a process without CAP_PERFMON count.
Hosts without a PMU (most VMs and containers without counter passthrough) answer ENOENT or
EOPNOTSUPP for hardware events: `unavailable_reason` says so in words.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import platform
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path

PARANOID_PATH = Path("/proc/sys/kernel/perf_event_paranoid")
_SYSCALL_NUMBERS = {"x86_64": 298, "aarch64": 241, "ppc64le": 319, "s390x": 331, "riscv64": 241}
_IOC_ENABLE, _IOC_DISABLE, _IOC_RESET = 0x2400, 0x2401, 0x2403  # _IO('$', 0 / 1 / 3)
_FORMAT_TOTAL_TIME_ENABLED, _FORMAT_TOTAL_TIME_RUNNING = 1 << 0, 1 << 1
_FLAG_DISABLED, _FLAG_EXCLUDE_KERNEL, _FLAG_EXCLUDE_HV = 1 << 0, 1 << 5, 1 << 6
_ATTR_SIZE = 128  # PERF_ATTR_SIZE_VER7; the fields past the flags stay zero


class EventType(IntEnum):
    HARDWARE = 0
    SOFTWARE = 1


@dataclass(frozen=True)
class Event:
    name: str
    type: EventType
    config: int


# include/uapi/linux/perf_event.h: PERF_COUNT_HW_* and PERF_COUNT_SW_*
CYCLES = Event("cycles", EventType.HARDWARE, 0)
INSTRUCTIONS = Event("instructions", EventType.HARDWARE, 1)
CACHE_REFERENCES = Event("cache-references", EventType.HARDWARE, 2)
CACHE_MISSES = Event("cache-misses", EventType.HARDWARE, 3)
BRANCH_MISSES = Event("branch-misses", EventType.HARDWARE, 5)
TASK_CLOCK = Event("task-clock", EventType.SOFTWARE, 1)  # ns on a CPU: every Linux has it, PMU or not
HARDWARE_EVENTS = (CYCLES, INSTRUCTIONS, CACHE_REFERENCES, CACHE_MISSES, BRANCH_MISSES)


class CountersUnavailable(Exception):
    """perf_event_open refused: the message is the reason a person reads on the report."""


def _attr(event: Event) -> bytes:
    flags = _FLAG_DISABLED | _FLAG_EXCLUDE_KERNEL | _FLAG_EXCLUDE_HV
    head = struct.pack("=IIQQQQQ", event.type, _ATTR_SIZE, event.config, 0, 0,
                       _FORMAT_TOTAL_TIME_ENABLED | _FORMAT_TOTAL_TIME_RUNNING, flags)  # fmt: skip
    return head + bytes(_ATTR_SIZE - len(head))


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def perf_event_open(event: Event, tid: int) -> int:
    """A disabled counter of `event` on thread `tid` (0: the caller); OSError with errno on refusal."""
    number = _SYSCALL_NUMBERS.get(platform.machine())
    if number is None:
        raise OSError(errno.ENOSYS, f"no perf_event_open number known for {platform.machine()}")
    attr = ctypes.create_string_buffer(_attr(event), _ATTR_SIZE)
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    fd = libc.syscall(ctypes.c_long(number), attr, ctypes.c_int(tid), ctypes.c_int(-1), ctypes.c_int(-1),
                      ctypes.c_ulong(0))  # fmt: skip
    if fd < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return int(fd)


def paranoid_level(path: Path = PARANOID_PATH) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def reason_for(code: int, event: Event, paranoid: int | None) -> str:
    """Why `event` could not be counted, from perf_event_open's errno, in words for the report."""
    setting = f"kernel.perf_event_paranoid is {paranoid}" if paranoid is not None else "perf_event_paranoid unknown"
    if code in (errno.ENOENT, errno.EOPNOTSUPP, errno.ENODEV):
        return (f"the CPU's {event.name} counter is not exposed to this host (no PMU: a VM or container "
                f"without counter passthrough; `perf stat -e {event.name} true` says <not supported>)")
    if code in (errno.EACCES, errno.EPERM):
        return (f"the worker may not count another process's threads ({setting}; allow it with "
                "sysctl kernel.perf_event_paranoid=2 or lower, or give the worker CAP_PERFMON)")
    if code == errno.ENOSYS:
        return "perf_event_open is not available (a kernel without perf events, or a seccomp profile forbids it)"
    if code == errno.ESRCH:
        return "the runner's thread ended before its counters could be opened"
    return f"perf_event_open failed for {event.name}: {os.strerror(code)}"


def unavailable_reason(events: Iterable[Event] = HARDWARE_EVENTS, *, tid: int = 0) -> str | None:
    """None when every event can be counted on `tid` (0: the worker itself), else the first refusal's reason."""
    paranoid = paranoid_level()
    for event in events:
        try:
            fd = perf_event_open(event, tid)
        except OSError as exc:
            return reason_for(exc.errno or 0, event, paranoid)
        os.close(fd)
    return None


@dataclass
class ThreadCounters:
    """Scaled totals of each event on each thread over every enabled stretch."""

    values: dict[int, dict[str, float]]

    def total(self, event: Event) -> float:
        return sum(per.get(event.name, 0.0) for per in self.values.values())


class CounterSet:
    """Counters of `events` on each of `tids`; use as a context manager (closes every descriptor)."""

    def __init__(self, tids: Iterable[int], events: Iterable[Event]) -> None:
        self.events = tuple(events)
        self._fds: dict[tuple[int, str], int] = {}
        paranoid = paranoid_level()
        try:
            for tid in tids:
                for event in self.events:
                    try:
                        self._fds[(tid, event.name)] = perf_event_open(event, tid)
                    except OSError as exc:
                        if exc.errno == errno.ESRCH:
                            break  # the thread ended meanwhile: it did no work in the pass either
                        raise CountersUnavailable(reason_for(exc.errno or 0, event, paranoid)) from exc
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> CounterSet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for fd in self._fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds.clear()

    def _ioctl_all(self, request: int) -> None:
        libc = _libc()
        for fd in self._fds.values():
            libc.ioctl(fd, request, 0)

    def enable(self) -> None:
        self._ioctl_all(_IOC_ENABLE)

    def disable(self) -> None:
        self._ioctl_all(_IOC_DISABLE)

    def reset(self) -> None:
        self._ioctl_all(_IOC_RESET)

    def read(self) -> ThreadCounters:
        """Each counter's value scaled by enabled/running time (0 for one that never ran)."""
        values: dict[int, dict[str, float]] = {}
        for (tid, name), fd in self._fds.items():
            value, enabled, running = struct.unpack("=QQQ", os.read(fd, 24))
            values.setdefault(tid, {})[name] = value * (enabled / running) if running else 0.0
        return ThreadCounters(values)
