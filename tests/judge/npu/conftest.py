"""Fixtures for the NPU track's tests: a fake CANN tree and a plain local sandbox.

The fake CANN tree has the layout AscendToolchain checks (bin/, lib64/, include/, the ascendc
CMake module, a bisheng compiler) but its `ascendc_library` is a plain `add_library` whose
compiles go through a fake `bisheng` launcher script wrapping the host compiler: enough for a
real `cmake` configure and build of a submission written as plain C++.
"""

from __future__ import annotations

import os
import stat
import subprocess
import time
from pathlib import Path

import pytest

from judge.backends import Isolation
from judge.host_config import HostConfig
from judge.sandbox.base import Bind, ProcessResult, Sandbox, SandboxLimits
from judge.track_settings.npu import NpuSettings

REPO = Path(__file__).resolve().parents[3]
HEADER = REPO / "problems" / "sparse_flash_attention_grad" / "sparse_flash_attention_grad.h"
DATA = Path(__file__).parent / "data"

FAKE_ASCENDC_CMAKE = """\
# Fake ascendc.cmake (opjudge tests): ascendc_library as a plain add_library, compiled through
# the fake bisheng launcher so the test can see which sources took the device path.
if(NOT DEFINED SOC_VERSION)
    message(FATAL_ERROR "SOC_VERSION value not set.")
endif()
if(NOT EXISTS "${ASCEND_CANN_PACKAGE_PATH}")
    message(FATAL_ERROR "${ASCEND_CANN_PACKAGE_PATH} does not exist")
endif()
message(STATUS "fake CANN: SOC_VERSION=${SOC_VERSION} RUN_MODE=${RUN_MODE}")
# Like CANN's function.cmake, a STATIC ascendc_library also takes the members of
# lib64/libascendc_runtime.a (host_intf.cmake extracts them into the build folder).
function(ascendc_library target kind)
    set_source_files_properties(${ARGN} PROPERTIES LANGUAGE CXX)
    set(runtime_objects)
    if(EXISTS "${ASCEND_CANN_PACKAGE_PATH}/lib64/libascendc_runtime.a")
        set(objects_dir "${CMAKE_BINARY_DIR}/ascendc_runtime_objects")
        file(MAKE_DIRECTORY "${objects_dir}")
        execute_process(COMMAND ar x "${ASCEND_CANN_PACKAGE_PATH}/lib64/libascendc_runtime.a"
                        WORKING_DIRECTORY "${objects_dir}")
        file(GLOB runtime_objects "${objects_dir}/*.o")
    endif()
    add_library(${target} ${kind} ${ARGN} ${runtime_objects})
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON
        CXX_COMPILER_LAUNCHER "${ASCEND_CANN_PACKAGE_PATH}/compiler/ccec_compiler/bin/bisheng")
endfunction()
function(ascendc_include_directories target scope)
    target_include_directories(${target} ${scope} ${ARGN})
endfunction()
function(ascendc_compile_definitions target scope)
    target_compile_definitions(${target} ${scope} ${ARGN})
endfunction()
function(ascendc_compile_options target scope)
    target_compile_options(${target} ${scope} ${ARGN})
endfunction()
"""

FAKE_BISHENG = """\
#!/bin/sh
# Fake bisheng (opjudge tests): note the call, then run the real compiler it was given.
echo "fake-bisheng: $*" >> "$(dirname "$0")/../../../calls.log"
exec "$@"
"""


def make_fake_cann(root: Path, *, module_dir: str = "compiler/tikcpp/ascendc_kernel_cmake",
                   version: str = "8.0.RC2") -> Path:
    """A CANN-shaped tree at `root`; returns `root`."""
    for folder in ("bin", "lib64", "include", "opp", module_dir, "compiler/ccec_compiler/bin"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / module_dir / "ascendc.cmake").write_text(FAKE_ASCENDC_CMAKE)
    bisheng = root / "compiler/ccec_compiler/bin/bisheng"
    bisheng.write_text(FAKE_BISHENG)
    bisheng.chmod(bisheng.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    (root / "compiler" / "version.info").write_text(f"Version={version}\n")
    return root


class LocalSandbox(Sandbox):
    """Runs commands as plain subprocesses (no isolation): the toolchain's logic is under test here."""

    isolation = Isolation.OFF

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], dict[str, str] | None, list[Bind]]] = []

    def run(self, argv: list[str], *, limits: SandboxLimits, binds: list[Bind], workdir: Path, timeout_s: float,
            env: dict[str, str] | None = None) -> ProcessResult:
        self.calls.append((argv, env, binds))
        started = time.monotonic()
        try:
            done = subprocess.run(argv, cwd=workdir, env={**os.environ, **(env or {})}, capture_output=True,
                                  timeout=timeout_s)
        except subprocess.TimeoutExpired as exc:
            return ProcessResult(returncode=-9, stdout=exc.stdout or b"", stderr=exc.stderr or b"",
                                 duration_s=time.monotonic() - started, timed_out=True)
        return ProcessResult(returncode=done.returncode, stdout=done.stdout, stderr=done.stderr,
                             duration_s=time.monotonic() - started)

    def popen(self, argv, **kwargs):  # type: ignore[no-untyped-def,override]
        raise NotImplementedError("the NPU toolchain tests only run commands to completion")


@pytest.fixture
def fake_cann(tmp_path: Path) -> Path:
    return make_fake_cann(tmp_path / "Ascend" / "ascend-toolkit" / "8.0.RC2")


@pytest.fixture
def npu_host(tmp_path: Path, fake_cann: Path) -> HostConfig:
    return HostConfig(work_root=tmp_path / "work", settings=(NpuSettings(ascend_home=fake_cann, soc="Ascend910B3"),))


@pytest.fixture
def strict_sandbox():  # type: ignore[no-untyped-def]
    """The real bubblewrap sandbox; the test is skipped where this host cannot give it."""
    from judge.errors import SandboxUnavailableError
    from judge.sandbox.select import make_sandbox

    try:
        return make_sandbox("strict")
    except SandboxUnavailableError as exc:
        pytest.skip(f"strict sandbox unavailable here: {exc}")


@pytest.fixture
def include_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "include"
    folder.mkdir()
    (folder / HEADER.name).write_bytes(HEADER.read_bytes())
    return folder


def npu_hardware_missing() -> str | None:
    """Why the `npu`-marked tests cannot run here, or None on an NPU host with CANN and torch_npu."""
    import importlib.util

    if not Path("/dev/davinci_manager").exists():
        return "needs an Ascend NPU host: /dev/davinci_manager is missing (no NPU driver or device here)"
    if importlib.util.find_spec("torch_npu") is None:
        return "needs torch_npu installed on the NPU host"
    if not (os.environ.get("ASCEND_HOME_PATH") or os.environ.get("ASCEND_TOOLKIT_HOME")):
        return "needs CANN's set_env.sh sourced (ASCEND_HOME_PATH) on the NPU host"
    return None
