"""What the NPU library exports: kernel_run and kernel_workspace_bytes, nothing else.

A real ascendc_library build, whole-archived into the submission's library, defines extern "C"
launchers (aclrtlaunch_<kernel>), the kernels' host stubs, cross-file launch wrappers and
non-static helpers; the library policy refuses every such export. The judge's version script
keeps them local. These builds run real cmake and the host compiler on the fake CANN tree.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import pytest

from judge.backends import Backend
from judge.host_config import HostConfig
from judge.limits import Limits
from judge.policy import check_library
from judge.results import BuildResult
from judge.toolchains.base import SourceFile
from judge.tracks.npu.toolchain import EXPORTS_NAME, AscendToolchain
from judge.verdict import Verdict
from tests.judge.npu.conftest import DATA, REPO, LocalSandbox

STARTER = REPO / "reference_kernels" / "sparse_flash_attention_grad" / "npu"
ABI = {"kernel_run", "kernel_workspace_bytes"}

# Stands in for what bisheng makes of a device file: a generated extern "C" launcher, a kernel
# host stub, a global, a launch wrapper host code calls across files, a plain C++ helper.
DEVICE = b"""#include "sparse_flash_attention_grad.h"
int launches;
extern "C" int aclrtlaunch_my_kernel(unsigned blocks, void *stream) { return stream ? (int)blocks : -1; }
extern "C" void my_kernel(void *gm) { (void)gm; }
int device_helper(int blocks) { return blocks * 2; }
extern "C" int my_launch(long blocks, void *stream) {
    ++launches;
    return aclrtlaunch_my_kernel((unsigned)device_helper((int)blocks), stream) > 0 ? 0 : 9;
}
"""
# A host file with a non-static extern "C" planner (like the starter's sfag_plan) and a C++ helper.
HOST = b"""#include "sparse_flash_attention_grad.h"
extern "C" int my_launch(long blocks, void *stream);
extern "C" long my_plan(const kernel_args *a) { return a->B * 4; }
long host_helper(long x) { return x + 1; }
extern "C" int64_t kernel_workspace_bytes(const kernel_args *a) { return host_helper(my_plan(a)); }
extern "C" int kernel_run(const kernel_args *a) { return my_launch(my_plan(a), a->stream); }
"""
DEVICE_ONLY = b"""#include "sparse_flash_attention_grad.h"
extern "C" int only_helper(int x) { return x; }
extern "C" int kernel_run(const kernel_args *a) { return a->stream ? only_helper(0) : 5; }
"""
# The starter's kernel files need bisheng; on the host side they come down to the three launchers CANN
# generates (host_stub.cpp defines them): stand-ins with the generated signatures.
STARTER_DEVICE_STAND_IN = b"""#include <stdint.h>
#include "sfag_tiling.h"
extern "C" uint32_t aclrtlaunch_sfag_zero(uint32_t, void *, void *, SfagTiling *) { return 0; }
extern "C" uint32_t aclrtlaunch_sfag_main(uint32_t, void *, void *, void *, void *, void *, void *, void *,
                                          void *, void *, void *, void *, void *, void *, void *, SfagTiling *) {
    return 0;
}
extern "C" uint32_t aclrtlaunch_sfag_finalize(uint32_t, void *, void *, void *, void *, void *, SfagTiling *) {
    return 0;
}
"""
# Where sfag_host.cpp finds the generated aclrtlaunch_*.h (CANN 8.5.0's generator's output for the starter).
GENERATED = DATA / "cann_v8.5.0" / "generator" / "out" / "sfag_library" / "include"
STANDIN = DATA / "cann_v8.5.0" / "generator" / "standin_host_include"


def _needs_binutils() -> None:
    for tool in ("nm", "objdump"):
        if shutil.which(tool) is None:
            pytest.skip(f"needs {tool} (binutils) to read the built library")


def _build(tmp_path: Path, host: HostConfig, include_dir: Path, sources: list[SourceFile],
           *more_includes: Path) -> BuildResult:
    workdir = tmp_path / "build"
    workdir.mkdir()
    for source in sources:
        (workdir / source.name).write_bytes(source.content)
    return AscendToolchain(host).build(sources=sources, include_dirs=[include_dir, *more_includes], workdir=workdir,
                                       limits=Limits(), sandbox=LocalSandbox())


def _dynamic_exports(library: str) -> set[str]:
    """Defined symbols of the dynamic symbol table, less the linker's own section markers."""
    listing = subprocess.run(["nm", "-D", "--defined-only", library], capture_output=True, text=True, check=True)
    names = {line.split()[-1] for line in listing.stdout.splitlines() if line.strip()}
    return names - {"_init", "_fini", "__bss_start", "_edata", "_end"}


