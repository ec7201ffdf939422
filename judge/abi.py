"""The kernel ABI as ctypes, parsed from the problem's own header.

The header is the one source of truth for `kernel_args`: the runner builds its
ctypes struct by reading the `typedef struct kernel_args { ... }` block, so a
problem's header and the judge can never disagree about field order or types.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from judge.errors import JudgeError

DTYPE_CODES = {"float32": 0, "float16": 1, "bfloat16": 2}  # KERNEL_F32, KERNEL_F16, KERNEL_BF16

_SCALARS: dict[str, type[ctypes._SimpleCData]] = {  # type: ignore[type-arg]
    "int64_t": ctypes.c_int64,
    "int32_t": ctypes.c_int32,
    "double": ctypes.c_double,
    "float": ctypes.c_float,
}


class HeaderParseError(JudgeError):
    pass


@dataclass(frozen=True)
class AbiField:
    name: str
    pointer: bool  # pointers carry device addresses; scalars carry sizes and attributes
    scalar: str  # the C type without const and stars, e.g. "int64_t" or "void"


def parse_kernel_args(header_text: str) -> list[AbiField]:
    """The fields of `kernel_args` in declaration order."""
    match = re.search(r"typedef\s+struct\s+kernel_args\s*\{(.*?)\}\s*kernel_args\s*;", header_text, re.S)
    if match is None:
        raise HeaderParseError("the header has no `typedef struct kernel_args { ... } kernel_args;`")
    body = re.sub(r"/\*.*?\*/|//[^\n]*", " ", match.group(1), flags=re.S)
    fields: list[AbiField] = []
    for declaration in filter(None, (d.strip() for d in body.split(";"))):
        head = re.match(r"(?:const\s+)?(\w+)\s+(.*)", declaration, re.S)
        if head is None:
            raise HeaderParseError(f"cannot read the declaration {declaration!r}")
        scalar, names = head.groups()
        for raw in names.split(","):
            raw = raw.strip()
            pointer = raw.startswith("*")
            name = raw.lstrip("*").strip()
            if not name.isidentifier() or (not pointer and scalar not in _SCALARS):
                raise HeaderParseError(f"unsupported field {raw!r} of type {scalar!r}")
            fields.append(AbiField(name=name, pointer=pointer, scalar=scalar))
    return fields


@cache
def kernel_args_struct(header: Path) -> type[ctypes.Structure]:
    """A ctypes Structure laid out exactly like the header's `kernel_args`."""
    fields = parse_kernel_args(header.read_text())
    layout = [(f.name, ctypes.c_void_p if f.pointer else _SCALARS[f.scalar]) for f in fields]
    return type("kernel_args", (ctypes.Structure,), {"_fields_": layout})


def pack_args(
    struct_type: type[ctypes.Structure],
    *,
    pointers: dict[str, int | None],
    scalars: dict[str, float | int],
) -> ctypes.Structure:
    """Fill every field: pointers by name (None → NULL), scalars by name; a missing one is an error."""
    args = struct_type()
    for name, ctype in struct_type._fields_:  # type: ignore[misc]
        if ctype is ctypes.c_void_p:
            if name not in pointers:
                raise JudgeError(f"no value for pointer field {name!r} of kernel_args")
            setattr(args, name, pointers[name] or None)
        else:
            if name not in scalars:
                raise JudgeError(f"no value for field {name!r} of kernel_args")
            setattr(args, name, scalars[name])
    return args
