"""Stages 1 and 2: policy check and build of the submission, and the baseline's build.

The baseline is built by the same toolchain with the same flags; its library is
cached by a hash of everything that went into it, so a worker builds it once.
"""

from __future__ import annotations

import hashlib
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from judge.backends import Stage
from judge.errors import InternalJudgeError
from judge.host_config import HostConfig
from judge.request import JudgeRequest, Reporter
from judge.results import BuildResult, JudgeResult, PolicyFinding
from judge.sandbox.base import Sandbox
from judge.toolchains.base import SourceFile, Toolchain
from judge.tracks import Track
from judge.verdict import Verdict

BASELINE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".cu", ".h", ".hpp", ".cuh")


@dataclass(frozen=True)
class BuiltKernels:
    submission: Path
    baseline: Path


def build_kernels(request: JudgeRequest, *, host: HostConfig, track: Track, sandbox: Sandbox, workdir: Path,
                  reporter: Reporter, result: JudgeResult,
                  before_compile: Callable[[BuiltKernels], None] | None = None) -> BuiltKernels | None:
    """The submission's and the baseline's libraries, or None with the verdict set on `result`.

    `before_compile`, where given, is called with the paths the libraries will have once the source
    check has passed and the baseline's library is ready, before the submission compiles: the
    runner children start meanwhile (judge/pipeline.py). Nothing loads the submission's library
    before this function has returned it, every check passed."""
    policy_on = host.policy_check
    reporter.stage(Stage.POLICY)
    if policy_on and _refused(result, _check_sources(request, host)):
        return None
    reporter.stage(Stage.BUILDING)
    toolchain = track.make_toolchain(host)
    result.conditions = replace(result.conditions, toolchain=toolchain.version())
    started = time.monotonic()
    folder = workdir / "build"
    baseline: Path | None = None
    if before_compile is not None:
        baseline = _baseline_library(toolchain, request, host, sandbox, workdir / "baseline")
        folder.mkdir(parents=True)  # the runner's sandbox binds it (read-only) before the library is there
        before_compile(BuiltKernels(submission=folder / toolchain.output_name, baseline=baseline))
    build = _build(toolchain, request.sources, request, host, sandbox, folder)
    result.compile_log = build.log
    if not build.ok and build.verdict is Verdict.SV and _refused(result, build.findings):
        # A toolchain's own policy check of what it built (the NPU's by-object library check).
        result.stage_times_s["build"] = time.monotonic() - started
        return None
    if not build.ok:
        result.verdict = build.verdict or Verdict.CE
        result.findings = build.findings
        result.message = "compile error" if result.verdict is Verdict.CE else "the build failed"
        if result.verdict is Verdict.TLE:
            result.message = "the compile time limit was exceeded"
        result.stage_times_s["build"] = time.monotonic() - started
        return None
    assert build.library_path is not None
    if policy_on and _refused(result, _check_preprocessed(request, build, workdir / "build")):
        return None
    if policy_on and _refused(result, _check_library(request, Path(build.library_path))):
        return None
    if baseline is None:
        baseline = _baseline_library(toolchain, request, host, sandbox, workdir / "baseline")
    elif Path(build.library_path) != folder / toolchain.output_name:
        raise InternalJudgeError(f"the toolchain left the library at {build.library_path}, not at "
                                 f"{folder / toolchain.output_name} where the runner was told to look")
    result.stage_times_s["build"] = time.monotonic() - started
    return BuiltKernels(submission=Path(build.library_path), baseline=baseline)


def _refused(result: JudgeResult, findings: list[PolicyFinding]) -> bool:
    if not findings:
        return False
    first = findings[0]
    where = f" ({first.file}:{first.line})" if first.file and first.line else f" ({first.file})" if first.file else ""
    result.verdict, result.findings = Verdict.SV, findings
    result.message = f"policy rule {first.rule}{where}: {first.message}"
    return True


def _check_sources(request: JudgeRequest, host: HostConfig) -> list[PolicyFinding]:
    from judge.policy import check_sources

    return check_sources(request.backend, request.sources, host.limits,
                         problem_headers=[request.problem.header.name])


def _check_preprocessed(request: JudgeRequest, build: BuildResult, folder: Path) -> list[PolicyFinding]:
    from judge.policy import check_preprocessed

    return check_preprocessed(request.backend, [Path(p) for p in build.preprocessed], request.sources, folder)


def _check_library(request: JudgeRequest, library: Path) -> list[PolicyFinding]:
    from judge.policy import check_library

    return check_library(request.backend, library)


def _build(toolchain: Toolchain, sources: list[SourceFile], request: JudgeRequest, host: HostConfig,
           sandbox: Sandbox, folder: Path) -> BuildResult:
    folder.mkdir(parents=True, exist_ok=True)  # made empty already where the children started early
    include = folder / "include"
    include.mkdir()
    shutil.copy2(request.problem.header, include / request.problem.header.name)
    for source in sources:
        (folder / source.name).write_bytes(source.content)
    return toolchain.build(sources=sources, include_dirs=[include], workdir=folder, limits=host.limits,
                           sandbox=sandbox)


def baseline_source_files(path: Path) -> list[SourceFile]:
    """A baseline's sources: one source file, or a folder of sources (kernel + host file on the NPU track)."""
    files = sorted(p for p in path.iterdir() if p.suffix in BASELINE_SUFFIXES) if path.is_dir() else [path]
    return [SourceFile(name=p.name, content=p.read_bytes()) for p in files]


def _baseline_library(toolchain: Toolchain, request: JudgeRequest, host: HostConfig, sandbox: Sandbox,
                      folder: Path) -> Path:
    path = request.problem.baselines.get(request.backend)
    if path is None or not path.exists():
        raise InternalJudgeError(f"problem {request.problem.slug} has no {request.backend} baseline at {path}")
    sources = baseline_source_files(path)
    # Every input of the build: the toolchain's fingerprint (sources, version, commands with their flags,
    # environment, the target -march=native resolves to) from the hooks the build itself runs, and the
    # problem's header that _build copies into the include folder.
    header = request.problem.header
    fingerprint = toolchain.build_fingerprint(sources=sources, include_dirs=[folder / "include"], workdir=folder)
    digest = hashlib.sha256(fingerprint.encode() + b"\0" + header.name.encode() + b"\0" + header.read_bytes())
    key = digest.hexdigest()[:24]
    cached = host.cache_dir / "builds" / f"{request.problem.slug}-{key}.so" if host.cache_dir else None
    if cached is not None and cached.is_file():
        return cached
    build = _build(toolchain, sources, request, host, sandbox, folder)
    if not build.ok or build.library_path is None:
        raise InternalJudgeError(f"the baseline of {request.problem.slug} did not build:\n{build.log[-2000:]}")
    if cached is None:
        return Path(build.library_path)
    cached.parent.mkdir(parents=True, exist_ok=True)
    temporary = cached.with_suffix(f".{time.monotonic_ns()}.tmp")
    shutil.copy2(build.library_path, temporary)
    temporary.replace(cached)
    return cached
