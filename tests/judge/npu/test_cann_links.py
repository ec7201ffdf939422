"""CANN's `latest` as real installs (CANN <= 8.3) lay it out: links into a version folder beside it.

`ascend-toolkit/latest/compiler -> ../8.0.RC2/compiler` and so on; bound alone into the sandbox,
every such link dangles, and the build's include of ascendc.cmake with it. The sandbox must also
get the install root that holds the version folders.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import pytest

from judge.host_config import HostConfig
from judge.limits import Limits
from judge.toolchains.base import SourceFile
from judge.track_settings.npu import NpuSettings
from judge.tracks.npu import readonly_paths
from judge.tracks.npu.cann import read_only_paths
from judge.tracks.npu.toolchain import AscendToolchain
from tests.judge.npu.conftest import LocalSandbox

KERNEL_ONLY = b"""#include "sparse_flash_attention_grad.h"
extern "C" int kernel_run(const kernel_args *args) { return args->stream ? 0 : 5; }
"""


def _latest_of_links(version_dir: Path) -> Path:
    """`latest/` beside `version_dir`, each of its entries a relative link into it, as CANN installs it."""
    latest = version_dir.parent / "latest"
    latest.mkdir()
    for entry in sorted(version_dir.iterdir()):
        (latest / entry.name).symlink_to(Path("..") / version_dir.name / entry.name)
    return latest


def _covered(path: Path, bound: list[Path]) -> bool:
    return any(path.is_relative_to(b) for b in bound)


def _link_targets(latest: Path) -> list[Path]:
    targets = [entry.resolve() for entry in latest.iterdir() if entry.is_symlink()]
    assert targets, "the fake tree should hold links"
    return targets


def test_the_runner_gets_the_install_root_of_a_latest_made_of_links(tmp_path: Path, fake_cann: Path) -> None:
    latest = _latest_of_links(fake_cann)
    install_root = fake_cann.parent
    host = HostConfig(work_root=tmp_path, settings=(NpuSettings(driver=tmp_path / "driver", ascend_home=latest),))
    paths = readonly_paths(host)
    assert paths[0] == tmp_path / "driver"  # doctor reads the driver from the first entry
    assert latest in paths and install_root in paths
    assert len(paths) == len(set(paths))
    for target in _link_targets(latest):
        assert target.is_relative_to(fake_cann)
        assert _covered(target, paths), f"{target} is not bound: {paths}"
    assert not _covered(_link_targets(latest)[0], [latest])  # what the old binding left dangling


def test_a_latest_that_is_itself_a_link_binds_its_target(tmp_path: Path, fake_cann: Path) -> None:
    latest = fake_cann.parent / "latest"
    latest.symlink_to(fake_cann.name)
    paths = read_only_paths(latest)
    assert paths == [latest, fake_cann, fake_cann.parent]


def test_a_plain_tree_binds_only_itself(tmp_path: Path, fake_cann: Path) -> None:
    # No links out and not named latest: its parent (e.g. /opt) stays out of the sandbox.
    assert read_only_paths(fake_cann) == [fake_cann]
    assert read_only_paths(tmp_path / "missing" / "latest") == [tmp_path / "missing" / "latest"]


def test_a_tree_linking_into_its_siblings_binds_their_folder(tmp_path: Path, fake_cann: Path) -> None:
    home = fake_cann.parent / "current"
    home.mkdir()
    (home / "compiler").symlink_to(fake_cann / "compiler")
    assert read_only_paths(home) == [home, fake_cann.parent]


def test_the_build_sandbox_binds_the_link_targets(tmp_path: Path, fake_cann: Path, include_dir: Path) -> None:
    latest = _latest_of_links(fake_cann)
    host = HostConfig(work_root=tmp_path / "work", settings=(NpuSettings(ascend_home=latest, soc="Ascend910B3"),))
    sources = [SourceFile("only_kernel.cpp", KERNEL_ONLY)]
    workdir = tmp_path / "build"
    workdir.mkdir()
    (workdir / "only_kernel.cpp").write_bytes(KERNEL_ONLY)
    sandbox = LocalSandbox()
    result = AscendToolchain(host).build(sources=sources, include_dirs=[include_dir], workdir=workdir,
                                         limits=Limits(), sandbox=sandbox)
    assert result.ok, result.log
    assert result.toolchain == "CANN 8.0.RC2 bisheng for Ascend910B3"
    for _, _, binds in sandbox.calls:
        read_only = [b.source for b in binds if not b.writable]
        assert latest in read_only and fake_cann.parent in read_only
        for target in _link_targets(latest):
            assert _covered(target, read_only), f"{target} is not bound: {read_only}"


@pytest.mark.sandbox
def test_a_latest_made_of_links_builds_inside_the_real_sandbox(tmp_path: Path, fake_cann: Path,
                                                               include_dir: Path, strict_sandbox) -> None:  # type: ignore[no-untyped-def]
    sandbox = strict_sandbox
    latest = _latest_of_links(fake_cann)
    host = HostConfig(work_root=tmp_path / "work", settings=(NpuSettings(ascend_home=latest, soc="Ascend910B3"),))
    workdir = tmp_path / "build"
    workdir.mkdir()
    (workdir / "only_kernel.cpp").write_bytes(KERNEL_ONLY)
    result = AscendToolchain(host).build(sources=[SourceFile("only_kernel.cpp", KERNEL_ONLY)],
                                         include_dirs=[include_dir], workdir=workdir, limits=Limits(),
                                         sandbox=sandbox)
    assert result.ok, result.log
    assert hasattr(ctypes.CDLL(result.library_path), "kernel_run")
