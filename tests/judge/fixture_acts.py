"""Does a hostile fixture's built library still perform its act? (docs/security.md, "The exploit corpus")

An optimiser can quietly turn an exploit into an honest kernel: g++ -O3 deleted the allocation
loop of `exploit_leak_until_runner_fails` (its result was unused), so the entry tested nothing
while its verdict held. Each hostile fixture's .toml names what its library must hold:

  requires_symbols       names in the library's dynamic symbol table, imported or exported
                         (`malloc`, `fork`, `kernel_workspace_bytes`), version suffixes ignored
  requires_instructions  mnemonics in the disassembly of its executable sections (`rdtsc`;
                         `ldmxcsr|vldmxcsr` for either)
  requires_strings       text in the file (the names a symbol-table walker looks up)
  act_unchecked          instead of the above: why no symbol, instruction or string shows the act

The library is built with the judge's own CPU flags.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from judge.tracks.cpu.toolchain import CXX_FLAGS

ACT_FIELDS = ("requires_symbols", "requires_instructions", "requires_strings")
REPO_ROOT = Path(__file__).resolve().parents[2]


def build_library(source: Path, problem: str, out: Path) -> Path:
    """The fixture built as the judge builds it (less the kept preprocessed units)."""
    flags = [f for f in CXX_FLAGS if not f.startswith("-save-temps")]
    include = REPO_ROOT / "problems" / problem
    subprocess.run(["g++", *flags, "-shared", f"-I{include}", str(source), "-o", str(out)],
                   check=True, capture_output=True, timeout=300)
    return out


def dynamic_symbols(library: Path) -> set[str]:
    listing = subprocess.run(["nm", "-D", str(library)], check=True, capture_output=True, text=True).stdout
    return {line.split()[-1].split("@")[0] for line in listing.splitlines() if line.split()}


_INSTRUCTION = re.compile(r"^\s*[0-9a-f]+:\s+(?:[0-9a-f]{2} )*\s*([a-z][\w.]*)", re.MULTILINE)


def _code_sections(library: Path) -> list[str]:
    headers = subprocess.run(["objdump", "-h", str(library)], check=True, capture_output=True, text=True).stdout
    lines = headers.splitlines()
    # Each section is two lines: "idx name size ..." then its flags ("CONTENTS, ALLOC, LOAD, READONLY, CODE").
    return [lines[i].split()[1] for i in range(len(lines) - 1)
            if lines[i].split()[:1] and lines[i].split()[0].isdigit() and "CODE" in lines[i + 1]]


def instructions(library: Path) -> set[str]:
    """Mnemonics of every executable section, bytes placed there as data included (-D, as the
    library policy reads them)."""
    sections = [arg for name in _code_sections(library) for arg in ("-j", name)]
    listing = subprocess.run(["objdump", "-D", "--no-show-raw-insn", *sections, str(library)], check=True,
                             capture_output=True, text=True).stdout
    return set(_INSTRUCTION.findall(listing))


def missing_acts(expect: dict, library: Path) -> list[str]:
    """What the .toml says the library holds and it does not."""
    missing = []
    if wanted := expect.get("requires_symbols"):
        found = dynamic_symbols(library)
        missing += [f"symbol {name}" for name in wanted if name not in found]
    if wanted := expect.get("requires_instructions"):
        found = instructions(library)
        # "a|b": either form (ldmxcsr, or vldmxcsr where -march=native has AVX)
        missing += [f"instruction {name}" for name in wanted if not set(name.split("|")) & found]
    if wanted := expect.get("requires_strings"):
        data = library.read_bytes()
        missing += [f"string {text!r}" for text in wanted if text.encode() not in data]
    return missing
