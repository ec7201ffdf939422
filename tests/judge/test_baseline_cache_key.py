"""The cached baseline library's key covers every input of its build: a changed flag is a new build."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from judge.backends import Backend
from judge.builds import _baseline_library
from judge.host_config import HostConfig
from judge.sandbox.rlimit import OffSandbox
from judge.toolchains.base import SourceFile
from judge.tracks.cpu.toolchain import CXX_FLAGS, GccToolchain

REPO = Path(__file__).resolve().parents[2]
HEADER = REPO / "problems" / "add_mul_relu" / "add_mul_relu.h"
BASELINE = REPO / "reference_kernels" / "add_mul_relu" / "cpu" / "baseline.cpp"


class CountingGcc(GccToolchain):
    """GccToolchain that counts its builds."""

    def __init__(self) -> None:
        super().__init__()
        self.builds = 0

    def build(self, **kwargs):  # type: ignore[no-untyped-def,override]
        self.builds += 1
        return super().build(**kwargs)


class NoVectorGcc(CountingGcc):
    """The same compiler with one flag more: its libraries are not the plain one's."""

    cxx_flags = [*CXX_FLAGS, "-fno-tree-vectorize"]


def _request() -> SimpleNamespace:
    problem = SimpleNamespace(slug="add_mul_relu", header=HEADER, baselines={Backend.CPU: BASELINE})
    return SimpleNamespace(problem=problem, backend=Backend.CPU)


def test_the_fingerprint_follows_the_flags_the_sources_and_not_the_folder(tmp_path: Path) -> None:
    sources = [SourceFile("baseline.cpp", BASELINE.read_bytes())]

    def fingerprint(toolchain: GccToolchain, folder: str, files: list[SourceFile] = sources) -> str:
        work = tmp_path / folder
        return toolchain.build_fingerprint(sources=files, include_dirs=[work / "include"], workdir=work)

    plain = fingerprint(GccToolchain(), "a")
    assert fingerprint(GccToolchain(), "b") == plain  # another job's folder: the same build
    assert fingerprint(NoVectorGcc(), "a") != plain
    assert fingerprint(GccToolchain(), "a", [SourceFile("baseline.cpp", b"// changed\n")]) != plain
    assert fingerprint(GccToolchain(), "a", [SourceFile("other.cpp", sources[0].content)]) != plain


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_a_changed_flag_rebuilds_the_cached_baseline(tmp_path: Path) -> None:
    host = HostConfig(work_root=tmp_path / "work", cache_dir=tmp_path / "cache")
    sandbox = OffSandbox()

    def library(toolchain: GccToolchain, job: str) -> Path:
        return _baseline_library(toolchain, _request(), host, sandbox, tmp_path / job / "baseline")  # type: ignore[arg-type]

    plain = CountingGcc()
    first = library(plain, "1")
    assert library(plain, "2") == first and plain.builds == 1  # cached
    other = NoVectorGcc()
    rebuilt = library(other, "3")
    assert other.builds == 1 and rebuilt != first and rebuilt.is_file()
