"""AscendToolchain: Ascend C sources to one shared library, through CANN's CMake modules.

The build is `cmake` configure then `cmake --build` on the project judge/tracks/npu/project.py
writes, both inside the sandbox under one compile time limit. A configure failure is the
judge's (its template or the CANN tree: IE); a build failure is the team's (CE), reported
with the compiler's diagnostics against their own file names.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from judge.backends import Backend
from judge.host_config import HostConfig
from judge.limits import Limits
from judge.results import PolicyFinding
from judge.sandbox.base import Bind, ProcessResult, SandboxLimits
from judge.toolchains.base import BuildJob, BuildStop, Toolchain
from judge.track_settings.npu import NpuSettings
from judge.tracks.npu.cann import CannInstall, checked_soc, locate_cann, read_only_paths
from judge.tracks.npu.diagnostics import Diagnostic, PathCleaner, parse_diagnostics, summarize
from judge.tracks.npu.link_check import LinkCheckError, check_linked_objects, collect_objects
from judge.tracks.npu.policy import TEAM_RULES
from judge.tracks.npu.project import (
    BUILD_DIR,
    KERNEL_NAMES_FILE,
    OUTPUT_NAME,
    PROJECT_DIR,
    ProjectError,
    SourceRoles,
    classify,
    render_cmakelists,
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


@dataclass
class NpuSetup:
    """The CANN tree and SoC one build runs with, and what its project step learnt of the sources."""

    cann: CannInstall
    soc: str
    roles: SourceRoles | None = None  # set by `prepare`
    cleaner: PathCleaner | None = None  # the judge's folders out of the log; set by `prepare`


class AscendToolchain(Toolchain[NpuSetup]):
    """CANN's bisheng through `ascendc_library`, for the SoC the host names."""

    backend = Backend.NPU
    output_name = f"{OUTPUT_NAME}.so"

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

    def locate(self) -> NpuSetup:
        return NpuSetup(cann=locate_cann(self.host), soc=checked_soc(self.host))

    def prepare(self, job: BuildJob[NpuSetup]) -> None:
        """Write the CMake project and the export list; CE for sources it cannot take, IE for a bad work root."""
        setup, sources, workdir = job.setup, job.sources, job.workdir
        self.diagnostics = []
        try:
            reserved = [s.name for s in sources if s.name.startswith("opjudge_")]
            if reserved:
                # classify reserves the prefix for compiled files only; a README named opjudge_build
                # would stand where the build folder and its export list go.
                raise ProjectError(f"file names starting with 'opjudge_' are reserved for the judge: "
                                   f"{', '.join(reserved)}")
            setup.roles = classify(sources)
            write_project(roles=setup.roles, workdir=workdir, include_dirs=job.include_dirs, soc=setup.soc,
                          cann_root=setup.cann.root, cmake_module_dir=setup.cann.cmake_module_dir)
        except ProjectError as exc:
            raise BuildStop(Verdict.CE, str(exc)) from exc
        setup.cleaner = PathCleaner(workdir, setup.cann.root, [s.name for s in sources])
        build_dir = workdir / BUILD_DIR
        exports = build_dir / EXPORTS_NAME
        if "," in str(exports):
            # The template hands it to the linker through LINKER:, which splits its argument at commas.
            raise BuildStop(Verdict.IE, f"the build folder {build_dir} has a comma in its path, which the "
                            "linker option naming the export list cannot carry: use a work root without one")
        build_dir.mkdir(exist_ok=True)
        exports.write_text(EXPORTS_SCRIPT)

    def commands(self, job: BuildJob[NpuSetup]) -> list[list[str]]:
        """cmake's configure, then its build."""
        build_dir = job.workdir / BUILD_DIR
        configure = [self.cmake, "-S", str(job.workdir / PROJECT_DIR), "-B", str(build_dir),
                     "-DCMAKE_BUILD_TYPE=Release", f"-DOPJUDGE_EXPORTS_SCRIPT={build_dir / EXPORTS_NAME}"]
        return [configure, [self.cmake, "--build", str(build_dir), "--", f"-j{self.jobs}"]]

    def sandbox_limits(self, limits: Limits) -> SandboxLimits:
        return SandboxLimits(max_processes=limits.max_processes, max_file_size_bytes=limits.max_file_size_bytes,
                             seccomp=True)

    def binds(self, job: BuildJob[NpuSetup]) -> list[Bind]:
        # Not the root alone: CANN's latest/ may be links into a version folder beside it.
        workdir = job.workdir
        binds = [Bind(workdir, workdir, writable=True), *(Bind(p, p) for p in read_only_paths(job.setup.cann.root))]
        return binds + [Bind(d, d) for d in job.include_dirs if not d.is_relative_to(workdir)]

    def environment(self, job: BuildJob[NpuSetup]) -> dict[str, str]:
        workdir = str(job.workdir)
        return {**job.setup.cann.build_env(), "HOME": workdir, "LANG": "C.UTF-8", "TMPDIR": workdir}

    def step_log(self, job: BuildJob[NpuSetup], argv: list[str], outcome: ProcessResult) -> str:
        return f"$ cmake {' '.join(argv[1:])}\n" + super().step_log(job, argv, outcome)

    def step_stop(self, job: BuildJob[NpuSetup], index: int, outcome: ProcessResult) -> BuildStop | None:
        """TLE past the limit; IE when configure fails (it reads only the judge's template and the CANN tree),
        CE when the build does, with the compiler's diagnostics against the team's own file names."""
        cleaner, log = self._cleaner(job), job.output
        if outcome.timed_out:
            return BuildStop(Verdict.TLE, cleaner.text(log) + "\ncompile time limit exceeded")
        if outcome.returncode != 0:
            self.diagnostics = parse_diagnostics(log, cleaner)
            verdict = Verdict.IE if index == 0 else Verdict.CE
            return BuildStop(verdict, summarize(self.diagnostics, log=log) + "\n" + cleaner.text(log))
        return None

    def finish(self, job: BuildJob[NpuSetup]) -> str:
        """The library made, its objects through the library policy, the kernels' names beside it."""
        cleaner, log = self._cleaner(job), job.output
        library = job.workdir / self.output_name
        self.diagnostics = parse_diagnostics(log, cleaner)
        if not library.is_file():
            raise BuildStop(Verdict.IE, cleaner.text(log) + f"\nthe build reported success but made no "
                            f"{library.name}")
        text = summarize(self.diagnostics) + cleaner.text(log)
        refused = self._check_objects(job.workdir / BUILD_DIR, job.setup.cann)
        if isinstance(refused, str):
            raise BuildStop(Verdict.IE, text + "\n" + refused)
        if refused:
            listing = "\n".join(f"  {f.file}: {f.rule}: {f.message}" for f in refused)
            raise BuildStop(Verdict.SV, text + "\nthe library policy refused objects of the build:\n" + listing,
                            findings=refused)
        assert job.setup.roles is not None
        (job.workdir / KERNEL_NAMES_FILE).write_text("".join(f"{name}\n" for name in job.setup.roles.kernel_names))
        return text

    def reported_command(self, commands: list[list[str]]) -> list[str]:
        """The build's command (cmake --build), not configure's."""
        return commands[-1] if commands else []

    def fingerprint_extras(self, job: BuildJob[NpuSetup]) -> list[str]:
        """The CMake project the build would write (its flags, the CANN paths), and the export list."""
        try:
            project = render_cmakelists(roles=classify(job.sources), workdir=job.workdir,
                                        include_dirs=job.include_dirs, soc=job.setup.soc,
                                        cann_root=job.setup.cann.root,
                                        cmake_module_dir=job.setup.cann.cmake_module_dir)
        except ProjectError as exc:
            project = f"not written: {exc}"
        return [project, EXPORTS_SCRIPT]

    @staticmethod
    def _cleaner(job: BuildJob[NpuSetup]) -> PathCleaner:
        assert job.setup.cleaner is not None, "prepare sets it before any command runs"
        return job.setup.cleaner

    def _check_objects(self, build_dir: Path, cann: CannInstall) -> list[PolicyFinding] | str:
        """The by-object library policy (link_check.py); a str says why the objects could not be read (IE)."""
        if not self.host.policy_check:
            return []
        try:
            objects = collect_objects(build_dir, cann.root)
        except LinkCheckError as exc:
            return str(exc)
        return check_linked_objects(objects, TEAM_RULES)
