"""What the worker accepts from a runner child's call report (docs/security.md, layer 5).

The child has run the submission, which can read the channel's nonce and forge whole messages.
A report whose fields are missing, of the wrong type, or name tensors the problem does not have
is a broken protocol (SV), never an exception in the worker (an IE, retried and never charged),
and no text of the kernel's choosing reaches a message the team reads: every name kept here is
one of the problem's own.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import torch

from judge.runner.protocol import ProtocolViolation


@dataclass(frozen=True)
class CallReport:
    rc: int
    elapsed_ns: int
    digest_before: dict[str, str]
    digest_after: dict[str, str]
    new_threads: int
    late_writes: list[str]
    openmp_level: int
    busy_threads: int
    outputs: dict[str, tuple[list[int], str]]
    tampering: list[str]  # guard.py's own sentences, each naming a signal or one of the problem's tensors
    phases_ns: dict[str, int]  # where the child's side of the call went (a diagnostic, never scored)
    # Profiled calls only (judge/profiling/cpu.py): the child's main thread around kernel_run, "cpu"
    # and "wait" (run queue) in ns; the kernel could forge it, and it only ever reaches its own profile.
    main_thread_ns: dict[str, int]
    launches: int = -1  # kernel launches the call made where the clock counts them (NPU device timing), else -1
    # The baseline's child only: why the vendor operator failed on this case, so the baseline kernel ran
    # instead (child.py); "" otherwise. Read from the baseline's report alone (no team code runs there).
    vendor_failed: str = ""
    # The workspace the runner filled with garbage for this call, as the child says: the worker allows
    # its fill time outside the bracket (judge/idle_watch.py), capped at the workspace limit.
    workspace_bytes: int = 0


def read_call_report(header: dict[str, Any], names: frozenset[str]) -> CallReport:
    """The fields of a "call" message, checked; `names` are the problem's tensor names."""
    try:
        report = CallReport(
            rc=_int(header["rc"]), elapsed_ns=_int(header["elapsed_ns"]),
            digest_before=_digests(header["digest_before"], names),
            digest_after=_digests(header["digest_after"], names),
            new_threads=_int(header["new_threads"]),
            late_writes=_names(header["late_writes"], names),
            openmp_level=_int(header.get("openmp_level", 0)), busy_threads=_int(header.get("busy_threads", 0)),
            outputs=_output_specs(header["outputs"], names),
            tampering=_tampering(header.get("tampering", []), names),
            phases_ns=_phases(header.get("phases_ns", {})),
            launches=_launches(header.get("launches", -1)),
            main_thread_ns=_main_thread(header.get("main_thread_ns", {})),
            vendor_failed=str(header.get("vendor_failed", ""))[:MAX_VENDOR_FAILURE_CHARS],
            workspace_bytes=max(0, _int(header.get("workspace_bytes", 0))),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ProtocolViolation(f"a call report that no runner sends ({type(exc).__name__})") from None
    return report


MAX_VENDOR_FAILURE_CHARS = 400
_TAMPERING = re.compile(r"the (?:handler of (SIG[A-Z0-9+]{1,12})|memory protection of (\w{1,64})) was changed"
                        r"|the process made more than \d{1,6} memory mappings")
_PHASE = re.compile(r"[a-z_]{1,32}")


def _tampering(value: Any, names: frozenset[str]) -> list[str]:
    """Only the guard's own sentences pass: a forged one could carry text of the kernel's choosing."""
    if not isinstance(value, list):
        raise TypeError("not a list")
    for entry in value:
        match = _TAMPERING.fullmatch(entry) if isinstance(entry, str) else None
        if match is None or (match.group(2) is not None and match.group(2) not in names):
            raise ValueError("not one of the guard's findings")
    return list(value)


def _phases(value: Any) -> dict[str, int]:
    if not isinstance(value, dict) or len(value) > 32 or not all(
            isinstance(k, str) and _PHASE.fullmatch(k) for k in value):
        raise ValueError("not a phase breakdown")
    return {k: _int(v) for k, v in value.items()}


def _launches(value: Any) -> int:
    if _int(value) < -1:
        raise ValueError("not a launch count")
    return int(value)
def _main_thread(value: Any) -> dict[str, int]:
    if not isinstance(value, dict) or not set(value) <= {"cpu", "wait"}:
        raise ValueError("not the main thread's times")
    return {k: max(0, _int(v)) for k, v in value.items()}


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("not an integer")
    return value


def _names(value: Any, names: frozenset[str]) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v in names for v in value):
        raise ValueError("not a list of the problem's tensor names")
    return list(value)


def _digests(value: Any, names: frozenset[str]) -> dict[str, str]:
    if not isinstance(value, dict) or not all(k in names and isinstance(v, str) for k, v in value.items()):
        raise ValueError("not a digest per tensor of the problem")
    return dict(value)


def _output_specs(value: Any, names: frozenset[str]) -> dict[str, tuple[list[int], str]]:
    if not isinstance(value, dict):
        raise TypeError("not a mapping")
    specs = {}
    for name, spec in value.items():
        shape, dtype = spec  # a pair, or a ValueError/TypeError
        if name not in names or not isinstance(shape, list) or not all(_int(n) >= 0 for n in shape):
            raise ValueError("not an output of the problem")
        if not isinstance(getattr(torch, str(dtype), None), torch.dtype):
            raise ValueError("not a torch dtype")
        specs[name] = (shape, str(dtype))
    return specs


def output_tensor(raw: bytes, shape: list[int], dtype: str) -> torch.Tensor:
    """An output's bytes as the tensor its report announced; a size that does not fit is SV."""
    torch_dtype = getattr(torch, dtype)
    try:
        if not raw:
            if math.prod(shape):
                raise ValueError("no bytes for a non-empty output")
            return torch.empty(shape, dtype=torch_dtype)
        return torch.frombuffer(bytearray(raw), dtype=torch_dtype).reshape(shape)
    except (RuntimeError, ValueError) as exc:
        raise ProtocolViolation(f"an output whose bytes do not fit its shape ({type(exc).__name__})") from None
