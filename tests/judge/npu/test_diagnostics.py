"""Diagnostics from build output (bisheng is clang-based; ld and CMake have their own shapes).

The three logs under data/ are synthetic (data/README.md): written in those tools' shapes, never
produced by a CANN build. They test the parser, not what bisheng really prints.
"""

from __future__ import annotations

from pathlib import Path

from judge.tracks.npu.diagnostics import Diagnostic, PathCleaner, parse_diagnostics, summarize
from tests.judge.npu.conftest import DATA

CANN = Path("/usr/local/Ascend/ascend-toolkit/latest")


def _cleaner(run: str, files: list[str]) -> PathCleaner:
    return PathCleaner(Path(f"/var/opjudge/work/{run}/build"), CANN, files)


def test_compiler_errors_warnings_and_notes_in_order_without_duplicates() -> None:
    log = (DATA / "bisheng_compile_errors.log").read_text()
    found = parse_diagnostics(log, _cleaner("run-3f2a9c1d7e11", ["sfag_kernel.cpp", "sfag_tiling.h"]))
    assert [(d.severity, d.file, d.line, d.column) for d in found] == [
        ("warning", "sfag_tiling.h", 21, 5),
        ("error", "sfag_kernel.cpp", 57, 9),
        ("error", "sfag_kernel.cpp", 88, 9),
        ("note", "$CANN/compiler/tikcpp/tikcfw/interface/kernel_operator_data_copy_intf.h", 212, 24),
        ("warning", "sfag_kernel.cpp", 120, 14),
    ]
    assert found[1].message == "use of undeclared identifier 'tileLen'"
    assert found[3].message.startswith("candidate function template not viable")


def test_summary_lists_errors_first_with_team_paths() -> None:
    log = (DATA / "bisheng_compile_errors.log").read_text()
    cleaner = _cleaner("run-3f2a9c1d7e11", ["sfag_kernel.cpp", "sfag_tiling.h"])
    summary = summarize(parse_diagnostics(log, cleaner))
    assert summary.splitlines() == [
        "2 error(s), 2 warning(s):",
        "  sfag_kernel.cpp:57:9: error: use of undeclared identifier 'tileLen'",
        "  sfag_kernel.cpp:88:9: error: no matching function for call to 'DataCopyPad'",
    ]
    cleaned = cleaner.text(log)
    assert "/var/opjudge/work" not in cleaned and "$CANN/compiler/tikcpp" in cleaned


def test_undefined_symbols_from_gnu_ld() -> None:
    log = (DATA / "link_errors.log").read_text()
    found = parse_diagnostics(log, _cleaner("run-77a0be21c4d9", ["sfag_host.cpp"]))
    assert [d.message for d in found] == ["undefined reference to `sfag_launch_main'",
                                          "undefined reference to `sfag_launch_finalize'"]
    assert all(d.source == "linker" and d.severity == "error" for d in found)
    assert found[0].format() == "<linker>: error: undefined reference to `sfag_launch_main'"


def test_undefined_symbol_from_ld_lld() -> None:
    found = parse_diagnostics("ld.lld: error: undefined symbol: aclnnSparseFlashAttentionGrad\n"
                              ">>> referenced by sfag_host.cpp\n", _cleaner("run-x", []))
    assert found == [Diagnostic(severity="error", message="undefined symbol: aclnnSparseFlashAttentionGrad",
                                source="linker")]


def test_cmake_errors_point_into_the_cann_tree() -> None:
    log = (DATA / "cmake_configure_error.log").read_text()
    found = parse_diagnostics(log, _cleaner("run-0c9d5e3b2a10", []))
    assert [(d.source, d.file, d.line) for d in found] == [
        ("cmake", "$CANN/compiler/tikcpp/ascendc_kernel_cmake/host_config.cmake", 31)]


def test_progress_markers_and_colours_are_ignored() -> None:
    line = "[ 50%] \x1b[1m/w/build/a_kernel.cpp:3:1: \x1b[31merror: \x1b[0mexpected ';'"
    found = parse_diagnostics(line, PathCleaner(Path("/w/build"), None, ["a_kernel.cpp"]))
    assert [(d.file, d.line, d.message) for d in found] == [("a_kernel.cpp", 3, "expected ';'")]


def test_clean_log_has_no_summary() -> None:
    assert summarize([]) == ""


def test_work_folder_inside_object_paths_keeps_a_separator() -> None:
    cleaner = PathCleaner(Path("/tmp/run/build"), None, [])
    text = "Building CXX object CMakeFiles/k.dir/tmp/run/build/a_kernel.cpp.o\n/tmp/run/build/a_kernel.cpp:1:1: x"
    assert cleaner.text(text) == "Building CXX object CMakeFiles/k.dir/a_kernel.cpp.o\na_kernel.cpp:1:1: x"
