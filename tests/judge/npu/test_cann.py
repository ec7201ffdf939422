"""Finding CANN: the missing-toolkit errors say what was looked for and how to install it."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.backends import Backend
from judge.errors import ToolchainUnavailableError
from judge.host import host_from_env
from judge.host_config import HostConfig
from judge.track_settings.npu import NpuSettings
from judge.tracks.npu.cann import (
    cann_version,
    checked_soc,
    locate_cann,
    soc_family,
)
from tests.judge.npu.conftest import make_fake_cann


def test_no_cann_root_names_the_variables_and_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ToolchainUnavailableError) as caught:
        locate_cann(HostConfig(work_root=tmp_path))
    text = str(caught.value)
    for needle in ("ascend_home", "OPJUDGE_ASCEND_HOME", "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "set_env.sh",
                   "Ascend-cann-toolkit", "docs/npu-worker.md"):
        assert needle in text


def test_a_root_that_does_not_exist_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "latest"
    with pytest.raises(ToolchainUnavailableError, match="nowhere/latest does not exist"):
        locate_cann(HostConfig(work_root=tmp_path, settings=(NpuSettings(ascend_home=missing),)))


def test_an_incomplete_tree_lists_every_missing_piece(tmp_path: Path) -> None:
    root = tmp_path / "cann"
    (root / "lib64").mkdir(parents=True)
    with pytest.raises(ToolchainUnavailableError) as caught:
        locate_cann(HostConfig(work_root=tmp_path, settings=(NpuSettings(ascend_home=root),)))
    text = str(caught.value)
    assert "ascendc.cmake" in text and "compiler/tikcpp/ascendc_kernel_cmake" in text
    assert "tools/tikcpp/ascendc_kernel_cmake" in text
    assert "bisheng/ccec" in text and f"{root}/bin/" in text and f"{root}/include/" in text
    assert f"{root}/lib64/" not in text  # present, so not reported


def test_a_complete_tree_is_found_in_either_module_location(tmp_path: Path) -> None:
    for layout in ("compiler/tikcpp/ascendc_kernel_cmake", "tools/tikcpp/ascendc_kernel_cmake"):
        root = make_fake_cann(tmp_path / layout.split("/")[0] / "latest", module_dir=layout)
        cann = locate_cann(HostConfig(work_root=tmp_path, settings=(NpuSettings(ascend_home=root),)))
        assert cann.cmake_module_dir == root / layout
        assert cann.compiler_bin == root / "compiler/ccec_compiler/bin"
        assert cann.version == "8.0.RC2"


def test_build_env_puts_the_compiler_first_and_the_toolkit_libraries_on_the_path(fake_cann: Path,
                                                                                 tmp_path: Path) -> None:
    env = locate_cann(HostConfig(work_root=tmp_path, settings=(NpuSettings(ascend_home=fake_cann),))).build_env()
    assert env["PATH"].split(":")[0] == str(fake_cann / "compiler/ccec_compiler/bin")
    assert env["ASCEND_HOME_PATH"] == env["ASCEND_TOOLKIT_HOME"] == str(fake_cann)
    assert str(fake_cann / "lib64") in env["LD_LIBRARY_PATH"].split(":")


def test_soc_must_be_set_and_known(tmp_path: Path) -> None:
    with pytest.raises(ToolchainUnavailableError, match="OPJUDGE_NPU_SOC"):
        checked_soc(HostConfig(work_root=tmp_path))
    with pytest.raises(ToolchainUnavailableError, match="Ascend910C"):
        checked_soc(HostConfig(work_root=tmp_path, settings=(NpuSettings(soc="Ascend910C"),)))
    assert checked_soc(HostConfig(work_root=tmp_path, settings=(NpuSettings(soc="Ascend910B3"),))) == "Ascend910B3"
    assert soc_family("Ascend910_9392") == "ascend910b"
    assert soc_family("ascend310p3") == "ascend310p"


def test_the_cann_root_and_soc_come_from_the_environment_the_caller_passes() -> None:
    def found(environ: dict[str, str]) -> tuple[Path | None, str | None]:
        record = NpuSettings.from_env(environ)
        return record.ascend_home, record.soc

    assert found({}) == (None, None)
    assert found({"ASCEND_TOOLKIT_HOME": "/opt/cann", "OPJUDGE_NPU_SOC": "Ascend910B3"}) == (Path("/opt/cann"),
                                                                                          "Ascend910B3")
    # The judge's own variable wins over set_env.sh's; the queue default is not a SoC, nor is an empty one.
    assert found({"OPJUDGE_ASCEND_HOME": "/a", "ASCEND_HOME_PATH": "/b", "OPJUDGE_NPU_SOC": "default"}) == (Path("/a"),
                                                                                                          None)
    assert found({"OPJUDGE_ASCEND_HOME": "", "ASCEND_HOME_PATH": "/b", "SOC_VERSION": "Ascend910B4"}) == (
        Path("/b"), "Ascend910B4")
    # host_from_env reads them with every other setting (the CLI's and the workers' host).
    host = host_from_env({"ASCEND_HOME_PATH": "/c", "OPJUDGE_NPU_SOC": "Ascend910B3"}, backend=Backend.CPU,
                         work_root=Path("/tmp"))
    assert (host.track_settings(NpuSettings).ascend_home, host.track_settings(NpuSettings).soc) == (Path("/c"),
                                                                                                  "Ascend910B3")


def test_version_from_install_record_or_folder_name(tmp_path: Path) -> None:
    root = tmp_path / "ascend-toolkit" / "7.0.RC1"
    (root / "x86_64-linux").mkdir(parents=True)
    assert cann_version(root) == "7.0.RC1"  # from the folder name
    record = root / "x86_64-linux" / "ascend_toolkit_install.info"
    record.write_text("package_name=Ascend-cann-toolkit\nversion=7.0.1\n")
    assert cann_version(root) == "7.0.1"
    assert cann_version(tmp_path / "latest") == "unknown"
