"""The CMake project AscendToolchain writes, checked as text and by real cmake runs on a fake CANN."""

from __future__ import annotations

import ctypes
from pathlib import Path

import pytest

from judge.abi import kernel_args_struct, pack_args
from judge.errors import ToolchainUnavailableError
from judge.host_config import HostConfig
from judge.limits import Limits
from judge.toolchains.base import SourceFile
from judge.track_settings.npu import NpuSettings
from judge.tracks.npu.project import ProjectError, classify, render_cmakelists
from judge.tracks.npu.toolchain import AscendToolchain
from judge.verdict import Verdict
from tests.judge.npu.conftest import HEADER, LocalSandbox

# A sample submission in the NPU format, written as plain C++ so the fake CANN's host compiler
# builds it: the device file holds the launch wrapper, the host file kernel_run and its tiling.
SAMPLE_KERNEL = b"""#include "sparse_flash_attention_grad.h"
#include "sample_tiling.h"
extern "C" int sample_launch(const SampleTiling *tiling, void *stream) {
    return (tiling->blocks > 0 && stream != 0) ? 0 : 7;
}
"""
SAMPLE_TILING = b"""#pragma once
#include <stdint.h>
struct SampleTiling { int64_t blocks; };
"""
SAMPLE_HOST = b"""#include "sparse_flash_attention_grad.h"
#include "sample_tiling.h"
extern "C" int sample_launch(const SampleTiling *tiling, void *stream);
extern "C" int64_t kernel_workspace_bytes(const kernel_args *args) { return args->B * 1024; }
extern "C" int kernel_run(const kernel_args *args) {
    SampleTiling tiling{args->B * args->S1};
    return sample_launch(&tiling, args->stream);
}
"""
KERNEL_ONLY = b"""#include "sparse_flash_attention_grad.h"
extern "C" int kernel_run(const kernel_args *args) { return args->stream ? 0 : 5; }
"""



def _cann(host: HostConfig) -> Path:
    root = host.track_settings(NpuSettings).ascend_home
    assert root is not None
    return root

def _sources(*pairs: tuple[str, bytes]) -> list[SourceFile]:
    return [SourceFile(name=name, content=content) for name, content in pairs]


SAMPLE = _sources(("sample_kernel.cpp", SAMPLE_KERNEL), ("sample_tiling.h", SAMPLE_TILING),
                  ("sample_host.cpp", SAMPLE_HOST))


def _write(workdir: Path, sources: list[SourceFile]) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    for source in sources:
        (workdir / source.name).write_bytes(source.content)


def test_classify_sorts_device_host_and_header_files() -> None:
    roles = classify(SAMPLE + _sources(("NOTES.txt", b"hello")))
    assert roles.kernels == ["sample_kernel.cpp"]
    assert roles.hosts == ["sample_host.cpp"]
    assert roles.headers == ["sample_tiling.h"]
    assert roles.ignored == ["NOTES.txt"]


def test_a_submission_without_a_device_source_is_refused_with_the_naming_rule() -> None:
    with pytest.raises(ProjectError, match=r"\*_kernel\.cpp"):
        classify(_sources(("host.cpp", SAMPLE_HOST)))
    with pytest.raises(ProjectError, match="reserved"):
        classify(_sources(("opjudge_kernel.cpp", KERNEL_ONLY)))


def test_cmakelists_text_uses_ascendc_library_for_device_sources_only(tmp_path: Path, fake_cann: Path,
                                                                      include_dir: Path) -> None:
    text = render_cmakelists(roles=classify(SAMPLE), workdir=tmp_path, include_dirs=[include_dir],
                             soc="Ascend910B3", cann_root=fake_cann,
                             cmake_module_dir=fake_cann / "compiler/tikcpp/ascendc_kernel_cmake")
    assert 'set(SOC_VERSION "Ascend910B3"' in text
    assert f'set(ASCEND_CANN_PACKAGE_PATH "{fake_cann}"' in text
    assert f'include("{fake_cann}/compiler/tikcpp/ascendc_kernel_cmake/ascendc.cmake")' in text
    device_block = text.split("ascendc_library(opjudge_kernels STATIC", 1)[1].split(")", 1)[0]
    assert f'"{tmp_path}/sample_kernel.cpp"' in device_block and "sample_host.cpp" not in device_block
    host_block = text.split("add_library(opjudge_submission SHARED", 1)[1].split(")", 1)[0]
    assert f'"{tmp_path}/sample_host.cpp"' in host_block and "sample_kernel.cpp" not in host_block
    # The problem header's folder is on both include paths; the library is workdir/kernel.so.
    assert text.count(f'"{include_dir}"') == 2
    assert "-Wl,--whole-archive opjudge_kernels -Wl,--no-whole-archive" in text
    assert 'OUTPUT_NAME "kernel"' in text and f'LIBRARY_OUTPUT_DIRECTORY "{tmp_path}"' in text
    assert "ASCENDC_DUMP=0" in text


