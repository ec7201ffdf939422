"""Probes of the standard headers a CPU kernel may include (docs/rules.md).

Each probe here (*.cpp, *.c) is a small kernel that exercises the common API of a family of the
allowed headers: containers instantiated with int and float, std::function called, smart pointers,
exceptions thrown and caught, algorithms, OpenMP, intrinsics. The judge's compiler builds it with the
judge's own flags (judge/tracks/cpu/toolchain.py), and what its library imports (`nm -D
--undefined-only`) is what a legitimate kernel using those headers imports: the library policy must
allow every name. `imports.txt` records those names for one compiler (its version, machine and flags
in its first lines); `python -m tests.judge.policy.probes` records it again.

A probe names what it covers by its `#include <...>` lines; `// also: a.h b.h` names headers it covers
through another one (gcc refuses <avx2intrin.h> on its own: it comes through <immintrin.h>), and
`// arch: x86_64` the only machine it builds on. refused/*.cpp are kernels using what stays refused
(threads, clocks, files, processes, std::random_device, <iostream>): both checks must refuse them.
"""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from judge.tracks.cpu.toolchain import C_FLAGS, CXX_FLAGS

PROBES_DIR = Path(__file__).resolve().parent
REFUSED_DIR = PROBES_DIR / "refused"
RECORD = PROBES_DIR / "imports.txt"
LINK_FLAGS = ["-shared", "-fopenmp"]  # how GccToolchain links kernel.so
NM = ["nm", "-D", "--undefined-only"]

_INCLUDE_RE = re.compile(r"^\s*#\s*include\s*<([^>]+)>", re.MULTILINE)
_ALSO_RE = re.compile(r"^\s*(?://|/\*)\s*also:\s*([^(\n]*)", re.MULTILINE)
_ARCH_RE = re.compile(r"^\s*(?://|/\*)\s*arch:\s*(\S+)", re.MULTILINE)


@dataclass(frozen=True)
class Probe:
    path: Path
    headers: frozenset[str]  # the headers it #includes
    also: frozenset[str]  # the headers it covers through another one
    arch: str | None  # the only machine it builds on, or None for any

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def is_c(self) -> bool:
        return self.path.suffix == ".c"

    def builds_here(self) -> bool:
        return self.arch is None or self.arch == platform.machine()


def load(folder: Path = PROBES_DIR) -> list[Probe]:
    probes = []
    for path in sorted([*folder.glob("*.cpp"), *folder.glob("*.c")]):
        text = path.read_text()
        also = {name for match in _ALSO_RE.finditer(text) for name in match.group(1).split()}
        arch = _ARCH_RE.search(text)
        probes.append(Probe(path, frozenset(_INCLUDE_RE.findall(text)), frozenset(also),
                            arch.group(1) if arch else None))
    return probes


def compilers(probe: Probe) -> tuple[str, list[str]]:
    """The compiler and flags the judge builds this file with."""
    return ("gcc", C_FLAGS) if probe.is_c else ("g++", CXX_FLAGS)


def build(probe: Probe, workdir: Path) -> Path:
    """Compile and link the probe as the judge builds a submission; the built library's path."""
    compiler, flags = compilers(probe)
    obj, library = workdir / f"{probe.path.stem}.o", workdir / f"{probe.path.stem}.so"
    for argv in ([compiler, *flags, "-c", str(probe.path), "-o", str(obj)],
                 ["g++", *LINK_FLAGS, str(obj), "-o", str(library)]):
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=workdir, timeout=300)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed:\n{proc.stderr[-4000:]}")
    return library


def imports(library: Path) -> list[str]:
    """The undefined dynamic symbols of `library`, without their @version, sorted."""
    out = subprocess.run([*NM, str(library)], capture_output=True, text=True, check=True, timeout=60).stdout
    return sorted({line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()})


def toolchain_lines() -> dict[str, str]:
    """What a recording depends on: the compilers' versions, the machine, the flags."""
    def version(tool: str) -> str:
        path = shutil.which(tool)
        if path is None:
            return "missing"
        return subprocess.run([path, "--version"], capture_output=True, text=True).stdout.splitlines()[0]

    return {
        "g++": version("g++"),
        "gcc": version("gcc"),
        "machine": platform.machine(),
        "c++ flags": " ".join(CXX_FLAGS),
        "c flags": " ".join(C_FLAGS),
        "link": "g++ " + " ".join(LINK_FLAGS),
        "imports": " ".join(NM) + " kernel.so, without @version",
    }


def read_record(path: Path = RECORD) -> tuple[dict[str, str], dict[str, list[str]]]:
    """(the recording's toolchain lines, the imports of each probe by file name)."""
    toolchain: dict[str, str] = {}
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in path.read_text().splitlines():
        if line.startswith("# ") and ": " in line and current is None:
            key, value = line[2:].split(": ", 1)
            toolchain[key] = value
        elif line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], [])
        elif line.strip() and not line.startswith("#") and current is not None:
            current.append(line.strip())
    return toolchain, sections


def write_record(found: dict[str, list[str]], path: Path = RECORD) -> None:
    head = [
        "# The imports of the standard-header probes (tests/judge/policy/probes), built with the judge's",
        "# compiler and flags; recorded by `.venv/bin/python -m tests.judge.policy.probes`.",
        "# tests/judge/policy/test_std_headers.py checks every name against the CPU library policy.",
        *(f"# {key}: {value}" for key, value in toolchain_lines().items()),
    ]
    body = [line for name in sorted(found) for line in ("", f"[{name}]", *found[name])]
    path.write_text("\n".join(head + body) + "\n")
