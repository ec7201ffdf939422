"""The Toolchain seam: build a submission's sources into a loadable library for one backend.

`Toolchain.build` is one sequence for every backend (a template method): locate the compiler,
check the sources and write what the build needs, run the build's commands one after another
in the sandbox under one compile time limit, collect the compiler's output, check what it made,
and report a `BuildResult` with the log cut to the limit (docs/rules.md, stage 2). A backend
fills in the steps through small hooks: its commands, sandbox limits, binds and environment,
how a failed step reads, and what it checks after the build. `build_fingerprint` digests the
same hooks' answers, so a cached library's key (judge/builds.py) cannot drift from the build.
"""

from __future__ import annotations

import hashlib
import json
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from judge.backends import Backend
from judge.limits import Limits
from judge.results import BuildResult, PolicyFinding
from judge.sandbox.base import Bind, ProcessResult, Sandbox, SandboxLimits
from judge.sandbox.paths import BASE_ENV
from judge.verdict import Verdict

SetupT = TypeVar("SetupT")

# How a build's folder is written in a fingerprint: the same build in another folder is the same build.
WORKDIR_MARK = "${workdir}"


@dataclass(frozen=True)
class SourceFile:
    name: str  # a plain file name, already checked (judge/submission.py)
    content: bytes


def cut_log(text: str, limit_bytes: int) -> str:
    """The log within `limit_bytes` (docs/rules.md: the compile log is cut to 64 KiB), saying where it was cut."""
    raw = text.encode(errors="replace")
    if len(raw) <= limit_bytes:
        return text
    return raw[:limit_bytes].decode(errors="ignore") + f"\n[log cut at {limit_bytes} bytes]"


@dataclass
class BuildJob(Generic[SetupT]):
    """One build as the hooks see it; `output` and `preprocessed` fill in as it goes."""

    sources: list[SourceFile]
    include_dirs: list[Path]
    workdir: Path
    limits: Limits
    setup: SetupT  # what `Toolchain.locate` found for this build (the CUDA toolkit, the CANN tree)
    commands: list[list[str]] = field(default_factory=list)  # `Toolchain.commands`, once the sources passed
    output: str = ""  # the steps' output so far, each step's as `Toolchain.step_log` wrote it
    preprocessed: list[str] = field(default_factory=list)  # for judge/policy/expanded.py


class BuildStop(Exception):
    """Ends a build without a library: the verdict and the log the team is shown.

    `headline`, when given, stands above the log and is never cut; `command` replaces the
    command the result would otherwise name (`Toolchain.reported_command`).
    """

    def __init__(self, verdict: Verdict, log: str, *, headline: str = "", command: list[str] | None = None,
                 findings: Sequence[PolicyFinding] = ()) -> None:
        super().__init__(f"{verdict}: {headline}{log[:200]}")
        self.verdict, self.log, self.headline = verdict, log, headline
        self.command, self.findings = command, list(findings)