def test_paths_that_would_break_the_cmake_file_are_refused(tmp_path: Path, fake_cann: Path) -> None:
    with pytest.raises(ProjectError, match="cannot be written"):
        render_cmakelists(roles=classify(SAMPLE), workdir=tmp_path / 'a"b', include_dirs=[], soc="Ascend910B3",
                          cann_root=fake_cann, cmake_module_dir=fake_cann)


def test_build_configures_and_builds_a_loadable_library(tmp_path: Path, npu_host: HostConfig,
                                                         include_dir: Path) -> None:
    workdir = tmp_path / "build"
    _write(workdir, SAMPLE)
    sandbox = LocalSandbox()
    toolchain = AscendToolchain(npu_host)
    result = toolchain.build(sources=SAMPLE, include_dirs=[include_dir], workdir=workdir, limits=Limits(),
                             sandbox=sandbox)
    assert result.ok, result.log
    assert result.library_path == str(workdir / "kernel.so")
    assert (workdir / "kernel.kernels.txt").read_text() == ""  # the names msprof op is given: no __global__ here
    assert result.toolchain == "CANN 8.0.RC2 bisheng for Ascend910B3"
    assert "fake CANN: SOC_VERSION=Ascend910B3 RUN_MODE=npu" in result.log
    assert str(workdir) not in result.log  # the team sees its own names, not the judge's folders
    # Only the device source went through the (fake) bisheng.
    calls = (_cann(npu_host) / "calls.log").read_text()
    assert "sample_kernel.cpp" in calls and "sample_host.cpp" not in calls
    # Both steps ran in the sandbox with CANN's environment, the CANN tree bound read-only.
    assert [argv[1] for argv, _, _ in sandbox.calls] == ["-S", "--build"]
    env, binds = sandbox.calls[0][1], sandbox.calls[0][2]
    assert env is not None and env["ASCEND_HOME_PATH"] == str(_cann(npu_host))
    assert any(b.source == _cann(npu_host) and not b.writable for b in binds)
    # The library exports kernel_run built from host + device objects, and works through the ABI.
    library = ctypes.CDLL(result.library_path)
    struct = kernel_args_struct(HEADER)
    pointers: dict[str, int | None] = {name: None for name, ctype in struct._fields_ if ctype is ctypes.c_void_p}
    scalars = {name: 1 for name, ctype in struct._fields_ if ctype is not ctypes.c_void_p}
    pointers["stream"] = 0x1234
    args = pack_args(struct, pointers=pointers, scalars={**scalars, "scale": 0.5, "B": 3})
    library.kernel_run.restype = ctypes.c_int
    library.kernel_workspace_bytes.restype = ctypes.c_int64
    assert library.kernel_run(ctypes.byref(args)) == 0
    assert library.kernel_workspace_bytes(ctypes.byref(args)) == 3 * 1024


def test_kernel_run_may_live_in_the_device_file_alone(tmp_path: Path, npu_host: HostConfig,
                                                      include_dir: Path) -> None:
    sources = _sources(("only_kernel.cpp", KERNEL_ONLY))
    workdir = tmp_path / "build"
    _write(workdir, sources)
    result = AscendToolchain(npu_host).build(sources=sources, include_dirs=[include_dir], workdir=workdir,
                                             limits=Limits(), sandbox=LocalSandbox())
    assert result.ok, result.log
    assert hasattr(ctypes.CDLL(result.library_path), "kernel_run")


