"""AscendToolchain: Ascend C sources to one shared library, through CANN's CMake modules.

The build is `cmake` configure then `cmake --build` on the project judge/tracks/npu/project.py
writes, both inside the sandbox under one compile time limit. A configure failure is the
judge's (its template or the CANN tree: IE); a build failure is the team's (CE), reported
with the compiler's diagnostics against their own file names.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from judge.backends import Backend
from judge.host import HostConfig
from judge.limits import Limits
from judge.results import BuildResult, PolicyFinding
from judge.sandbox.base import Bind, ProcessResult, Sandbox, SandboxLimits
from judge.toolchains.base import SourceFile, Toolchain
from judge.track_settings.npu import NpuSettings
from judge.tracks.npu.cann import CannInstall, checked_soc, locate_cann, read_only_paths
from judge.tracks.npu.diagnostics import Diagnostic, PathCleaner, parse_diagnostics, summarize
from judge.tracks.npu.link_check import LinkCheckError, check_linked_objects, collect_objects
from judge.tracks.npu.policy import TEAM_RULES
from judge.tracks.npu.project import (
    BUILD_DIR,
    KERNEL_NAMES_FILE,
    OUTPUT_NAME,
    ProjectError,
    classify,
    write_project,
)
from judge.verdict import Verdict

EXPORTS_NAME = "opjudge_exports.map"  # in the build folder; the template links with it as a version script
# Everything but the ABI's two entry points stays local: a real ascendc_library build, whole-archived
# into the library, defines the aclrtlaunch_<kernel> launchers, the kernels' host stubs, the CANN
# runtime objects' globals, and the team's own launch wrappers and helpers (judge/policy refuses
# exports beyond these two).
EXPORTS_SCRIPT = """\
/* Written by opjudge's AscendToolchain for one build: the library exports the kernel_args ABI only. */
{
  global:
    kernel_run;
    kernel_workspace_bytes;
  local:
    *;
};
"""


def cut_log(text: str, limit_bytes: int) -> str:
    """The log within `limit_bytes` (docs/rules.md: the compile log is cut to 64 KiB)."""
    raw = text.encode(errors="replace")
    if len(raw) <= limit_bytes:
        return text
    return raw[:limit_bytes].decode(errors="ignore") + f"\n[log cut at {limit_bytes} bytes]"


class AscendToolchain(Toolchain):
    """CANN's bisheng through `ascendc_library`, for the SoC the host names."""

    backend = Backend.NPU

    def __init__(self, host: HostConfig) -> None:
        self.host = host
        settings = host.track_settings(NpuSettings)
        self.cmake = settings.cmake
        self.jobs = settings.build_jobs or os.cpu_count() or 2
        self.diagnostics: list[Diagnostic] = []  # of the last build, for callers that show them apart

    def version(self) -> str:
        """E.g. "CANN 8.0.RC2 bisheng for Ascend910B3"; raises ToolchainUnavailableError without CANN."""
        cann = locate_cann(self.host)
        return f"CANN {cann.version} bisheng for {checked_soc(self.host)}"

    def source_suffixes(self) -> tuple[str, ...]:
        return (".cpp", ".cc", ".cxx", ".c")

    def build(
        self,
        *,
        sources: list[SourceFile],
        include_dirs: list[Path],
        workdir: Path,
        limits: Limits,
        sandbox: Sandbox,
    ) -> BuildResult:
        """Configure and build `workdir/kernel.so`; CE with diagnostics, TLE, or IE for a broken setup."""
        started = time.monotonic()
        cann, soc = locate_cann(self.host), checked_soc(self.host)
        self.diagnostics = []
        toolchain = f"CANN {cann.version} bisheng for {soc}"
        try:
            reserved = [s.name for s in sources if s.name.startswith("opjudge_")]
            if reserved:
                # classify reserves the prefix for compiled files only; a README named opjudge_build
                # would stand where the build folder and its export list go.
                raise ProjectError(f"file names starting with 'opjudge_' are reserved for the judge: "
                                   f"{', '.join(reserved)}")
            roles = classify(sources)
            project = write_project(roles=roles, workdir=workdir, include_dirs=include_dirs, soc=soc,
                                    cann_root=cann.root, cmake_module_dir=cann.cmake_module_dir)
        except ProjectError as exc:
            return self._result(Verdict.CE, str(exc), started, toolchain, [], limits)
        cleaner = PathCleaner(workdir, cann.root, [s.name for s in sources])
        build_dir = workdir / BUILD_DIR
        exports = build_dir / EXPORTS_NAME
        if "," in str(exports):
            # The template hands it to the linker through LINKER:, which splits its argument at commas.
            return self._result(Verdict.IE, f"the build folder {build_dir} has a comma in its path, which the "
                                "linker option naming the export list cannot carry: use a work root without one",
                                started, toolchain, [], limits)
        build_dir.mkdir(exist_ok=True)
        exports.write_text(EXPORTS_SCRIPT)
        configure = [self.cmake, "-S", str(project), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                     f"-DOPJUDGE_EXPORTS_SCRIPT={exports}"]
        compile_ = [self.cmake, "--build", str(build_dir), "--", f"-j{self.jobs}"]
        deadline = started + limits.compile_time_limit_s
        log = ""
        for step, argv in (("configure", configure), ("build", compile_)):
            outcome = self._run(argv, sandbox, cann, include_dirs, workdir, limits, deadline)
            log += f"$ cmake {' '.join(argv[1:])}\n" + (outcome.stdout + outcome.stderr).decode(errors="replace")
            if outcome.timed_out:
                return self._result(Verdict.TLE, cleaner.text(log) + "\ncompile time limit exceeded", started,
                                    toolchain, [configure, compile_], limits)
            if outcome.returncode != 0:
                self.diagnostics = parse_diagnostics(log, cleaner)
                # The configure step reads only the judge's template and the CANN tree.
                verdict = Verdict.IE if step == "configure" else Verdict.CE
                text = summarize(self.diagnostics, log=log) + "\n" + cleaner.text(log)
                return self._result(verdict, text, started, toolchain, [configure, compile_], limits)
        library = workdir / f"{OUTPUT_NAME}.so"
        self.diagnostics = parse_diagnostics(log, cleaner)
        if not library.is_file():
            return self._result(Verdict.IE, cleaner.text(log) + f"\nthe build reported success but made no "
                                f"{library.name}", started, toolchain, [configure, compile_], limits)
        text = summarize(self.diagnostics) + cleaner.text(log)
        refused = self._check_objects(build_dir, cann)
        if isinstance(refused, str):
            return self._result(Verdict.IE, text + "\n" + refused, started, toolchain, [configure, compile_], limits)
        if refused:
            listing = "\n".join(f"  {f.file}: {f.rule}: {f.message}" for f in refused)
            result = self._result(Verdict.SV, text + "\nthe library policy refused objects of the build:\n" + listing,
                                  started, toolchain, [configure, compile_], limits)
            result.findings = refused
            return result
        (workdir / KERNEL_NAMES_FILE).write_text("".join(f"{name}\n" for name in roles.kernel_names))
        return BuildResult(ok=True, verdict=None, library_path=str(library),
                           log=cut_log(text, limits.compile_log_limit_bytes),
                           duration_s=time.monotonic() - started, toolchain=toolchain, command=compile_)

    def _check_objects(self, build_dir: Path, cann: CannInstall) -> list[PolicyFinding] | str:
        """The by-object library policy (link_check.py); a str says why the objects could not be read (IE)."""
        if not self.host.policy_check:
            return []
        try:
            objects = collect_objects(build_dir, cann.root)
        except LinkCheckError as exc:
            return str(exc)
        return check_linked_objects(objects, TEAM_RULES)

    def _run(self, argv: list[str], sandbox: Sandbox, cann: CannInstall, include_dirs: list[Path], workdir: Path,
             limits: Limits, deadline: float) -> ProcessResult:
        # Not the root alone: CANN's latest/ may be links into a version folder beside it.
        binds = [Bind(workdir, workdir, writable=True), *(Bind(p, p) for p in read_only_paths(cann.root))]
        binds += [Bind(d, d) for d in include_dirs if not d.is_relative_to(workdir)]
        box_limits = SandboxLimits(max_processes=limits.max_processes,
                                   max_file_size_bytes=limits.max_file_size_bytes, seccomp=True)
        env = {**cann.build_env(), "HOME": str(workdir), "LANG": "C.UTF-8", "TMPDIR": str(workdir)}
        return sandbox.run(argv, limits=box_limits, binds=binds, workdir=workdir,
                           timeout_s=max(0.1, deadline - time.monotonic()), env=env)

    @staticmethod
    def _result(verdict: Verdict, log: str, started: float, toolchain: str, commands: list[list[str]],
                limits: Limits) -> BuildResult:
        return BuildResult(ok=False, verdict=verdict, library_path=None,
                           log=cut_log(log, limits.compile_log_limit_bytes),
                           duration_s=time.monotonic() - started, toolchain=toolchain,
                           command=commands[-1] if commands else [])
