"""What the worker accepts from a runner child's call report (issue 16).

The child has run the submission, which can read the channel's nonce and forge whole messages.
A report whose fields are missing, of the wrong type, or name tensors the problem does not have
is a broken protocol (SV), never an exception in the worker (an IE, retried and never charged),
and no text of the kernel's choosing reaches a message the team reads: every name kept here is
one of the problem's own.
"""

from __future__ import annotations

import math
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
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ProtocolViolation(f"a call report that no runner sends ({type(exc).__name__})") from None
    return report


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
