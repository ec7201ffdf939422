"""The checks of what a runner child's messages carry (docs/security.md, layer 5).

The child has run the submission, which can read the channel's nonce and forge whole messages.
`judge/runner/protocol.py` decodes every message field by field with these checks: a field of the
wrong type, or naming tensors the problem does not have, is a broken protocol (SV), never an
exception in the worker (an IE, retried and never charged), and no text of the kernel's choosing
reaches a message the team reads: every name kept here is one of the problem's own, and a check's
reason (`Malformed`) is fixed text, never the value it refused.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import torch

MAX_VENDOR_FAILURE_CHARS = 400
_TAMPERING = re.compile(r"the (?:handler of (SIG[A-Z0-9+]{1,12})|memory protection of (\w{1,64})) was changed"
                        r"|the process made more than \d{1,6} memory mappings")
_PHASE = re.compile(r"[a-z_]{1,32}")


class Malformed(ValueError):
    """A field that no honest runner sends; the reason completes "a message whose 'field' ..."."""


def integer(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Malformed("is not an integer")
    return value


def text(value: Any) -> str:
    if not isinstance(value, str):
        raise Malformed("is not a string")
    return value


def flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise Malformed("is not true or false")
    return value


def mapping(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Malformed("is not an object")
    return value


def strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise Malformed("is not a list of strings")
    return tuple(value)


def path(value: Any) -> Path:
    return Path(text(value))


def paths(value: Any) -> dict[str, Path]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise Malformed("is not a path per name")
    return {k: Path(v) for k, v in value.items()}


def hex_bytes(value: Any) -> bytes:
    try:
        return bytes.fromhex(text(value))
    except ValueError:
        raise Malformed("is not hexadecimal") from None


def tampering(value: Any, names: frozenset[str]) -> list[str]:
    """Only the guard's own sentences pass: a forged one could carry text of the kernel's choosing."""
    if not isinstance(value, list):
        raise Malformed("is not a list")
    for entry in value:
        match = _TAMPERING.fullmatch(entry) if isinstance(entry, str) else None
        if match is None or (match.group(2) is not None and match.group(2) not in names):
            raise Malformed("is not a list of the guard's findings")
    return list(value)


def phases(value: Any) -> dict[str, int]:
    if not isinstance(value, dict) or len(value) > 32 or not all(
            isinstance(k, str) and _PHASE.fullmatch(k) for k in value):
        raise Malformed("is not a phase breakdown")
    return {k: integer(v) for k, v in value.items()}


def launches(value: Any) -> int:
    if integer(value) < -1:
        raise Malformed("is not a launch count")
    return int(value)


def main_thread(value: Any) -> dict[str, int]:
    if not isinstance(value, dict) or not set(value) <= {"cpu", "wait"}:
        raise Malformed("is not the main thread's times")
    return {k: max(0, integer(v)) for k, v in value.items()}


def vendor_failure(value: Any) -> str:
    return text(value)[:MAX_VENDOR_FAILURE_CHARS]


def workspace_bytes(value: Any) -> int:
    return max(0, integer(value))


def tensor_names(value: Any, names: frozenset[str]) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v in names for v in value):
        raise Malformed("is not a list of the problem's tensor names")
    return list(value)


def digests(value: Any, names: frozenset[str]) -> dict[str, str]:
    if not isinstance(value, dict) or not all(k in names and isinstance(v, str) for k, v in value.items()):
        raise Malformed("is not a digest per tensor of the problem")
    return dict(value)


def output_specs(value: Any, names: frozenset[str]) -> dict[str, tuple[list[int], str]]:
    if not isinstance(value, dict):
        raise Malformed("is not an object")
    specs = {}
    for name, spec in value.items():
        if not (isinstance(spec, list) and len(spec) == 2):
            raise Malformed("is not a shape and a dtype per output")
        shape, dtype = spec
        if name not in names or not isinstance(shape, list) or not all(integer(n) >= 0 for n in shape):
            raise Malformed("is not a shape per output of the problem")
        if not isinstance(getattr(torch, str(dtype), None), torch.dtype):
            raise Malformed("names a dtype torch does not have")
        specs[name] = (shape, str(dtype))
    return specs


def output_tensor(raw: bytes, shape: list[int], dtype: str) -> torch.Tensor:
    """An output's bytes as the tensor its report announced (`output_specs` checked the dtype)."""
    torch_dtype = getattr(torch, dtype)
    try:
        if not raw:
            if math.prod(shape):
                raise ValueError("no bytes for a non-empty output")
            return torch.empty(shape, dtype=torch_dtype)
        return torch.frombuffer(bytearray(raw), dtype=torch_dtype).reshape(shape)
    except (RuntimeError, ValueError):
        raise Malformed("has bytes that do not fit its shape") from None
