"""Work deferred past the clock: the runner's checks around one call (docs/security.md, layer 5).

A kernel can return at once with its output pages protected (`mprotect`) and compute the real
outputs in a SIGSEGV handler when the runner first reads them, after the clock stopped. Two
things close that:

- `PageTouch`: inside the timed bracket, after `kernel_run` returns, the runner reads one byte
  of every page of every output (and the last byte). A fault-driven kernel's handler then runs
  on the clock; the cost is one load per 4 KiB, the same for every kernel and for the baseline.
- `CallGuard`: after each call, every signal's disposition (sigaction, read from the kernel)
  and the protections of the call's input and output ranges (/proc/self/maps) must be as the
  runner left them. A kernel that installed a handler or changed a protection is SV.

The checks live in the child, which the kernel can reach; they stop the plain attack, and the
policy keeps `sigaction` and `mprotect` out of the imports (docs/security.md).
"""

from __future__ import annotations

import ctypes
import signal
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import torch

PAGE = 4096
_LIBC = ctypes.CDLL(None, use_errno=True)
# glibc keeps 32 and 33 for itself (thread cancellation, setxid) and answers EINVAL for them.
_SIGNALS = [s for s in range(1, signal.NSIG) if s not in (32, 33)]


class _SigAction(ctypes.Structure):
    """glibc's struct sigaction on Linux (x86-64, aarch64): 152 bytes."""

    _fields_ = [("handler", ctypes.c_void_p), ("mask", ctypes.c_uint64 * 16), ("flags", ctypes.c_int),
                ("restorer", ctypes.c_void_p)]


def _disposition(signum: int) -> int | None:
    """One signal's handler (SIG_DFL 0, SIG_IGN 1, or a function's address); None where it has none.
    Only the handler can run a kernel's code; flags and mask alone defer nothing."""
    action = _SigAction()
    if _LIBC.sigaction(signum, None, ctypes.byref(action)) != 0:
        return None
    return action.handler or 0


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


@dataclass(frozen=True)
class Span:
    """One tensor's bytes in this process's memory."""

    name: str
    start: int
    size: int


def spans(tensors: dict[str, torch.Tensor]) -> list[Span]:
    """The host-memory ranges of the CPU tensors among `tensors` (device memory has no page here)."""
    return [Span(name, t.data_ptr(), t.numel() * t.element_size()) for name, t in tensors.items()
            if t.device.type == "cpu" and t.numel() > 0]


# The after-call check reads /proc/self/maps, whose length the kernel controls: a red team split a region
# into about 60,000 mappings so the read took 130 ms, time its helper thread used to compute the outputs
# after the call had "returned". The read stops here, so its cost is bounded, and a
# process with more mappings than an honest runner ever has (a few hundred) is tampering in itself.
MAX_MAPPINGS = 16384
RUNAWAY_MAPPINGS = f"the process made more than {MAX_MAPPINGS} memory mappings"


class TooManyMappings(Exception):
    """The maps listing ran past MAX_MAPPINGS lines."""


def _mappings() -> list[tuple[int, int, str]]:
    with open("/proc/self/maps") as fh:
        found = []
        for line in fh:
            if len(found) >= MAX_MAPPINGS:
                raise TooManyMappings
            addresses, perms = line.split(" ", 2)[:2]
            low, high = addresses.split("-")
            found.append((int(low, 16), int(high, 16), perms[:2]))
    return found


def unprotected(ranges: Iterable[Span]) -> list[str]:
    """The ranges not wholly inside readable and writable mappings (the runner made them `rw`)."""
    wanted = sorted(ranges, key=lambda s: s.start)
    if not wanted:
        return []
    try:
        maps = _mappings()
    except OSError:  # a sandbox without /proc: the handler check and the page reads still hold
        return []
    bad = []
    for span in wanted:
        at, end = span.start, span.start + span.size
        for low, high, perms in maps:
            if high <= at or low >= end:
                continue
            if low > at or perms != "rw":
                break  # a hole before this mapping, or a protection changed
            at = high
            if at >= end:
                break
        if at < end:
            bad.append(span.name)
    return bad


class CallGuard:
    """Signal dispositions as the runner left them; checked after every call into a library."""

    def __init__(self) -> None:
        self.dispositions = {s: _disposition(s) for s in _SIGNALS}

    def changed_handlers(self) -> list[str]:
        return [_signal_name(s) for s, raw in self.dispositions.items() if _disposition(s) != raw]

    def tampering(self, inputs: dict[str, torch.Tensor], outputs: dict[str, torch.Tensor]) -> list[str]:
        """What the call changed that no honest kernel changes, in words; empty when nothing."""
        found = [f"the handler of {name} was changed" for name in self.changed_handlers()]
        try:
            found += [f"the memory protection of {name} was changed"
                      for name in unprotected(spans(inputs) + spans(outputs))]
        except TooManyMappings:
            found.append(RUNAWAY_MAPPINGS)
        return found


class PageTouch:
    """One byte of every page of the outputs, read inside the timed bracket.

    Made before the call (the views cost nothing on the clock); `read` is the only part timed."""

    def __init__(self, outputs: dict[str, torch.Tensor]) -> None:
        self.views = [t.detach().view(-1).view(torch.uint8).numpy() for t in outputs.values()
                      if t.device.type == "cpu" and t.numel() > 0 and t.is_contiguous()]

    def read(self) -> int:
        total = 0
        for view in self.views:
            total += int(np.add.reduce(view[::PAGE], dtype=np.uint64)) + int(view[-1])
        return total
