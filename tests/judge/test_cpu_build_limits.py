"""The CPU build runs under a memory limit: a constexpr explosion cannot take the worker's memory."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import judge.tracks.cpu.toolchain as toolchain_module
from judge.limits import CPU_LIMITS
from judge.sandbox.select import make_sandbox
from judge.toolchains.base import SourceFile
from judge.tracks.cpu.toolchain import GccToolchain
from judge.verdict import Verdict

# The whole standard library: cc1plus takes about 200 MB for it.
KERNEL = b"""#include <bits/stdc++.h>
extern "C" int kernel_run(const void* a) { std::map<int, int> m; m[1] = 2; return a == nullptr && m.size(); }
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_each_compiler_process_gets_the_build_memory_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def build(folder: str) -> Verdict | None:  # None: built
        workdir = tmp_path / folder
        workdir.mkdir()
        (workdir / "k.cpp").write_bytes(KERNEL)  # as judge/builds.py puts them
        result = GccToolchain().build(sources=[SourceFile("k.cpp", KERNEL)], include_dirs=[], workdir=workdir,
                                      limits=CPU_LIMITS, sandbox=make_sandbox("auto"))
        return result.verdict

    assert build("normal") is None
    monkeypatch.setattr(toolchain_module, "BUILD_MEMORY_MIB", 100)  # half what cc1plus needs here
    assert build("starved") is Verdict.CE
