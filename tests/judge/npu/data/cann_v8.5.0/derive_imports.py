"""Derive the NPU track's list of what CANN 8.5.0's own objects import from the recorded symbol lists.

    python tests/judge/npu/data/cann_v8.5.0/derive_imports.py > judge/tracks/npu/cann_8.5.0_imports.txt

Reads symbols/*.undefined.txt and symbols/*.defined.txt (regen.sh's records of the objects CANN adds to
every ascendc_library archive, compiled from asc-devkit v8.5.0 with g++ 12) and prints every name one
of those objects leaves undefined that none of them defines, less the names the static linker itself
provides. tests/judge/npu/test_cann_imports.py checks the committed file is this script's output.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent / "symbols"
LINKER_DEFINED = {"_GLOBAL_OFFSET_TABLE_", "_DYNAMIC", "__dso_handle", "__TMC_END__", "_init", "_fini"}


def _names(path: Path) -> set[str]:
    return {line.split()[0] for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")}


def derive(folder: Path = HERE) -> tuple[list[str], list[str]]:
    """(the sources read, the sorted imports). Host stubs generated without ASCENDC_DUMP=0 (`.dump_unset.`)
    are left out: the judge always builds with ASCENDC_DUMP=0."""
    undefined_files = sorted(p for p in folder.glob("*.undefined.txt") if ".dump_unset." not in p.name)
    undefined = set().union(*(_names(p) for p in undefined_files))
    defined = set().union(*(_names(p) for p in sorted(folder.glob("*.defined.txt"))))
    return [p.name for p in undefined_files], sorted(undefined - defined - LINKER_DEFINED)


def render(folder: Path = HERE) -> str:
    sources, names = derive(folder)
    head = [
        "# What CANN 8.5.0's own objects in an ascendc_library build import (judge/tracks/npu/cann_symbols.py).",
        "# Derived, never edited: tests/judge/npu/data/cann_v8.5.0/derive_imports.py over the symbol lists",
        "# recorded from cannmirror/asc-devkit tag v8.5.0 (commit cc982f3abd7628a2ba3ef61063a0c220c9340c53) by",
        "# tests/judge/npu/data/cann_v8.5.0/symbols/regen.sh: " + ", ".join(sources),
    ]
    return "\n".join(head + names) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
