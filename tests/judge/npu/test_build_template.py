"""What the build template gives teams' host and Cube code (docs/npu-worker.md).

Checked against CANN's own build files (cannmirror/asc-devkit, cmake/asc/legacy_modules): host code
as host_intf.cmake compiles CANN's (_GLIBCXX_USE_CXX11_ABI=0), kernels with HAVE_WORKSPACE and
HAVE_TILING so the generated wrapper sets the system workspace (util/extract_host_stub.py), and the
kernel signature those two impose checked before cmake runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.toolchains.base import SourceFile
from judge.tracks.npu.project import ProjectError, check_kernel_signatures, classify, render_cmakelists
from tests.judge.npu.conftest import REPO

STARTER = REPO / "reference_kernels" / "sparse_flash_attention_grad" / "npu"


def _text(tmp_path: Path, fake_cann: Path) -> str:
    roles = classify([SourceFile(name="a_kernel.cpp", content=b""), SourceFile(name="host.cpp", content=b"")])
    return render_cmakelists(roles=roles, workdir=tmp_path, include_dirs=[], soc="Ascend910B3", cann_root=fake_cann,
                             cmake_module_dir=fake_cann / "compiler/tikcpp/ascendc_kernel_cmake")


def test_host_code_is_built_with_canns_string_abi_and_kernels_with_a_system_workspace(tmp_path: Path,
                                                                                      fake_cann: Path) -> None:
    text = _text(tmp_path, fake_cann)
    assert "target_compile_definitions(opjudge_submission PRIVATE _GLIBCXX_USE_CXX11_ABI=0)" in text
    assert "ascendc_compile_definitions(opjudge_kernels PRIVATE ASCENDC_DUMP=0 HAVE_WORKSPACE HAVE_TILING)" in text
    assert "foreach(opjudge_lib tiling_api graph_base register platform)" in text


def test_the_starters_kernels_end_with_workspace_and_tiling_one_a_file() -> None:
    names = {path.name: check_kernel_signatures(path.name, path.read_text())
             for path in sorted(STARTER.glob("*_kernel.cpp"))}
    assert names == {"sfag_finalize_kernel.cpp": ["sfag_finalize"], "sfag_main_kernel.cpp": ["sfag_main"],
                     "sfag_zero_kernel.cpp": ["sfag_zero"]}


def test_a_kernel_file_with_two_kernels_is_refused_with_the_reason() -> None:
    # CANN's ascendc_library takes one kernel function per kernel file; with two, the generator files the
    # second's metadata under the first's index (data/cann_v8.5.0/generator, two_kernels_kernel.cpp).
    code = ('extern "C" __global__ __aicore__ void first(GM_ADDR x, GM_ADDR workspace, T tiling) {}\n'
            '// __global__ __aicore__ void commented(GM_ADDR workspace, T tiling) {}\n'
            'extern "C" __global__ __aicore__ void second(GM_ADDR x, GM_ADDR workspace, T tiling) {}\n')
    with pytest.raises(ProjectError, match=r"two_kernel\.cpp: defines 2 kernels \(first, second\); put each"):
        check_kernel_signatures("two_kernel.cpp", code)
    with pytest.raises(ProjectError, match="one kernel function per kernel file"):
        classify([SourceFile(name="two_kernel.cpp", content=code.encode())])
    roles = classify([SourceFile(name="a_kernel.cpp", content=code.split("\n")[0].encode()),
                      SourceFile(name="b_kernel.cpp", content=code.split("\n")[2].encode())])
    assert roles.kernel_names == ["first", "second"]


@pytest.mark.parametrize("params", [
    "GM_ADDR dst, uint64_t bytes",  # the parameter before last would be moved 16 MiB on
    "GM_ADDR x, GM_ADDR y, Tiling t",  # a GM pointer, but not the workspace
    "Tiling t",
])
def test_a_kernel_without_the_workspace_before_its_tiling_is_refused(params: str) -> None:
    code = f'extern "C" __global__ __aicore__ void k({params}) {{}}\n'
    with pytest.raises(ProjectError, match=r"must end with \(GM_ADDR workspace"):
        check_kernel_signatures("x_kernel.cpp", code)


def test_kernels_in_comments_and_vector_kernels_are_read_right() -> None:
    check_kernel_signatures("x_kernel.cpp", "// __global__ __aicore__ void old(GM_ADDR x) {}\n"
                            "__global__ __vector__ void add(GM_ADDR x, GM_ADDR workspace, AddTiling tiling) {}\n")
    with pytest.raises(ProjectError, match="kernel add"):
        check_kernel_signatures("x_kernel.cpp", "__global__ __vector__ void add(GM_ADDR x, AddTiling tiling) {}\n")


def test_classify_refuses_a_bad_kernel_signature_as_a_build_error() -> None:
    bad = SourceFile(name="z_kernel.cpp", content=b"__global__ __aicore__ void z(GM_ADDR out, uint64_t n) {}\n")
    with pytest.raises(ProjectError):
        classify([bad])


def test_the_template_builds_what_the_recorded_generator_run_was_given(tmp_path: Path, fake_cann: Path) -> None:
    """The generator fixtures (data/cann_v8.5.0/generator) were made for the judge's own build: the same
    target (its generated headers land in include/<target>, the interface folder host code reads), the
    same definitions; and the object check reads that target's archive."""
    import re

    from judge.tracks.npu.link_check import KERNEL_ARCHIVE
    from tests.judge.npu.conftest import DATA

    record = (DATA / "cann_v8.5.0" / "generator" / "out" / "sfag_library" / "GENERATED_BY.txt").read_text()
    target = re.search(r"-hd \S+/include/(\w+)", record)
    defines = re.search(r"^defines: (.*?)\s{2,}", record, re.M)
    assert target and defines
    text = _text(tmp_path, fake_cann)
    assert f"ascendc_library({target.group(1)} STATIC" in text and KERNEL_ARCHIVE == f"lib{target.group(1)}.a"
    ours = re.search(rf"ascendc_compile_definitions\({target.group(1)} PRIVATE ([^)]*)\)", text)
    assert ours and {f"-D{d}" for d in ours.group(1).split()} <= set(defines.group(1).split())
