"""The starter and team-shaped kernels as CANN 8.5.0's own host-stub generator wrote them.

The files under data/cann_v8.5.0/generator/out/ are the outputs of asc-devkit's
cmake/asc/legacy_modules/util/extract_host_stub.py at tag v8.5.0, run by that folder's regen.sh on
the starter's kernel files and on the team-shaped inputs in generator/inputs/ (its README says how,
and what stands in for bisheng's preprocessing). These tests hold the project to them: the rules
the judge states and enforces (one kernel per file, the tiling by pointer, ASSERT_MSG) are the
generator's behaviour, read from its output, not from what we think it does.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from judge.backends import Backend
from judge.limits import Limits
from judge.policy import check_sources
from judge.toolchains.base import SourceFile
from judge.tracks.npu.diagnostics import known_cause
from judge.tracks.npu.project import ProjectError, check_kernel_signatures, classify
from tests.judge.npu.conftest import DATA, REPO

GENERATOR = DATA / "cann_v8.5.0" / "generator"
OUT = GENERATOR / "out"
INPUTS = GENERATOR / "inputs"
STARTER = REPO / "reference_kernels" / "sparse_flash_attention_grad" / "npu"
STARTER_FILES = ("sfag_finalize_kernel.cpp", "sfag_main_kernel.cpp", "sfag_zero_kernel.cpp")


def _meta_and_keys(case: str) -> tuple[list[str], dict[str, str]]:
    """The `.ascend.meta.<name>` sections the generated kernel wrappers carry, and each wrapper's kernel
    symbol (`auto_gen_<kernel>_kernel=<kernel>_<index>` in the generated aiv_config.cmake)."""
    sections: list[str] = []
    for wrapper in sorted((OUT / case / "auto_gen").glob("auto_gen_*.cpp")):
        sections += re.findall(r'section \("\.ascend\.meta\.(\w+)"\)', wrapper.read_text())
    config = (OUT / case / "auto_gen" / "aiv_config.cmake").read_text()
    keys = dict(re.findall(r"auto_gen_(\w+?)_kernel=(\w+)", config))
    return sections, keys


def test_the_provenance_of_every_case_is_recorded() -> None:
    for case in sorted(p for p in OUT.iterdir() if p.is_dir()):
        record = (case / "GENERATED_BY.txt").read_text()
        assert "repo cannmirror/asc-devkit, tag v8.5.0, commit cc982f3abd7628a2ba3ef61063a0c220c9340c53" in record
        assert "python3 extract_host_stub.py" in record and "(exit status 0)" in record, case.name


def test_the_starters_kernels_each_get_a_launcher_taking_the_tiling_by_pointer() -> None:
    include = OUT / "sfag_library" / "include"
    expected = {
        "sfag_zero": "void* workspace, SfagTiling* tiling",
        "sfag_main": "void* dq, void* dqr, void* workspace, SfagTiling* tiling",
        "sfag_finalize": "void* dk, void* dkr, void* dv, void* workspace, SfagTiling* tiling",
    }
    chevrons = (include / "aclrtlaunch_triple_chevrons_func.h").read_text()
    for kernel, tail in expected.items():
        header = (include / f"aclrtlaunch_{kernel}.h").read_text()
        assert re.search(rf"aclrtlaunch_{kernel}\(uint32_t blockDim, aclrtStream stream, [^)]*{re.escape(tail)}\)",
                         header), header
        assert "struct SfagTiling" not in header  # named, never declared: host code includes sfag_tiling.h first
        # What a <<<blocks, nullptr, stream>>> launch calls: the tiling by pointer there too.
        assert re.search(rf"inline uint32_t {kernel}\(uint32_t blockDim, void\* hold, void\* stream, [^)]*"
                         rf"{re.escape(tail)}\)", chevrons)
    # The generator found the tiling struct (file scope, `struct X {`) and copied it into the host stub.
    assert re.search(r"^struct SfagTiling \{", (OUT / "sfag_library" / "auto_gen" / "host_stub.cpp").read_text(),
                     re.M)


def test_with_one_kernel_a_file_each_kernels_metadata_is_under_its_own_index() -> None:
    sections, keys = _meta_and_keys("sfag_library")
    assert sorted(sections) == sorted(keys.values()) == ["sfag_finalize_0", "sfag_main_1", "sfag_zero_2"]


@pytest.mark.parametrize("case", ["sfag_kernel.at_8b6f925", "two_kernels_kernel"])
def test_with_two_or_more_kernels_in_a_file_the_metadata_is_filed_under_the_wrong_index(case: str) -> None:
    # The old three-kernel starter and a team file with two: every section takes the file's first index.
    sections, keys = _meta_and_keys(case)
    assert len(keys) >= 2
    assert set(sections) != set(keys.values())
    assert len({s.rsplit("_", 1)[1] for s in sections}) == 1


def test_the_judge_refuses_what_the_generator_mishandles_and_takes_the_starter() -> None:
    two = (INPUTS / "two_kernels_kernel.cpp").read_bytes()
    with pytest.raises(ProjectError, match="defines 2 kernels"):
        classify([SourceFile(name="two_kernels_kernel.cpp", content=two)])
    assert [check_kernel_signatures(name, (STARTER / name).read_text()) for name in STARTER_FILES] == [
        ["sfag_finalize"], ["sfag_main"], ["sfag_zero"]]
    generated = {p.name[len("aclrtlaunch_"):-2] for p in (OUT / "sfag_library" / "include").glob("aclrtlaunch_*.h")}
    assert generated - {"triple_chevrons_func"} == {"sfag_zero", "sfag_main", "sfag_finalize"}


def _unguarded_lines(code: str, needle: str) -> list[int]:
    """Lines holding `needle` outside every #if/#ifdef block (the preprocessor nesting, counted)."""
    depth, found = 0, []
    for number, line in enumerate(code.splitlines(), 1):
        stripped = line.strip()
        if re.match(r"#\s*if", stripped):
            depth += 1
        elif re.match(r"#\s*endif", stripped):
            depth -= 1
        elif needle in line and depth == 0:
            found.append(number)
    return found


