"""The standard headers a CPU kernel may include pass both checks (docs/rules.md).

The allowed imports are derived from probes (tests/judge/policy/probes): kernels using each allowed
header's common API, built with the judge's compiler and flags. A recorded list (probes/imports.txt,
from the compiler named in its first lines) is checked against the policy without a compiler; the
probes are built again with this machine's compiler and every name they import must pass too. The
list itself may differ on another g++ (a new version moves an inline function into libstdc++, or
back): a difference is reported as a warning with the names, and fails only when the policy refuses
a name, which would be a false SV for every kernel using that header.
"""

from __future__ import annotations

import platform
import shutil
import warnings
from pathlib import Path

import pytest

from judge.backends import Backend
from judge.limits import CPU_LIMITS
from judge.policy import check_library, check_sources, rules_for
from judge.policy.common import COMPILER_WEAK
from judge.toolchains.base import SourceFile
from tests.judge.policy.probes import REFUSED_DIR, Probe, build, imports, load, read_record

PROBES = load()
REFUSED = load(REFUSED_DIR)
RULES = rules_for(Backend.CPU)
needs_compiler = pytest.mark.skipif(
    any(shutil.which(tool) is None for tool in ("g++", "gcc", "nm", "objdump")),
    reason="needs g++, gcc, nm and objdump (apt-get install g++ binutils)",
)


class ProbeImportsChanged(UserWarning):
    """This compiler's probe imports differ from the recorded ones (all allowed by the policy)."""


def refused_names(names: list[str]) -> list[str]:
    return [n for n in names if n not in COMPILER_WEAK and not RULES.import_allowed(n)]


def _source(path: Path) -> list[SourceFile]:
    return [SourceFile(path.name, path.read_bytes())]


def test_every_allowed_header_has_a_probe() -> None:
    covered = {h for p in PROBES for h in p.headers | p.also}
    assert RULES.allowed_system_headers - covered == set(), "add these headers to a probe in tests/judge/policy/probes"
    assert covered - RULES.allowed_system_headers == set(), "the probes include headers the policy refuses"
    for probe in PROBES:
        assert not probe.headers & probe.also, probe.name  # `also` is for headers reached through another


def test_refused_probes_cover_what_stays_refused() -> None:
    wanted = {"thread", "future", "mutex", "chrono", "ctime", "random_device", "fstream", "filesystem", "iostream",
              "cstdio_files", "process"}
    assert wanted <= {p.path.stem for p in REFUSED}


@pytest.mark.parametrize("probe", PROBES, ids=lambda p: p.name)
def test_probe_passes_the_source_check(probe: Probe) -> None:
    assert check_sources(Backend.CPU, _source(probe.path), CPU_LIMITS) == []


@pytest.mark.parametrize("probe", REFUSED, ids=lambda p: p.name)
def test_refused_probe_is_refused_by_the_source_check(probe: Probe) -> None:
    assert check_sources(Backend.CPU, _source(probe.path), CPU_LIMITS), probe.name


def test_recorded_imports_pass_the_library_policy() -> None:
    """The recorded compiler's imports, checked without a compiler (any host, any g++)."""
    toolchain, recorded = read_record()
    assert {p.name for p in PROBES if p.arch in (None, toolchain["machine"])} <= set(recorded)
    refused = {name: bad for name, names in recorded.items() if (bad := refused_names(names))}
    assert refused == {}, f"the CPU policy refuses what a legitimate kernel imports ({toolchain['g++']})"


@needs_compiler
@pytest.mark.parametrize("probe", PROBES, ids=lambda p: p.name)
def test_probe_library_passes_the_library_check(probe: Probe, tmp_path: Path) -> None:
    """Built with this machine's compiler: every import allowed, and no other finding."""
    if not probe.builds_here():
        pytest.skip(f"{probe.name} builds on {probe.arch} only")
    library = build(probe, tmp_path)
    names = imports(library)
    assert refused_names(names) == [], "the CPU policy refuses what a legitimate kernel imports"
    assert check_library(Backend.CPU, library) == []
    toolchain, recorded = read_record()
    if toolchain["machine"] != platform.machine() or probe.name not in recorded:
        return
    new, gone = sorted(set(names) - set(recorded[probe.name])), sorted(set(recorded[probe.name]) - set(names))
    if new or gone:
        warnings.warn(ProbeImportsChanged(
            f"{probe.name}: this compiler's imports differ from probes/imports.txt (recorded with "
            f"{toolchain['g++']}); all are allowed by the policy. New: {new or 'none'}; no longer imported: "
            f"{gone or 'none'}. Record them again with `.venv/bin/python -m tests.judge.policy.probes`."
        ), stacklevel=1)


@needs_compiler
@pytest.mark.parametrize("probe", REFUSED, ids=lambda p: p.name)
def test_refused_probe_is_refused_by_the_library_check(probe: Probe, tmp_path: Path) -> None:
    """What stays refused (threads, clocks, files, processes, random_device, iostream) is refused
    after the build too: the allowed import patterns did not grow over it."""
    findings = check_library(Backend.CPU, build(probe, tmp_path))
    assert findings, probe.name
    assert {f.rule for f in findings} <= {"banned-symbol", "load-time-code"}, findings


@needs_compiler
def test_named_critical_section_passes(tmp_path: Path) -> None:
    """A named critical section's lock `.gomp_critical_user_<name>` is a global the library exports: data no
    C name can reach, allowed (it was refused as exported-symbol)."""
    code = ('extern "C" int kernel_run(const int* a) {\n  int s = 0;\n#pragma omp parallel\n'
            '#pragma omp critical(merge)\n  s += a[0];\n  return s;\n}\n')
    (tmp_path / "named_critical.cpp").write_text(code)
    probe = load(tmp_path)[0]
    assert check_library(Backend.CPU, build(probe, tmp_path)) == []
