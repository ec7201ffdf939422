"""The NPU library policy by object: CANN's own objects may import CANN's launch path, the team's may not.

The built `kernel.so` holds the team's objects and CANN's (judge/tracks/npu/cann_symbols.py says
which and why). Its dynamic imports alone cannot say who asked for `MsprofReportApi` or
`aclrtSetDevice`, so before the library check (judge/policy/library.py, with the NPU's combined
allow-list) this check reads every object the link put in, sorts them, and holds each to its own list:

- CANN's runtime objects: the archive members whose bytes are those of a member of
  `$ASCEND_HOME/lib64/libascendc_runtime.a` (what host_intf.cmake extracts and function.cmake links):
  CANN's shipped code, trusted as it is;
- the generated `host_stub.cpp.o`: CANN's recorded imports (cann_symbols.py, which include the generator's
  own host stubs' at the pinned version), plus what a team may call (it copies the team's tiling structs
  in), and the generator's one load-time constructor;
- everything else (the host sources, the kernels' host-pass objects): the team's own, held to the
  team's allow-list (`judge.tracks.npu.policy.TEAM_RULES`) and to no load-time constructor, but the
  one `<iostream>` gives a translation unit with GCC before 13 (CANN's own tiling headers include it).

A name one object imports and another defines is no import of the library and is not checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from judge.policy.common import COMPILER_WEAK
from judge.policy.rules import BackendRules
from judge.results import PolicyFinding
from judge.tracks.npu.cann_symbols import (
    CANN_OBJECT_CALLS,
    CANN_OBJECT_PATTERNS,
    HOST_STUB_INIT_ENTRIES,
    HOST_STUB_OBJECT,
    RUNTIME_ARCHIVE,
    RUNTIME_MEMBERS,
)
from judge.tracks.npu.objects import ObjectFile, read_archive, read_object

KERNEL_ARCHIVE = "libopjudge_kernels.a"  # ascendc_library(opjudge_kernels STATIC ...) in the template
HOST_OBJECTS_DIR = "CMakeFiles/opjudge_submission.dir"  # CMake's folder for the shared library's own objects
IOSTREAM_INIT = "_ZNSt8ios_base4InitC1Ev"
# Names an object refers to that the static linker itself defines (the GOT of -fPIC code on x86-64, ...).
LINKER_DEFINED = frozenset({"_GLOBAL_OFFSET_TABLE_", "_DYNAMIC", "__dso_handle", "__TMC_END__", "_init", "_fini"})


class LinkCheckError(ValueError):
    """The build's objects cannot be found or read: the judge's problem (IE), with the reason."""


@dataclass(frozen=True)
class LinkedObjects:
    cann: list[ObjectFile]  # byte for byte CANN's libascendc_runtime.a members
    stub: list[ObjectFile]  # the generated host_stub.cpp.o
    team: list[ObjectFile]  # everything else


def collect_objects(build_dir: Path, cann_root: Path) -> LinkedObjects:
    """The objects the link of `kernel.so` took, sorted by whose they are; LinkCheckError if unreadable."""
    # function.cmake puts it in ${CMAKE_BINARY_DIR}/lib; the tests' fake CANN beside the build.
    archives = [a for a in (build_dir / "lib" / KERNEL_ARCHIVE, build_dir / KERNEL_ARCHIVE) if a.is_file()]
    archives = archives or sorted(build_dir.rglob(KERNEL_ARCHIVE))
    if not archives:
        raise LinkCheckError(f"the build made no {KERNEL_ARCHIVE} under {build_dir}: cannot check its objects")
    runtime = cann_root / RUNTIME_ARCHIVE
    try:
        shipped = {obj.data for obj in read_archive(runtime)} if runtime.is_file() else set()
        members = read_archive(archives[0])
        hosts = [read_object(path.name, str(path.parent), path.read_bytes())
                 for path in sorted((build_dir / HOST_OBJECTS_DIR).rglob("*.o"))]
    except (OSError, ValueError) as exc:
        raise LinkCheckError(f"cannot read the build's objects: {exc}") from exc
    unknown = [obj.name for obj in members if obj.name in RUNTIME_MEMBERS and obj.data not in shipped]
    if unknown:
        # Kernel sources end in _kernel.cpp, so no team object has these names: the toolkit's
        # runtime archive is missing or is not the one the build used.
        raise LinkCheckError(f"the kernel archive holds {', '.join(unknown)}, which are not the members of {runtime}: "
                             "cannot tell CANN's objects from the team's")
    cann = [obj for obj in members if obj.data in shipped]
    stub = [obj for obj in members if obj.data not in shipped and obj.name == HOST_STUB_OBJECT]
    team = [obj for obj in members if obj.data not in shipped and obj.name != HOST_STUB_OBJECT] + hosts
    return LinkedObjects(cann=cann, stub=stub, team=team)


def check_linked_objects(objects: LinkedObjects, team_rules: BackendRules) -> list[PolicyFinding]:
    """Findings for team objects that import what only CANN's objects may, or run code at load time."""
    defined = set().union(*(obj.defined for obj in (*objects.cann, *objects.stub, *objects.team)))
    findings: list[PolicyFinding] = []
    for obj in objects.team:
        findings += _imports(obj, defined, team_rules.import_allowed, team_rules.allowed_imports_in_words)
        allowed_init = 1 if IOSTREAM_INIT in obj.undefined else 0
        if obj.init_entries > allowed_init:
            findings.append(PolicyFinding(
                rule="load-time-code", file=obj.source_name,
                message=f"{obj.source_name} runs code when the library is loaded ({obj.init_entries} constructor(s): "
                        "a constructor function, or a global object with a constructor such as a global std::vector): "
                        "move it inside kernel_run"))

    def stub_allowed(name: str) -> bool:
        return (team_rules.import_allowed(name) or name in CANN_OBJECT_CALLS
                or any(re.fullmatch(p, name) for p in CANN_OBJECT_PATTERNS))

    for obj in objects.stub:
        findings += _imports(obj, defined, stub_allowed, "the generated launchers' own runtime calls")
        if obj.init_entries > HOST_STUB_INIT_ENTRIES:
            findings.append(PolicyFinding(
                rule="load-time-code", file="<host stub>",
                message="the host stub CANN generated from your kernels runs more code at load time than its "
                        "kernel registration: a tiling struct of yours has a member with a constructor "
                        "(e.g. a static inline member): tiling structs must be plain data"))
    return findings


def _imports(obj: ObjectFile, defined: set[str], allowed, in_words: str) -> list[PolicyFinding]:  # type: ignore[no-untyped-def]
    external = obj.undefined - defined - COMPILER_WEAK - LINKER_DEFINED
    refused = sorted(name for name in external if not allowed(name))
    return [PolicyFinding(rule="banned-symbol", file=obj.source_name,
                          message=f"{obj.source_name} calls `{name}`, which kernels may not use (only {in_words}); "
                                  "CANN's own launch objects may, yours may not")
            for name in refused]
