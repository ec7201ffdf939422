"""The CANN part of the NPU import list is derived from recorded symbol lists, not written by hand.

judge/tracks/npu/cann_8.5.0_imports.txt must be what data/cann_v8.5.0/derive_imports.py makes of
the undefined-symbol lists regen.sh recorded from asc-devkit v8.5.0's runtime objects and the generator's
host stubs; the team's own objects stay under their narrower list.
"""

from __future__ import annotations

import importlib.util
from types import ModuleType

from judge.tracks.npu.cann_symbols import CANN_OBJECT_CALLS, PINNED_CANN, recorded_imports
from judge.tracks.npu.policy import RULES, TEAM_RULES
from tests.judge.npu.conftest import DATA, REPO

COMMITTED = REPO / "judge" / "tracks" / "npu" / f"cann_{PINNED_CANN}_imports.txt"


def _derivation() -> ModuleType:
    spec = importlib.util.spec_from_file_location("derive_imports", DATA / "cann_v8.5.0" / "derive_imports.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_list_is_the_derivation_of_the_recorded_symbols() -> None:
    assert COMMITTED.read_text() == _derivation().render(), (
        "regenerate: python tests/judge/npu/data/cann_v8.5.0/derive_imports.py > " + str(COMMITTED.relative_to(REPO)))
    assert CANN_OBJECT_CALLS == recorded_imports() and len(CANN_OBJECT_CALLS) > 100


def test_the_derivation_reads_every_recorded_object_and_drops_what_they_define() -> None:
    sources, names = _derivation().derive()
    assert {"ascendc_runtime.undefined.txt", "aicpu_rt.undefined.txt", "ascendc_elf_tool.undefined.txt"} <= set(sources)
    assert any(s.startswith("host_stub.sfag_") for s in sources)
    assert not any(".dump_unset." in s for s in sources)  # the judge builds with ASCENDC_DUMP=0
    # Defined by one of CANN's objects for another: no import of the library.
    assert "ElfGetSymbolOffset" not in names and "RegisterAscendBinary" not in names
    assert "_GLOBAL_OFFSET_TABLE_" not in names


def test_every_recorded_import_passes_the_library_check_and_the_runtime_api_stays_cannns() -> None:
    refused = sorted(name for name in CANN_OBJECT_CALLS if not RULES.import_allowed(name))
    assert refused == []
    runtime_api = sorted(name for name in CANN_OBJECT_CALLS if name.startswith("rt"))
    assert "rtKernelLaunchWithHandleV2" in runtime_api and "rtMalloc" in runtime_api
    for name in (*runtime_api, "aclrtSetDevice", "aclrtRecordEvent", "aclrtCreateStreamWithConfig",
                 "aclrtStreamWaitEvent", "_ZNSt6thread4joinEv", "nanosleep", "MsprofReportApi"):
        assert not TEAM_RULES.import_allowed(name), name


def test_the_tool_log_at_the_tag_logs_through_alog() -> None:
    calls = (DATA / "cann_v8.5.0" / "symbols" / "tool_log_calls.txt").read_text()
    rows = dict(line.split(": ", 1) for line in calls.splitlines() if line.startswith("ASCENDLOG"))
    assert set(rows) == {"ASCENDLOGE", "ASCENDLOGW", "ASCENDLOGI", "ASCENDLOGD"}
    for called in rows.values():
        names = [n.removesuffix("(w)") for n in called.split()]
        assert "AlogRecord" in names and not any(n.startswith("dlog_") for n in names)
        assert all(RULES.import_allowed(n) for n in names)
