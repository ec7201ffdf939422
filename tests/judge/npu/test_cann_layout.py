"""CANN's layout as its own build files give it.

data/host_config_soc_lists.txt holds host_config.cmake's SoC lists and compiler probe
(cannmirror/asc-devkit): the judge accepts exactly those SoCs and looks for the compiler in the
same order, `<arch>-linux/` first and only for the host's own arch.
"""

from __future__ import annotations

import re
import stat
from pathlib import Path

import pytest

from judge.host_config import HostConfig
from judge.track_settings.npu import NpuSettings
from judge.tracks.npu.cann import COMPILER_DIRS, SOC_FAMILIES, locate_cann, soc_family
from tests.judge.npu.conftest import DATA, FAKE_ASCENDC_CMAKE

TEXT = (DATA / "host_config_soc_lists.txt").read_text()
LISTS = {name: value.split() for name, value in re.findall(r"^set\((ascend\w+)_list\s+(.*)\)$", TEXT, re.M)}
PROBE = re.findall(r"\$\{ASCEND_CANN_PACKAGE_PATH\}/([\w-]+/ccec_compiler)", TEXT)


def test_the_soc_families_are_host_configs_lists() -> None:
    assert set(LISTS) == set(SOC_FAMILIES)
    for family, members in LISTS.items():
        assert tuple(members) == SOC_FAMILIES[family], family
    assert soc_family("Ascend310P3Vir04") == "ascend310p"
    assert soc_family("Ascend910_9363") is None  # in neither host_config.cmake nor AscendCheckSoCVersion


def test_the_compiler_is_probed_in_host_configs_order() -> None:
    assert PROBE == ["x86_64-linux/ccec_compiler", "aarch64-linux/ccec_compiler", "tools/ccec_compiler",
                     "compiler/ccec_compiler"]
    ours = [d.format(arch="x86_64") for d in COMPILER_DIRS]
    assert ours[:3] == [PROBE[0], PROBE[2], PROBE[3]]
    assert [d.format(arch="aarch64") for d in COMPILER_DIRS][0] == PROBE[1]


def _arch_tree(root: Path, arch: str) -> Path:
    folders = ("bin", "lib64", "include", f"{arch}-linux/tikcpp/ascendc_kernel_cmake",
               f"{arch}-linux/ccec_compiler/bin")
    for folder in folders:
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / f"{arch}-linux/tikcpp/ascendc_kernel_cmake/ascendc.cmake").write_text(FAKE_ASCENDC_CMAKE)
    bisheng = root / f"{arch}-linux/ccec_compiler/bin/bisheng"
    bisheng.write_text("#!/bin/sh\nexec \"$@\"\n")
    bisheng.chmod(bisheng.stat().st_mode | stat.S_IXUSR)
    return root


def test_an_arch_linux_tree_is_found_for_its_own_arch_only(tmp_path: Path) -> None:
    root = _arch_tree(tmp_path / "cann", "aarch64")
    cann = locate_cann(HostConfig(work_root=tmp_path, settings=(NpuSettings(ascend_home=root),)), arch="aarch64")
    assert cann.cmake_module_dir == root / "aarch64-linux/tikcpp/ascendc_kernel_cmake"
    assert cann.compiler_bin == root / "aarch64-linux/ccec_compiler/bin"
    from judge.errors import ToolchainUnavailableError

    with pytest.raises(ToolchainUnavailableError, match="x86_64-linux/tikcpp/ascendc_kernel_cmake"):
        locate_cann(HostConfig(work_root=tmp_path, settings=(NpuSettings(ascend_home=root),)), arch="x86_64")
