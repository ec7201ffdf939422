"""GccToolchain: the CPU track's compiler with the judge's fixed flags (spec, "Kernel ABI")."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from judge.backends import Backend
from judge.errors import ToolchainUnavailableError
from judge.limits import Limits
from judge.sandbox.base import ProcessResult, SandboxLimits
from judge.toolchains.base import BuildJob, BuildStop, SourceFile, Toolchain
from judge.verdict import Verdict

# -save-temps=obj keeps the preprocessed unit beside the object: the policy reads what was compiled.
COMMON_FLAGS = ["-O3", "-march=native", "-fopenmp", "-fPIC", "-save-temps=obj"]
CXX_FLAGS = ["-std=c++17", *COMMON_FLAGS]
C_FLAGS = ["-std=c17", *COMMON_FLAGS]
LINK_FLAGS = ["-shared", "-fopenmp"]

BUILD_MEMORY_MIB = 4096  # address space of each compiler process (cc1plus needs well under 1 GiB here)


class GccToolchain(Toolchain[None]):
    """Each translation unit compiled on its own, then linked into `kernel.so`."""

    backend = Backend.CPU
    cxx_flags: list[str] = CXX_FLAGS
    c_flags: list[str] = C_FLAGS

    def __init__(self, cxx: str = "g++", cc: str = "gcc") -> None:
        self.cxx, self.cc = cxx, cc
        self._target: str | None = None

    def version(self) -> str:
        path = shutil.which(self.cxx)
        if path is None:
            raise ToolchainUnavailableError(f"{self.cxx} not found on PATH; install it with `apt-get install g++`")
        first = subprocess.run([path, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
        match = re.search(r"(\d+\.\d+\.\d+)", first)
        return f"{self.cxx} {match.group(1) if match else first}"

    def locate(self) -> None:
        return None

    def _units(self, sources: list[SourceFile]) -> list[tuple[SourceFile, str, bool]]:
        """Each translation unit with its object's name and whether it is C."""
        units = [s for s in sources if Path(s.name).suffix in self.source_suffixes()]
        return [(unit, f"{Path(unit.name).stem}.{index}.o", unit.name.endswith(".c"))
                for index, unit in enumerate(units)]

    def prepare(self, job: BuildJob[None]) -> None:
        if not self._units(job.sources):
            raise BuildStop(Verdict.CE, "no source file to compile (.cpp, .cc, .cxx or .c)")

    def commands(self, job: BuildJob[None]) -> list[list[str]]:
        """One compile per translation unit, then the link."""
        includes = [f"-I{d}" for d in job.include_dirs]
        units = self._units(job.sources)
        compiles = [[self.cc if is_c else self.cxx, *(self.c_flags if is_c else self.cxx_flags), *includes,
                     "-c", unit.name, "-o", obj] for unit, obj, is_c in units]
        return [*compiles, [self.cxx, *LINK_FLAGS, *(obj for _, obj, _ in units), "-o", self.output_name]]

    def sandbox_limits(self, limits: Limits) -> SandboxLimits:
        # A constexpr or template explosion grows cc1plus by about 1 KB per step (red team): without a
        # memory limit one build could take the worker's memory in its 60 s.
        return SandboxLimits(
            max_processes=limits.max_processes,
            max_file_size_bytes=limits.max_file_size_bytes,
            address_space_mib=BUILD_MEMORY_MIB,
            cpu_time_s=limits.compile_time_limit_s,
            seccomp=True,
        )

    def step_stop(self, job: BuildJob[None], index: int, outcome: ProcessResult) -> BuildStop | None:
        if index == len(job.commands) - 1 and outcome.timed_out:  # the link: its log alone
            return BuildStop(Verdict.TLE, job.output)
        return super().step_stop(job, index, outcome)

    def finish(self, job: BuildJob[None]) -> str:
        job.preprocessed = [str(job.workdir / f"{Path(obj).stem}.{'i' if is_c else 'ii'}")
                            for _, obj, is_c in self._units(job.sources)]
        return job.output

    def target(self) -> str:
        """The target options -march=native resolves to on this host, as the compiler reports them."""
        if self._target is None:
            machine = [f for f in self.cxx_flags if f.startswith("-m")]
            try:
                done = subprocess.run([self.cxx, *machine, "-Q", "--help=target"], capture_output=True, text=True,
                                      timeout=60)
                self._target = done.stdout if done.returncode == 0 else f"{machine} failed: {done.stderr}"
            except (OSError, subprocess.SubprocessError) as exc:
                self._target = f"{machine} failed: {exc}"
        return self._target