class Toolchain(ABC, Generic[SetupT]):
    """Builds sources into a shared library exporting `kernel_run`.

    Implementations are one small file each (`<What>Toolchain`, judge/tracks/<backend>/toolchain.py)
    and override the hooks below, not `build`. They never read the environment: what they need
    (paths, SoC, GPU arch) comes through their constructor.
    """

    backend: Backend
    output_name = "kernel.so"  # the library the build leaves in its folder

    # --- the template method ---

    def build(
        self,
        *,
        sources: list[SourceFile],
        include_dirs: list[Path],
        workdir: Path,
        limits: Limits,
        sandbox: Sandbox,
    ) -> BuildResult:
        """Compile `sources` (already written into `workdir`) into `workdir/<output_name>`.

        Not ok with CE, TLE, SV or IE and the log; raises ToolchainUnavailableError without the compiler.
        """
        started = time.monotonic()
        job = BuildJob(sources=sources, include_dirs=include_dirs, workdir=workdir, limits=limits,
                       setup=self.locate())
        toolchain = self.version()
        try:
            self.prepare(job)
            job.commands = self.commands(job)
            try:
                self._run_steps(job, sandbox)
            finally:
                self.after_steps(job)
            log = self.finish(job)
        except BuildStop as stop:
            command = stop.command if stop.command is not None else self.reported_command(job.commands)
            return BuildResult(
                ok=False, verdict=stop.verdict, library_path=None,
                log=stop.headline + self.cut_log(stop.log, limits.compile_log_limit_bytes),
                duration_s=time.monotonic() - started, toolchain=toolchain, command=command,
                findings=stop.findings, preprocessed=job.preprocessed,
            )
        return BuildResult(
            ok=True, verdict=None, library_path=str(workdir / self.output_name),
            log=self.cut_log(log, limits.compile_log_limit_bytes), duration_s=time.monotonic() - started,
            toolchain=toolchain, command=self.reported_command(job.commands), preprocessed=job.preprocessed,
        )

    def _run_steps(self, job: BuildJob[SetupT], sandbox: Sandbox) -> None:
        """Each command in the sandbox, all of them within one compile time limit."""
        box_limits, binds, env = self.sandbox_limits(job.limits), self.binds(job), self.environment(job)
        deadline = time.monotonic() + job.limits.compile_time_limit_s
        for index, argv in enumerate(job.commands):
            outcome = sandbox.run(argv, limits=box_limits, binds=binds, workdir=job.workdir,
                                  timeout_s=max(0.1, deadline - time.monotonic()), env=env)
            job.output += self.step_log(job, argv, outcome)
            stop = self.step_stop(job, index, outcome)
            if stop is not None:
                raise stop

    def build_fingerprint(self, *, sources: list[SourceFile], include_dirs: list[Path], workdir: Path) -> str:
        """A digest of every input of `build` with these arguments, but the include folders' files.

        The sources' names and bytes, the compiler's version, the commands the build would run,
        the environment they would run in, the target the compiler resolves on this host, and
        what the backend adds (`fingerprint_extras`): all read from the hooks `build` itself uses.
        `workdir` is written as a mark, so the same build in another folder has the same digest.
        """
        job = BuildJob(sources=sources, include_dirs=include_dirs, workdir=workdir, limits=Limits(),
                       setup=self.locate())
        parts = {
            "backend": self.backend.value,
            "toolchain": self.version(),
            "target": self.target(),
            "commands": self.commands(job),
            "environment": {**BASE_ENV, **(self.environment(job) or {})},
            "output": self.output_name,
            "extras": self.fingerprint_extras(job),
            "sources": [[s.name, hashlib.sha256(s.content).hexdigest()] for s in sources],
        }
        text = json.dumps(parts, sort_keys=True).replace(json.dumps(str(workdir))[1:-1], WORKDIR_MARK)
        return hashlib.sha256(text.encode()).hexdigest()

    # --- hooks ---

    @abstractmethod
    def version(self) -> str:
        """The compiler's name and version, recorded on every run; raises ToolchainUnavailableError."""

    def source_suffixes(self) -> tuple[str, ...]:
        """File suffixes compiled as translation units; others (headers) are only copied."""
        return (".cpp", ".cc", ".cxx", ".c")

    @abstractmethod
    def locate(self) -> SetupT:
        """What the build runs with (the toolkit's paths); raises ToolchainUnavailableError."""

    def prepare(self, job: BuildJob[SetupT]) -> None:
        """Check the sources and write what the build needs into `job.workdir`; raise BuildStop to refuse."""

    @abstractmethod
    def commands(self, job: BuildJob[SetupT]) -> list[list[str]]:
        """The command lines the build runs, in order; writes nothing (`build_fingerprint` asks too)."""

    @abstractmethod
    def sandbox_limits(self, limits: Limits) -> SandboxLimits:
        """The sandbox's limits for each command of the build."""

    def binds(self, job: BuildJob[SetupT]) -> list[Bind]:
        """The build folder writable, the include folders read-only."""
        return [Bind(job.workdir, job.workdir, writable=True)] + [Bind(d, d) for d in job.include_dirs]

    def environment(self, job: BuildJob[SetupT]) -> dict[str, str] | None:
        """What the commands' environment adds to the sandbox's own; None: nothing."""
        return None

    def step_log(self, job: BuildJob[SetupT], argv: list[str], outcome: ProcessResult) -> str:
        """What one command adds to the log: its output."""
        return (outcome.stdout + outcome.stderr).decode(errors="replace")

    def step_stop(self, job: BuildJob[SetupT], index: int, outcome: ProcessResult) -> BuildStop | None:
        """Why the build ends after command `index`, or None to go on: TLE past the limit, CE on a failure."""
        if outcome.timed_out:
            return BuildStop(Verdict.TLE, job.output + "\ncompile time limit exceeded")
        if outcome.returncode != 0:
            return BuildStop(Verdict.CE, job.output)
        return None

    def after_steps(self, job: BuildJob[SetupT]) -> None:
        """Tidy up after the commands, whether they built the library or not."""

    def finish(self, job: BuildJob[SetupT]) -> str:
        """Check what the commands made (raise BuildStop to refuse it); returns the log of a built library."""
        return job.output

    def cut_log(self, text: str, limit_bytes: int) -> str:
        """The log within the limit."""
        return cut_log(text, limit_bytes)

    def reported_command(self, commands: list[list[str]]) -> list[str]:
        """The command line the result names for the report: the first."""
        return commands[0] if commands else []

    def target(self) -> str:
        """What the compiler builds for on this host where the commands leave it open (-march=native)."""
        return ""

    def fingerprint_extras(self, job: BuildJob[SetupT]) -> list[str]:
        """Inputs of the build besides the sources and the commands (a generated project file)."""
        return []