def test_a_syntax_error_is_ce_with_the_diagnostic_on_the_team_file(tmp_path: Path, npu_host: HostConfig,
                                                                    include_dir: Path) -> None:
    broken = _sources(("broken_kernel.cpp", b'#include "sparse_flash_attention_grad.h"\n'
                       b'extern "C" int kernel_run(const kernel_args *a) {\n    return undeclared_name;\n}\n'))
    workdir = tmp_path / "build"
    _write(workdir, broken)
    toolchain = AscendToolchain(npu_host)
    result = toolchain.build(sources=broken, include_dirs=[include_dir], workdir=workdir, limits=Limits(),
                             sandbox=LocalSandbox())
    assert not result.ok and result.verdict is Verdict.CE
    assert result.log.startswith("1 error(s)")
    summary = result.log.splitlines()[1]
    assert summary.startswith("  broken_kernel.cpp:3:12: error: ") and "undeclared_name" in summary
    assert [(d.file, d.line) for d in toolchain.diagnostics if d.severity == "error"] == [("broken_kernel.cpp", 3)]


def test_a_format_error_is_ce_before_cmake_runs(tmp_path: Path, npu_host: HostConfig, include_dir: Path) -> None:
    sandbox = LocalSandbox()
    result = AscendToolchain(npu_host).build(sources=_sources(("host.cpp", SAMPLE_HOST)), include_dirs=[include_dir],
                                             workdir=tmp_path, limits=Limits(), sandbox=sandbox)
    assert result.verdict is Verdict.CE and "_kernel.cpp" in result.log
    assert sandbox.calls == []


def test_a_broken_cann_module_is_ie_not_ce(tmp_path: Path, npu_host: HostConfig, include_dir: Path) -> None:
    module = _cann(npu_host) / "compiler/tikcpp/ascendc_kernel_cmake/ascendc.cmake"
    module.write_text('message(FATAL_ERROR "SOC_VERSION Ascend910B3 does not support")\n')
    workdir = tmp_path / "build"
    _write(workdir, SAMPLE)
    result = AscendToolchain(npu_host).build(sources=SAMPLE, include_dirs=[include_dir], workdir=workdir,
                                             limits=Limits(), sandbox=LocalSandbox())
    assert result.verdict is Verdict.IE
    assert "$CANN/compiler/tikcpp/ascendc_kernel_cmake/ascendc.cmake:1: error" in result.log


def test_the_compile_time_limit_gives_tle(tmp_path: Path, npu_host: HostConfig, include_dir: Path) -> None:
    workdir = tmp_path / "build"
    _write(workdir, SAMPLE)
    result = AscendToolchain(npu_host).build(sources=SAMPLE, include_dirs=[include_dir], workdir=workdir,
                                             limits=Limits(compile_time_limit_s=0.05), sandbox=LocalSandbox())
    assert result.verdict is Verdict.TLE and "compile time limit exceeded" in result.log


def test_without_cann_the_build_fails_loudly(tmp_path: Path, include_dir: Path) -> None:
    toolchain = AscendToolchain(HostConfig(work_root=tmp_path, settings=(NpuSettings(soc="Ascend910B3"),)))
    with pytest.raises(ToolchainUnavailableError, match="ascend_home"):
        toolchain.version()
    with pytest.raises(ToolchainUnavailableError):
        toolchain.build(sources=SAMPLE, include_dirs=[include_dir], workdir=tmp_path, limits=Limits(),
                        sandbox=LocalSandbox())


@pytest.mark.sandbox
def test_build_runs_inside_the_real_sandbox_with_cann_read_only(tmp_path: Path, npu_host: HostConfig,
                                                                 include_dir: Path, strict_sandbox) -> None:  # type: ignore[no-untyped-def]
    sandbox = strict_sandbox
    workdir = tmp_path / "build"
    _write(workdir, SAMPLE)
    result = AscendToolchain(npu_host).build(sources=SAMPLE, include_dirs=[include_dir], workdir=workdir,
                                             limits=Limits(), sandbox=sandbox)
    assert result.ok, result.log
    assert "Read-only file system" in result.log  # the fake bisheng could not write into the CANN tree
    assert hasattr(ctypes.CDLL(result.library_path), "kernel_run")
