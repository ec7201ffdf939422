"""Reading the relocatable objects an NPU build links: `ar` archives and ELF64 `.o` files.

The library policy tells CANN's own objects from the team's by object (judge/tracks/npu/link_check.py),
so it needs, per object, the symbols it leaves undefined, the ones it defines, and the number of
load-time constructors it carries (`.init_array` / `.ctors` slots). Only what that needs is read:
the section headers, `.symtab` and its string table. ELF64 little-endian (x86-64 and aarch64, the two
hosts CANN ships for); anything else is a `ValueError` with the reason.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

_AR_MAGIC = b"!<arch>\n"
_AR_HEADER = 60
_SHT_SYMTAB = 2
_STB_GLOBAL, _STB_WEAK = 1, 2
_SHN_UNDEF = 0
_ET_REL = 1


@dataclass(frozen=True)
class ObjectFile:
    """One relocatable object: where it came from and what it imports, defines and runs at load time."""

    name: str  # the member or file name, e.g. "host_stub.cpp.o"
    origin: str  # the archive or folder it was read from (for messages)
    data: bytes = field(repr=False)
    undefined: frozenset[str] = frozenset()
    defined: frozenset[str] = frozenset()
    init_entries: int = 0  # slots of .init_array (and .ctors) sections: constructors run at load time

    @property
    def source_name(self) -> str:
        """The source file the object was compiled from, as CMake names objects ("x.cpp.o" -> "x.cpp")."""
        return self.name[:-2] if self.name.endswith((".c.o", ".cc.o", ".cpp.o", ".cxx.o")) else self.name


def read_object(name: str, origin: str, data: bytes) -> ObjectFile:
    """The symbols and constructors of one ELF64 relocatable object; ValueError when it is not one."""
    if data[:4] != b"\x7fELF":
        raise ValueError(f"{name} ({origin}) is not an ELF object")
    if data[4] != 2 or data[5] != 1:
        raise ValueError(f"{name} ({origin}) is not a 64-bit little-endian ELF object")
    e_type = struct.unpack_from("<H", data, 16)[0]
    if e_type != _ET_REL:
        raise ValueError(f"{name} ({origin}) is not a relocatable object (ELF type {e_type})")
    shoff, = struct.unpack_from("<Q", data, 40)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 58)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names = sections[shstrndx]

    def text(table_offset: int, index: int) -> str:
        end = data.index(b"\0", table_offset + index)
        return data[table_offset + index:end].decode(errors="replace")

    undefined: set[str] = set()
    defined: set[str] = set()
    init_entries = 0
    for sh_name, sh_type, _flags, _addr, offset, size, link, _info, _align, entsize in sections:
        section_name = text(names[4], sh_name)
        if section_name.startswith((".init_array", ".ctors")):
            init_entries += size // 8
        if sh_type != _SHT_SYMTAB or not entsize:
            continue
        strtab = sections[link][4]
        for at in range(offset + entsize, offset + size, entsize):  # entry 0 is the null symbol
            st_name, st_info, _other, st_shndx, _value, _size = struct.unpack_from("<IBBHQQ", data, at)
            if not st_name or (st_info >> 4) not in (_STB_GLOBAL, _STB_WEAK):
                continue
            (undefined if st_shndx == _SHN_UNDEF else defined).add(text(strtab, st_name))
    return ObjectFile(name=name, origin=origin, data=data, undefined=frozenset(undefined),
                      defined=frozenset(defined), init_entries=init_entries)


def archive_members(path: Path) -> list[tuple[str, bytes]]:
    """The (name, bytes) of every member of a System V / GNU `ar` archive, symbol tables left out."""
    data = path.read_bytes()
    if not data.startswith(_AR_MAGIC):
        raise ValueError(f"{path} is not an ar archive")
    members: list[tuple[str, bytes]] = []
    long_names = b""
    at = len(_AR_MAGIC)
    while at + _AR_HEADER <= len(data):
        header = data[at:at + _AR_HEADER]
        if header[58:60] != b"`\n":
            raise ValueError(f"{path}: damaged member header at byte {at}")
        raw_name = header[:16].decode(errors="replace").rstrip()
        size = int(header[48:58].decode().strip() or 0)
        body = data[at + _AR_HEADER:at + _AR_HEADER + size]
        at += _AR_HEADER + size + (size & 1)
        if raw_name in ("/", "/SYM64/", "__.SYMDEF", "__.SYMDEF SORTED"):
            continue
        if raw_name == "//":
            long_names = body
            continue
        if raw_name.startswith("/") and raw_name[1:].isdigit():
            start = int(raw_name[1:])
            end = long_names.find(b"\n", start)
            raw_name = long_names[start:end if end >= 0 else None].decode(errors="replace")
        members.append((raw_name.rstrip("/"), body))
    return members


def read_archive(path: Path) -> list[ObjectFile]:
    """Every ELF object in the archive at `path` (members that are not ELF objects are left out)."""
    return [read_object(name, str(path), body) for name, body in archive_members(path) if body[:4] == b"\x7fELF"]
