"""The policy check of the built library (docs/rules.md, "What happens to a submission", step 2).

Reads the ELF file itself (dynamic symbols, dynamic tags, sections) and
disassembles every executable section with objdump. A symbol check alone is
not enough: a raw `syscall` or `rdtsc` instruction and a load-time constructor
import nothing, so the machine code and the .init_array are checked too.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

from judge.errors import InternalJudgeError
from judge.policy.common import COMPILER_WEAK
from judge.policy.rules import BackendRules
from judge.results import PolicyFinding

LIBRARY = "<library>"
_SHT_DYNSYM, _SHT_DYNAMIC = 11, 6
_SHF_EXECINSTR = 0x4
_STB_GLOBAL, _STB_WEAK, _STT_GNU_IFUNC = 1, 2, 10
_STT_OBJECT = 1
_DT_NEEDED, _DT_RPATH, _DT_RUNPATH = 1, 15, 29
_DT_INIT_ARRAYSZ, _DT_FINI_ARRAYSZ, _DT_PREINIT_ARRAYSZ = 27, 28, 33
_EM_X86_64, _EM_AARCH64 = 62, 183
_SHT_RELA = 4
_IRELATIVE = {_EM_X86_64: 37, _EM_AARCH64: 1032}  # R_*_IRELATIVE: a resolver run at load time
_PT_LOAD, _PT_GNU_STACK = 1, 0x6474E551
_PF_X, _PF_W = 1, 2
# What crti/crtn put in .init and .fini on x86-64 (23 and 9 bytes with GNU binutils; 4 more for an
# endbr64): anything longer was added by the submission (top-level asm in .init runs at load time).
_X86_INIT_FINI_BYTES = {".init": 27, ".fini": 13}
_PREFIXES = {
    "lock",
    "rep",
    "repz",
    "repe",
    "repnz",
    "repne",
    "bnd",
    "notrack",
    "data16",
    "addr32",
    "cs",
    "ds",
    "es",
    "fs",
    "gs",
    "ss",
    "rex",
    "rex.w",
    "xacquire",
    "xrelease",
}


@dataclass
class _Section:
    name: str
    type: int
    flags: int
    addr: int
    offset: int
    size: int
    link: int
    entsize: int


@dataclass
class _Symbol:
    name: str
    bind: int
    type: int
    shndx: int
    value: int


class _Elf:
    """The few parts of a 64-bit little-endian ELF shared object the checks need."""

    def __init__(self, data: bytes) -> None:
        if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            raise ValueError("not a 64-bit little-endian ELF file")
        self.data = data
        self.machine = struct.unpack_from("<H", data, 18)[0]
        (shoff,) = struct.unpack_from("<Q", data, 40)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 58)
        raw = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
        names = raw[shstrndx]
        self.sections = [_Section(self._str(names[4], r[0]), r[1], r[2], r[3], r[4], r[5], r[6], r[9]) for r in raw]

    def _str(self, table_offset: int, index: int) -> str:
        end = self.data.index(b"\0", table_offset + index)
        return self.data[table_offset + index : end].decode(errors="replace")

    def section_bytes(self, section: _Section) -> bytes:
        return self.data[section.offset : section.offset + section.size]

    def segments(self) -> list[tuple[int, int]]:
        """(p_type, p_flags) of every program header."""
        (phoff,) = struct.unpack_from("<Q", self.data, 32)
        phentsize, phnum = struct.unpack_from("<HH", self.data, 54)
        return [struct.unpack_from("<II", self.data, phoff + i * phentsize) for i in range(phnum)]

    def relocation_types(self) -> set[int]:
        types = set()
        for sec in (s for s in self.sections if s.type == _SHT_RELA):
            for i in range(sec.size // 24):
                (info,) = struct.unpack_from("<Q", self.data, sec.offset + i * 24 + 8)
                types.add(info & 0xFFFFFFFF)
        return types

    def dynamic_symbols(self) -> list[_Symbol]:
        symbols = []
        for sec in (s for s in self.sections if s.type == _SHT_DYNSYM):
            strtab = self.sections[sec.link].offset
            for i in range(1, sec.size // 24):
                name, info, _other, shndx, value, _size = struct.unpack_from("<IBBHQQ", self.data, sec.offset + i * 24)
                symbols.append(_Symbol(self._str(strtab, name), info >> 4, info & 0xF, shndx, value))
        return symbols

    def dynamic_tags(self) -> list[tuple[int, int | str]]:
        tags: list[tuple[int, int | str]] = []
        for sec in (s for s in self.sections if s.type == _SHT_DYNAMIC):
            strtab = self.sections[sec.link].offset
            for i in range(sec.size // 16):
                tag, value = struct.unpack_from("<qQ", self.data, sec.offset + i * 16)
                if tag == 0:
                    break
                is_name = tag in (_DT_NEEDED, _DT_RPATH, _DT_RUNPATH)
                tags.append((tag, self._str(strtab, value) if is_name else value))
        return tags


def _finding(rule: str, message: str) -> PolicyFinding:
    return PolicyFinding(rule=rule, message=message, file=LIBRARY)


def _check_symbols(elf: _Elf, rules: BackendRules) -> list[PolicyFinding]:
    findings = []
    for sym in elf.dynamic_symbols():
        if not sym.name:
            continue
        if sym.shndx == 0:  # undefined: an import
            if sym.bind == _STB_WEAK and sym.name in COMPILER_WEAK:
                continue
            if not rules.import_allowed(sym.name):
                findings.append(
                    _finding(
                        "banned-symbol",
                        f"the library calls `{sym.name}`, which kernels may "
                        f"not use (only {rules.allowed_imports_in_words})",
                    )
                )
            continue
        if sym.type == _STT_GNU_IFUNC:
            findings.append(
                _finding("load-time-code", f"`{sym.name}` is an ifunc: its resolver runs when the library loads")
            )
        elif sym.name in rules.allowed_exports or sym.name in rules.compiler_exports:
            continue
        elif re.fullmatch(r"\.gomp_critical_user_\w+", sym.name) and sym.type == _STT_OBJECT:
            continue  # the lock of `#pragma omp critical(name)`: data no C name can reach or interpose
        elif sym.name.startswith("_Z") and (
            sym.bind != _STB_GLOBAL or not any(re.fullmatch(p, sym.name) for p in rules.forbidden_export_patterns)
        ):
            continue  # the submission's own C++ functions; weak or unique: template instances the compiler made
        elif sym.name.startswith("_Z"):
            findings.append(
                _finding(
                    "exported-symbol",
                    f"the library defines `{sym.name}`, which would replace "
                    "the C++ runtime's own (operator new/delete or std::)",
                )
            )
        else:
            findings.append(
                _finding(
                    "exported-symbol",
                    f"the library exports `{sym.name}`; only kernel_run and "
                    "kernel_workspace_bytes may be: make other functions and globals `static` "
                    "(or put them in an anonymous namespace)",
                )
            )
    return findings


def _check_dynamic(elf: _Elf, rules: BackendRules) -> list[PolicyFinding]:
    findings = []
    for tag, value in elf.dynamic_tags():
        if tag == _DT_NEEDED and not any(re.fullmatch(p, str(value)) for p in rules.allowed_needed):
            findings.append(_finding("needed-library", f"the library needs {value}, which is not allowed"))
        elif tag in (_DT_RPATH, _DT_RUNPATH):
            findings.append(_finding("needed-library", f"the library sets a library search path ({value})"))
        elif tag == _DT_PREINIT_ARRAYSZ and value:
            findings.append(_finding("load-time-code", "the library has a pre-init array (code run at load time)"))
        elif tag == _DT_INIT_ARRAYSZ and int(value) // 8 > rules.init_array_entries:
            findings.append(
                _finding(
                    "load-time-code",
                    "the library runs code when it is loaded (a constructor "
                    "function, or a global object with a constructor such as a global "
                    "std::vector or <iostream>): move it inside kernel_run",
                )
            )
        elif tag == _DT_FINI_ARRAYSZ and int(value) // 8 > rules.fini_array_entries:
            findings.append(
                _finding(
                    "load-time-code", "the library runs code when it is unloaded (a destructor function): remove it"
                )
            )
    return findings


def _check_loading(elf: _Elf) -> list[PolicyFinding]:
    """What the loader would do beyond mapping the code: make the stack executable (a kernel could
    then build machine code at run time, out of the disassembler's sight), map writable code, run
    a resolver (IRELATIVE) or extra code in .init/.fini."""
    findings = []
    segments = elf.segments()
    stack = [flags for kind, flags in segments if kind == _PT_GNU_STACK]
    if not stack or any(flags & _PF_X for flags in stack):
        findings.append(_finding("executable-stack", "the library asks for an executable stack (a GNU nested "
                                 "function, or code that builds machine code at run time): not allowed"))
    if any(kind == _PT_LOAD and flags & _PF_W and flags & _PF_X for kind, flags in segments):
        findings.append(_finding("writable-code", "the library maps memory that is both writable and executable"))
    if _IRELATIVE.get(elf.machine) in elf.relocation_types():
        findings.append(_finding("load-time-code", "the library picks a function at load time (an ifunc "
                                 "resolver, run before kernel_run is called): not allowed"))
    if elf.machine == _EM_X86_64:
        for section in elf.sections:
            limit = _X86_INIT_FINI_BYTES.get(section.name)
            if limit is not None and section.size > limit:
                findings.append(_finding("load-time-code", f"the library adds code to {section.name} (run when it "
                                         "is loaded or unloaded, e.g. through top-level asm): not allowed"))
    return findings


def _disassemble(library: Path, sections: list[str]) -> str:
    """objdump of every executable section, data objects in them included.

    -D rather than -d: bytes placed in .text as an array are code a kernel can
    call, and -d would print them as data.
    """
    objdump = shutil.which("objdump")
    if objdump is None:
        raise InternalJudgeError("objdump not found: install binutils to check built libraries")
    if not sections:
        return ""
    only = [arg for name in sections for arg in ("-j", name)]
    proc = subprocess.run(
        [objdump, "-D", "-w", "--no-show-raw-insn", *only, str(library)], capture_output=True, text=True, timeout=120
    )
    if proc.returncode != 0:
        raise InternalJudgeError(f"objdump failed on the library: {proc.stderr[-500:]}")
    return proc.stdout


_FUNC_RE = re.compile(r"^([0-9a-f]+) <(.+)>:$")
_INSN_RE = re.compile(r"^\s*([0-9a-f]+):\s+(.*)$")
_TARGET_RE = re.compile(r"^\s*([0-9a-f]+)\s+<")


def _check_instructions(elf: _Elf, library: Path, rules: BackendRules) -> list[PolicyFinding]:
    findings: list[PolicyFinding] = []
    starts: set[int] = set()
    targets: set[int] = set()
    function, function_addr = "?", 0
    executable = [s.name for s in elf.sections if s.flags & _SHF_EXECINSTR and s.size]
    for raw in _disassemble(library, executable).splitlines():
        if head := _FUNC_RE.match(raw):
            function_addr, function = int(head.group(1), 16), head.group(2)
            targets.add(function_addr)
            continue
        insn = _INSN_RE.match(raw)
        if not insn:
            continue
        addr = int(insn.group(1), 16)
        starts.add(addr)
        tokens = insn.group(2).split()
        while tokens and tokens[0] in _PREFIXES:
            tokens = tokens[1:]
        if not tokens:
            continue
        mnemonic = tokens[0]
        if mnemonic.startswith(("j", "call", "loop")) and (target := _TARGET_RE.match(" ".join(tokens[1:]))):
            targets.add(int(target.group(1), 16))
        if mnemonic in rules.forbidden_instructions:
            where = f"{function}+{addr - function_addr:#x}"
            findings.append(
                _finding(
                    "forbidden-instruction",
                    f"the machine code holds `{' '.join(tokens)}` at "
                    f"{where}: system calls and timer reads are not allowed in kernels",
                )
            )
    if elf.machine == _EM_X86_64:
        findings += _hidden_instructions(elf, rules, starts, targets)
    return findings


def _hidden_instructions(elf: _Elf, rules: BackendRules, starts: set[int], targets: set[int]) -> list[PolicyFinding]:
    """Forbidden bytes inside another instruction that some jump, call or symbol lands on."""
    findings = []
    for sec in (s for s in elf.sections if s.flags & _SHF_EXECINSTR and s.size):
        data = elf.section_bytes(sec)
        for mnemonic, pattern in rules.forbidden_byte_sequences.items():
            for match in re.finditer(re.escape(pattern), data):
                addr = sec.addr + match.start()
                if addr in targets and addr not in starts:
                    findings.append(
                        _finding(
                            "forbidden-instruction",
                            f"hidden `{mnemonic}` bytes at {addr:#x} in "
                            f"{sec.name} are a jump target: system calls and timer reads are not "
                            "allowed in kernels",
                        )
                    )
    return findings


def check_library_file(library: Path, rules: BackendRules) -> list[PolicyFinding]:
    """Every finding for the built shared object at `library`."""
    try:
        elf = _Elf(library.read_bytes())
    except (OSError, ValueError, struct.error) as exc:
        return [_finding("library-format", f"the built library cannot be read as a shared object: {exc}")]
    return (_check_dynamic(elf, rules) + _check_loading(elf) + _check_symbols(elf, rules)
            + _check_instructions(elf, library, rules))
