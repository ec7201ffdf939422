"""GccToolchain: the CPU track's compiler with the judge's fixed flags (spec, "Kernel ABI")."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

from judge.backends import Backend
from judge.errors import ToolchainUnavailableError
from judge.limits import Limits
from judge.results import BuildResult
from judge.sandbox.base import Bind, Sandbox, SandboxLimits
from judge.toolchains.base import SourceFile, Toolchain
from judge.verdict import Verdict

# -save-temps=obj keeps the preprocessed unit beside the object: the policy reads what was compiled.
COMMON_FLAGS = ["-O3", "-march=native", "-fopenmp", "-fPIC", "-save-temps=obj"]
CXX_FLAGS = ["-std=c++17", *COMMON_FLAGS]
C_FLAGS = ["-std=c17", *COMMON_FLAGS]


def cut_log(text: str, limit_bytes: int) -> str:
    raw = text.encode(errors="replace")
    if len(raw) <= limit_bytes:
        return text
    return raw[:limit_bytes].decode(errors="ignore") + f"\n[log cut at {limit_bytes} bytes]"


BUILD_MEMORY_MIB = 4096  # address space of each compiler process (cc1plus needs well under 1 GiB here)


class GccToolchain(Toolchain):
    backend = Backend.CPU

    def __init__(self, cxx: str = "g++", cc: str = "gcc") -> None:
        self.cxx, self.cc = cxx, cc

    def version(self) -> str:
        path = shutil.which(self.cxx)
        if path is None:
            raise ToolchainUnavailableError(f"{self.cxx} not found on PATH; install it with `apt-get install g++`")
        first = subprocess.run([path, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
        match = re.search(r"(\d+\.\d+\.\d+)", first)
        return f"{self.cxx} {match.group(1) if match else first}"

    def build(
        self,
        *,
        sources: list[SourceFile],
        include_dirs: list[Path],
        workdir: Path,
        limits: Limits,
        sandbox: Sandbox,
    ) -> BuildResult:
        """Compile each translation unit, then link `workdir/kernel.so`; CE/TLE with the log."""
        started = time.monotonic()
        deadline = started + limits.compile_time_limit_s
        includes = [f"-I{d}" for d in include_dirs]
        binds = [Bind(workdir, workdir, writable=True)] + [Bind(d, d) for d in include_dirs]
        # A constexpr or template explosion grows cc1plus by about 1 KB per step (red team): without a
        # memory limit one build could take the worker's memory in its 60 s.
        box_limits = SandboxLimits(
            max_processes=limits.max_processes,
            max_file_size_bytes=limits.max_file_size_bytes,
            address_space_mib=BUILD_MEMORY_MIB,
            cpu_time_s=limits.compile_time_limit_s,
            seccomp=True,
        )
        log: list[str] = []
        commands: list[list[str]] = []
        objects: list[str] = []
        preprocessed: list[str] = []
        units = [s for s in sources if Path(s.name).suffix in self.source_suffixes()]
        if not units:
            return self._fail(Verdict.CE, "no source file to compile (.cpp, .cc, .cxx or .c)", started, [])
        for unit in units:
            is_c = unit.name.endswith(".c")
            obj = f"{Path(unit.name).stem}.{len(objects)}.o"
            argv = [self.cc if is_c else self.cxx, *(C_FLAGS if is_c else CXX_FLAGS), *includes,
                    "-c", unit.name, "-o", obj]
            commands.append(argv)
            result = sandbox.run(argv, limits=box_limits, binds=binds, workdir=workdir,
                                 timeout_s=max(0.1, deadline - time.monotonic()))
            log.append((result.stdout + result.stderr).decode(errors="replace"))
            if result.timed_out:
                return self._fail(Verdict.TLE, "".join(log) + "\ncompile time limit exceeded", started, commands,
                                  limits)
            if result.returncode != 0:
                return self._fail(Verdict.CE, "".join(log), started, commands, limits)
            objects.append(obj)
            preprocessed.append(str(workdir / f"{Path(obj).stem}.{'i' if is_c else 'ii'}"))
        link = [self.cxx, "-shared", "-fopenmp", *objects, "-o", "kernel.so"]
        commands.append(link)
        result = sandbox.run(link, limits=box_limits, binds=binds, workdir=workdir,
                             timeout_s=max(0.1, deadline - time.monotonic()))
        log.append((result.stdout + result.stderr).decode(errors="replace"))
        if result.timed_out or result.returncode != 0:
            verdict = Verdict.TLE if result.timed_out else Verdict.CE
            return self._fail(verdict, "".join(log), started, commands, limits)
        return BuildResult(
            ok=True, verdict=None, library_path=str(workdir / "kernel.so"),
            log=cut_log("".join(log), limits.compile_log_limit_bytes),
            duration_s=time.monotonic() - started, toolchain=self.version(), command=commands[0],
            preprocessed=preprocessed,
        )

    def _fail(self, verdict: Verdict, log: str, started: float, commands: list[list[str]],
              limits: Limits | None = None) -> BuildResult:
        limit = limits.compile_log_limit_bytes if limits else 64 * 1024
        return BuildResult(
            ok=False, verdict=verdict, library_path=None, log=cut_log(log, limit),
            duration_s=time.monotonic() - started, toolchain=self.version(),
            command=commands[0] if commands else [],
        )
