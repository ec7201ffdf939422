"""CudaToolchain: flags, nvcc discovery, and real nvcc builds of the reference and fixture kernels."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest

from judge.backends import Backend
from judge.errors import ToolchainUnavailableError
from judge.limits import DEVICE_LIMITS, Limits
from judge.policy import check_library, check_preprocessed
from judge.sandbox.rlimit import OffSandbox
from judge.toolchains.base import SourceFile
from judge.tracks.cuda.toolchain import (
    CudaToolchain,
    arch_from_capability,
    cut_log,
    find_cuda,
    gencode_flags,
)
from judge.verdict import Verdict

REPO = Path(__file__).resolve().parents[3]
NVCC = shutil.which("nvcc") or (Path("/usr/local/cuda/bin/nvcc").is_file() and "/usr/local/cuda/bin/nvcc")
needs_nvcc = pytest.mark.skipif(not NVCC, reason="nvcc is not installed on this host")

PROBLEMS = ("sparse_flash_attention_grad", "add_mul_relu")


def test_gencode_uses_the_arch_specific_target() -> None:
    assert gencode_flags("sm_90a") == ["-gencode", "arch=compute_90a,code=sm_90a"]
    assert gencode_flags("sm_80") == ["-gencode", "arch=compute_80,code=sm_80"]
    assert gencode_flags("sm_100f") == ["-gencode", "arch=compute_100f,code=sm_100f"]


@pytest.mark.parametrize("bad", ["90a", "sm90", "sm_9", "compute_90", "sm_90a; rm -rf /", ""])
def test_malformed_arch_is_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        CudaToolchain(arch=bad)


def test_arch_from_capability() -> None:
    assert arch_from_capability(9, 0) == "sm_90a"  # H100, H200
    assert arch_from_capability(10, 0) == "sm_100a"  # B200
    assert arch_from_capability(8, 0) == "sm_80"
    assert arch_from_capability(8, 9) == "sm_89"


def test_missing_nvcc_names_what_was_looked_for(tmp_path: Path) -> None:
    with pytest.raises(ToolchainUnavailableError, match=str(tmp_path / "bin" / "nvcc")):
        find_cuda(tmp_path)
    with pytest.raises(ToolchainUnavailableError, match="nvcc not found"):
        CudaToolchain(cuda_home=tmp_path).version()


def test_command_holds_only_the_judges_flags(tmp_path: Path) -> None:
    fake = tmp_path / "bin" / "nvcc"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n")
    install = find_cuda(tmp_path)
    argv = CudaToolchain(cuda_home=tmp_path).command(
        install=install, sources=[tmp_path / "k.cu"], include_dirs=[tmp_path / "inc"], output=tmp_path / "k.so"
    )
    assert argv[0] == str(fake)
    for flag in ("-O3", "-std=c++17", "-shared", "-Xcompiler", "-fPIC", "arch=compute_90a,code=sm_90a"):
        assert flag in argv
    assert argv[argv.index("-cudart") + 1] == "shared"
    assert argv[argv.index("-I") + 1] == str(tmp_path / "inc")


def test_cut_log_keeps_the_limit_and_says_so() -> None:
    text = "error: x\n" * 1000
    cut = cut_log(text, 100)
    assert cut.startswith("error: x") and "[log cut" in cut
    assert len(cut.encode()) < 200
    assert cut_log("short", 100) == "short"


def _build(source: Path, problem: str, workdir: Path, limits: Limits = DEVICE_LIMITS, extra: list[Path] = ()):
    include = workdir / "include"
    include.mkdir(parents=True)
    shutil.copy2(REPO / "problems" / problem / f"{problem}.h", include)
    files = [source, *extra]
    for path in files:
        shutil.copy2(path, workdir / path.name)
    sources = [SourceFile(p.name, p.read_bytes()) for p in files]
    return CudaToolchain().build(sources=sources, include_dirs=[include], workdir=workdir, limits=limits,
                                 sandbox=OffSandbox())


@needs_nvcc
def test_version_reads_nvcc() -> None:
    version = CudaToolchain().version()
    assert version.startswith("nvcc ") and "sm_90a" in version


def _kernels() -> list[tuple[str, Path]]:
    found = [(p, REPO / "reference_kernels" / p / "cuda" / "baseline.cu") for p in PROBLEMS]
    for problem in PROBLEMS:
        found += [(problem, f) for f in sorted((REPO / "tests" / "submissions" / problem / "cuda").glob("*.cu"))]
    return found


@needs_nvcc
@pytest.mark.slow
@pytest.mark.parametrize(("problem", "source"), _kernels(), ids=lambda v: v.name if isinstance(v, Path) else v)
def test_reference_and_fixture_kernels_compile(problem: str, source: Path, tmp_path: Path) -> None:
    """Every CUDA kernel in the repository builds with nvcc, except the ones meant to be CE."""
    expected_path = source.with_suffix(".toml")
    expected = tomllib.loads(expected_path.read_text())["verdict"] if expected_path.is_file() else "AC"
    result = _build(source, problem, tmp_path)
    if expected == "CE":
        assert not result.ok and result.verdict is Verdict.CE
        for text in tomllib.loads(expected_path.read_text()).get("message_contains", []):
            assert text in result.log
        assert str(tmp_path) not in result.log  # the host's paths are not shown to teams
        return
    assert result.ok, result.log
    assert result.library_path and Path(result.library_path).is_file()
    assert result.toolchain.startswith("nvcc")
    assert any(p.endswith(".cpp1.ii") for p in result.preprocessed), result.preprocessed  # device side
    assert any(p.endswith(".cpp4.ii") for p in result.preprocessed), result.preprocessed  # host side
    if not source.name.startswith("sv_"):
        assert check_library(Backend.CUDA, Path(result.library_path)) == []
        units = [Path(p) for p in result.preprocessed]
        assert check_preprocessed(Backend.CUDA, units, [SourceFile(source.name, source.read_bytes())], tmp_path) == []


@needs_nvcc
@pytest.mark.slow
def test_broken_source_is_ce_with_the_compilers_message(tmp_path: Path) -> None:
    source = tmp_path / "src" / "broken.cu"
    source.parent.mkdir()
    source.write_text('#include "add_mul_relu.h"\nextern "C" int kernel_run(const kernel_args* a) { return a->nn; }\n')
    result = _build(source, "add_mul_relu", tmp_path / "work")
    assert result.verdict is Verdict.CE and not result.ok
    assert 'class "kernel_args" has no member "nn"' in result.log


@needs_nvcc
@pytest.mark.slow
def test_compile_log_is_cut_to_the_limit(tmp_path: Path) -> None:
    source = tmp_path / "src" / "noisy.cu"
    source.parent.mkdir()
    source.write_text("\n".join(f"int f{i}() {{ return undeclared_{i}; }}" for i in range(200)))
    result = _build(source, "add_mul_relu", tmp_path / "work", Limits(compile_log_limit_bytes=512))
    assert result.verdict is Verdict.CE
    assert "[log cut" in result.log and len(result.log.encode()) < 700


@needs_nvcc
@pytest.mark.slow
def test_compile_time_limit_is_tle(tmp_path: Path) -> None:
    source = REPO / "reference_kernels" / "sparse_flash_attention_grad" / "cuda" / "baseline.cu"
    result = _build(source, "sparse_flash_attention_grad", tmp_path, Limits(compile_time_limit_s=0.2))
    assert result.verdict is Verdict.TLE and not result.ok
    assert "compilation exceeded 0.2 s" in result.log


def test_two_cu_files_are_refused_before_nvcc_runs(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.cu").write_text("int a() { return 1; }\n")
    (src / "b.cu").write_text("int b() { return 2; }\n")
    toolchain = CudaToolchain()
    if not NVCC:
        pytest.skip("nvcc is not installed on this host (version() is part of every build)")
    result = _build(src / "a.cu", "add_mul_relu", tmp_path / "work", extra=[src / "b.cu"])
    assert result.verdict is Verdict.CE and "one .cu file per submission" in result.log
    assert toolchain.source_suffixes() == (".cu", ".cpp", ".cc")


@needs_nvcc
@pytest.mark.slow
@pytest.mark.sandbox
def test_nvcc_builds_inside_the_strict_sandbox(tmp_path: Path) -> None:
    """nvcc (cicc, ptxas, the host g++) runs with bubblewrap, seccomp and only the build folder writable."""
    from judge.sandbox.select import make_sandbox

    sandbox = make_sandbox("strict")
    include = tmp_path / "include"
    include.mkdir()
    shutil.copy2(REPO / "problems" / "add_mul_relu" / "add_mul_relu.h", include)
    source = REPO / "reference_kernels" / "add_mul_relu" / "cuda" / "baseline.cu"
    shutil.copy2(source, tmp_path / source.name)
    result = CudaToolchain().build(sources=[SourceFile(source.name, source.read_bytes())], include_dirs=[include],
                                   workdir=tmp_path, limits=DEVICE_LIMITS, sandbox=sandbox)
    assert result.ok, result.log


@needs_nvcc
@pytest.mark.slow
def test_a_refused_import_is_explained_in_the_cuda_tracks_words(tmp_path: Path) -> None:
    """The library check runs even when the source check was dodged: a host-side device sync."""
    source = tmp_path / "src" / "sync.cu"
    source.parent.mkdir()
    source.write_text('#include "add_mul_relu.h"\n#include <cuda_runtime.h>\n'
                      'extern "C" int kernel_run(const kernel_args* a) {\n'
                      '  return a ? (int)cudaDeviceSynchronize() : 1;\n}\n'
                      'extern "C" int64_t kernel_workspace_bytes(const kernel_args*) { return 0; }\n')
    result = _build(source, "add_mul_relu", tmp_path / "work")
    assert result.ok and result.library_path, result.log
    found = check_library(Backend.CUDA, Path(result.library_path))
    assert [f.rule for f in found] == ["banned-symbol"]
    assert "cudaDeviceSynchronize" in found[0].message and "CUDA runtime's kernel launches" in found[0].message
    assert "OpenMP" not in found[0].message  # the CPU track's wording