def _exported_symbol_findings(library: str) -> list[str]:
    return [f.message for f in check_library(Backend.NPU, Path(library)) if f.rule == "exported-symbol"]


def test_launchers_wrappers_and_helpers_stay_local(tmp_path: Path, npu_host: HostConfig, include_dir: Path) -> None:
    _needs_binutils()
    sources = [SourceFile("my_kernel.cpp", DEVICE), SourceFile("my_host.cpp", HOST)]
    result = _build(tmp_path, npu_host, include_dir, sources)
    assert result.ok, result.log
    assert result.library_path is not None
    assert _dynamic_exports(result.library_path) == ABI
    assert _exported_symbol_findings(result.library_path) == []
    # Local, not gone: kernel_run still reaches them.
    library = ctypes.CDLL(result.library_path)
    assert not hasattr(library, "my_plan") and not hasattr(library, "aclrtlaunch_my_kernel")


def test_kernel_run_in_a_device_file_alone_is_still_exported(tmp_path: Path, npu_host: HostConfig,
                                                             include_dir: Path) -> None:
    # It reaches the library through the whole-archived kernel library, whose symbols
    # --exclude-libs would hide whatever the version script says.
    _needs_binutils()
    result = _build(tmp_path, npu_host, include_dir, [SourceFile("only_kernel.cpp", DEVICE_ONLY)])
    assert result.ok, result.log
    assert result.library_path is not None
    assert _dynamic_exports(result.library_path) == {"kernel_run"}
    assert _exported_symbol_findings(result.library_path) == []


def test_the_starters_host_half_passes_the_export_check(tmp_path: Path, npu_host: HostConfig,
                                                        include_dir: Path) -> None:
    # sfag_plan is extern "C" and non-static (test_starter_host.py calls it): reported before the fix.
    _needs_binutils()
    sources = [SourceFile(name, (STARTER / name).read_bytes()) for name in ("sfag_host.cpp", "sfag_tiling.h")]
    sources.append(SourceFile("sfag_launchers_kernel.cpp", STARTER_DEVICE_STAND_IN))
    result = _build(tmp_path, npu_host, include_dir, sources, GENERATED, STANDIN)
    assert result.ok, result.log
    assert result.library_path is not None
    assert _dynamic_exports(result.library_path) == ABI
    assert _exported_symbol_findings(result.library_path) == []


def test_the_export_list_is_written_to_the_build_folder_not_beside_the_sources(
        tmp_path: Path, npu_host: HostConfig, include_dir: Path) -> None:
    sources = [SourceFile("my_kernel.cpp", DEVICE), SourceFile("my_host.cpp", HOST)]
    result = _build(tmp_path, npu_host, include_dir, sources)
    assert result.ok, result.log
    workdir = tmp_path / "build"
    script = (workdir / "opjudge_build" / EXPORTS_NAME).read_text()
    assert "kernel_run;" in script and "kernel_workspace_bytes;" in script and "local:" in script
    assert not (workdir / EXPORTS_NAME).exists()
    cmakelists = (workdir / "opjudge_cmake" / "CMakeLists.txt").read_text()
    assert '"LINKER:--version-script=${OPJUDGE_EXPORTS_SCRIPT}"' in cmakelists


@pytest.mark.parametrize("name", [EXPORTS_NAME, "opjudge_build", "opjudge_notes.txt"])
def test_a_team_file_cannot_take_a_name_the_judge_writes(tmp_path: Path, npu_host: HostConfig,
                                                          include_dir: Path, name: str) -> None:
    sandbox = LocalSandbox()
    sources = [SourceFile("my_kernel.cpp", DEVICE), SourceFile("my_host.cpp", HOST), SourceFile(name, b"{ };\n")]
    workdir = tmp_path / "build"
    result = AscendToolchain(npu_host).build(sources=sources, include_dirs=[include_dir], workdir=workdir,
                                             limits=Limits(), sandbox=sandbox)
    assert result.verdict is Verdict.CE
    assert "reserved for the judge" in result.log and name in result.log
    assert sandbox.calls == []
