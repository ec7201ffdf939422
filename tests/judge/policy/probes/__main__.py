"""Record the probes' imports: `.venv/bin/python -m tests.judge.policy.probes` (writes imports.txt).

Builds every probe this machine can build, with the judge's compiler and flags, and writes what each
library imports. Names the CPU library policy refuses are printed: a legitimate header's import the
policy refuses is a false SV to fix in judge/policy/common.py.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from judge.backends import Backend
from judge.policy import rules_for
from judge.policy.common import COMPILER_WEAK
from tests.judge.policy.probes import RECORD, build, imports, load, write_record


def main() -> int:
    rules = rules_for(Backend.CPU)
    found: dict[str, list[str]] = {}
    refused: list[str] = []
    with tempfile.TemporaryDirectory(prefix="opjudge-probes-") as tmp:
        for probe in load():
            if not probe.builds_here():
                print(f"{probe.name}: not built here (arch {probe.arch})")
                continue
            workdir = Path(tmp) / probe.path.stem
            workdir.mkdir()
            found[probe.name] = imports(build(probe, workdir))
            refused += [f"{probe.name}: {n}" for n in found[probe.name]
                        if n not in COMPILER_WEAK and not rules.import_allowed(n)]
            print(f"{probe.name}: {len(found[probe.name])} imports")
    write_record(found)
    print(f"wrote {RECORD}")
    for line in refused:
        print(f"refused by the policy: {line}")
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
