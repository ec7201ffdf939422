"""The Toolchain seam: build a submission's sources into a loadable library for one backend."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

from judge.backends import Backend
from judge.limits import Limits
from judge.results import BuildResult
from judge.sandbox.base import Sandbox


@dataclass(frozen=True)
class SourceFile:
    name: str  # a plain file name, already checked (judge/submission.py)
    content: bytes


class Toolchain(ABC):
    """Builds sources into a shared library exporting `kernel_run`.

    Implementations are one small file each (`<What>Toolchain`) and register in
    judge/toolchains/__init__.py. They never read the environment: what they
    need (paths, SoC, GPU arch) comes through their constructor.
    """

    backend: Backend

    @abstractmethod
    def build(
        self,
        *,
        sources: list[SourceFile],
        include_dirs: list[Path],
        workdir: Path,
        limits: Limits,
        sandbox: Sandbox,
    ) -> BuildResult:
        """Compile `sources` (already written into `workdir`) into `workdir/<name>.so`."""

    @abstractmethod
    def version(self) -> str:
        """The compiler's name and version, recorded on every run; raises ToolchainUnavailableError."""

    def source_suffixes(self) -> tuple[str, ...]:
        """File suffixes compiled as translation units; others (headers) are only copied."""
        return (".cpp", ".cc", ".cxx", ".c")