def test_assert_msg_leaves_an_unguarded_dump_call_that_cannot_build_with_dump_off() -> None:
    stub = (OUT / "assert_msg_kernel_kernel" / "auto_gen" / "host_stub.cpp").read_text()
    assert _unguarded_lines(stub, "ascendc_set_exception_dump_info(__ascendc_one_core_dump_size);")
    # Plain assert() is compiled out under ASCENDC_DUMP=0: no dump code at all.
    plain = (OUT / "assert_kernel_kernel" / "auto_gen" / "host_stub.cpp").read_text()
    assert "ascendc_set_exception_dump_info" not in plain
    # The recorded compile of that stub with the judge's ASCENDC_DUMP=0 fails on it.
    checks = (OUT / "assert_msg_kernel_kernel" / "host_checks.txt").read_text()
    as_built = checks.split("## host_stub.cpp, -DASCENDC_DUMP=0")[1].split("##")[0]
    assert "rc=1" in as_built and "'ascendc_set_exception_dump_info' was not declared" in as_built
    assert known_cause(as_built) is not None and "ASSERT_MSG" in known_cause(as_built)


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_the_assert_msg_stub_fails_to_compile_here_too(tmp_path: Path) -> None:
    """The recorded stub compiled again with the host pass's flags: the failure is the generator's output,
    not the recording's."""
    stub = OUT / "assert_msg_kernel_kernel" / "auto_gen" / "host_stub.cpp"
    text = re.sub(r"__replaced_\w+_len", "16", stub.read_text())  # update_host_stub.py's sizes
    (tmp_path / "host_stub.cpp").write_text(text)
    done = subprocess.run(["g++", "-fPIC", "-O2", "-std=c++17", "-D_GLIBCXX_USE_CXX11_ABI=0", "-DASCENDC_DUMP=0",
                           f"-I{GENERATOR / 'standin_host_include'}", "-c", str(tmp_path / "host_stub.cpp"),
                           "-o", str(tmp_path / "host_stub.o")], capture_output=True, text=True)
    assert done.returncode != 0 and "ascendc_set_exception_dump_info" in done.stderr
    assert "ASSERT_MSG" in (known_cause(done.stderr) or "")


def _policy(name: str) -> list[str]:
    # The generator's inputs include "kernel_operator.h" (its stand-in folder); teams write <kernel_operator.h>.
    code = (INPUTS / name).read_text().replace('#include "kernel_operator.h"', "#include <kernel_operator.h>")
    source = SourceFile(name=name, content=code.encode())
    return [f"{f.rule}: {f.message}" for f in check_sources(Backend.NPU, [source], Limits(),
                                                            problem_headers=["sparse_flash_attention_grad.h"])]


def test_the_policy_refuses_assert_msg_before_the_build_and_keeps_plain_assert() -> None:
    refused = _policy("assert_msg_kernel_kernel.cpp")
    assert refused and refused[0].startswith("device-assert") and "ASSERT_MSG" in refused[0]
    assert _policy("assert_kernel_kernel.cpp") == []
