"""nvcc with the judge's fixed flags: CUDA C++ sources into a shared library."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from judge.backends import Backend
from judge.errors import ToolchainUnavailableError
from judge.limits import Limits
from judge.sandbox.base import Bind, ProcessResult, SandboxLimits
from judge.toolchains.base import BuildJob, BuildStop, Toolchain
from judge.verdict import Verdict

DEFAULT_CUDA_ARCH = "sm_90a"  # H200/H100: the "a" target unlocks wgmma and setmaxnreg
LIBRARY_NAME = "libkernel.so"
KEEP_DIR = ".nvcc-tmp"  # nvcc's intermediate files
_ARCH_RE = re.compile(r"^sm_(\d{2,3})([af]?)$")
# Where nvcc is looked for when the host names no CUDA home, in order.
_DEFAULT_CUDA_HOMES = (Path("/usr/local/cuda"), Path("/opt/cuda"))


def gencode_flags(arch: str) -> list[str]:
    """`-gencode` for one real target, e.g. sm_90a -> arch=compute_90a,code=sm_90a.

    HOPPER.md: the `-arch=sm_90a` shorthand also runs a plain sm_90 pass that rejects
    wgmma, so the explicit form is used. No PTX is embedded: the worker builds for its
    own GPU, and a JIT-compiled fallback would time differently.
    """
    match = _ARCH_RE.match(arch)
    if match is None:
        raise ValueError(f"CUDA arch {arch!r} is not of the form sm_90, sm_90a or sm_100f")
    number, suffix = match.groups()
    return ["-gencode", f"arch=compute_{number}{suffix},code=sm_{number}{suffix}"]


def arch_from_capability(major: int, minor: int) -> str:
    """The arch a worker builds for, from its device's compute capability (9.0 -> sm_90a).

    Hopper and Blackwell data-centre parts get the arch-specific "a" target so that
    their own instructions are available; older parts take the plain target.
    """
    base = f"sm_{major}{minor}"
    return f"{base}a" if major in (9, 10) and minor == 0 else base


@dataclass(frozen=True)
class CudaInstall:
    nvcc: Path  # the compiler driver
    root: Path | None  # the toolkit root bound read-only into the sandbox, when known


def find_cuda(cuda_home: Path | None) -> CudaInstall:
    """Locate nvcc: `cuda_home/bin/nvcc`, else the usual toolkit roots, else `nvcc` on PATH."""
    looked: list[str] = []
    homes = [cuda_home] if cuda_home is not None else list(_DEFAULT_CUDA_HOMES)
    for home in homes:
        nvcc = home / "bin" / "nvcc"
        looked.append(str(nvcc))
        if nvcc.is_file():
            return CudaInstall(nvcc=nvcc, root=home.resolve())
    if cuda_home is None:
        looked.append("nvcc on PATH")
        found = shutil.which("nvcc")
        if found is not None:
            real = Path(found).resolve()
            root = real.parent.parent if (real.parent.parent / "include" / "cuda_runtime.h").is_file() else None
            return CudaInstall(nvcc=real, root=root)
    raise ToolchainUnavailableError(f"nvcc not found; looked for: {', '.join(looked)}")


def cut_log(text: str, limit_bytes: int) -> str:
    """The compiler log cut to `limit_bytes` (docs/rules.md: 64 KiB), saying that it was cut."""
    raw = text.encode("utf-8", "replace")
    if len(raw) <= limit_bytes:
        return text
    note = f"\n[log cut: {len(raw)} bytes, the first {limit_bytes} shown]\n"
    return raw[:limit_bytes].decode("utf-8", "ignore") + note


class CudaToolchain(Toolchain[CudaInstall]):
    """nvcc -O3 -std=c++17 for one GPU arch, shared libcudart, run in the given sandbox."""

    backend = Backend.CUDA
    output_name = LIBRARY_NAME

    def __init__(self, *, cuda_home: Path | None = None, arch: str = DEFAULT_CUDA_ARCH) -> None:
        gencode_flags(arch)  # refuse a malformed arch at construction, not at the first build
        self.cuda_home = cuda_home
        self.arch = arch
        self._version: str | None = None

    def source_suffixes(self) -> tuple[str, ...]:
        """.cu, .cpp and .cc files are translation units; headers (.cuh, .h, ...) are only copied."""
        return (".cu", ".cpp", ".cc")

    def command(
        self, *, install: CudaInstall, sources: list[Path], include_dirs: list[Path], output: Path
    ) -> list[str]:
        """The compiler command line: the judge's fixed flags only (docs/rules.md, stage 2)."""
        argv = [str(install.nvcc), "-O3", "-std=c++17", *gencode_flags(self.arch)]
        # Shared libcudart: the library then imports only the runtime's launch path, which the
        # policy's allow-list can name; the static runtime would bring dlopen, sockets and files.
        argv += ["-shared", "-Xcompiler", "-fPIC", "-cudart", "shared"]
        # --keep leaves the preprocessed units (device .cpp1.ii, host .cpp4.ii) in nvcc's TMPDIR: the
        # policy reads what was compiled (judge/policy/expanded.py).
        argv += ["--keep", "--keep-dir", str(_keep_dir(output))]
        for folder in include_dirs:
            argv += ["-I", str(folder)]
        argv += ["-o", str(output), *(str(s) for s in sources)]
        return argv

    def locate(self) -> CudaInstall:
        return find_cuda(self.cuda_home)

    def _units(self, job: BuildJob[CudaInstall]) -> list[Path]:
        return [job.workdir / s.name for s in job.sources if s.name.endswith(self.source_suffixes())]

    def prepare(self, job: BuildJob[CudaInstall]) -> None:
        """One .cu file at most, then nvcc's scratch folder."""
        units = self._units(job)
        if not units:
            raise BuildStop(Verdict.CE, "no .cu, .cpp or .cc source to compile", command=self.commands(job)[0])
        cu_files = [u.name for u in units if u.suffix == ".cu"]
        if len(cu_files) > 1:
            # nvcc registers each .cu file's device code with a load-time constructor; the library
            # check allows exactly one (judge/policy/cuda.py), so say it plainly here instead.
            message = (f"one .cu file per submission, not {len(cu_files)} ({', '.join(cu_files)}): "
                       "put the rest of the device code in .cuh headers that it includes")
            raise BuildStop(Verdict.CE, message, command=self.commands(job)[0])
        _keep_dir(job.workdir / LIBRARY_NAME).mkdir(exist_ok=True)

    def commands(self, job: BuildJob[CudaInstall]) -> list[list[str]]:
        """One nvcc call for all the units."""
        return [self.command(install=job.setup, sources=self._units(job), include_dirs=job.include_dirs,
                             output=job.workdir / LIBRARY_NAME)]

    def sandbox_limits(self, limits: Limits) -> SandboxLimits:
        return SandboxLimits(
            cpu_time_s=limits.compile_time_limit_s,
            address_space_mib=None,  # cicc and ptxas reserve large address ranges
            max_processes=limits.max_processes,
            max_file_size_bytes=limits.max_file_size_bytes,
            max_open_files=limits.max_open_files,
        )

    def binds(self, job: BuildJob[CudaInstall]) -> list[Bind]:
        binds = super().binds(job)
        if job.setup.root is not None:
            binds.append(Bind(source=job.setup.root, target=job.setup.root))
        return binds

    def environment(self, job: BuildJob[CudaInstall]) -> dict[str, str]:
        tmp = _keep_dir(job.workdir / LIBRARY_NAME)
        path = [str(job.setup.nvcc.parent), "/usr/local/bin", "/usr/bin", "/bin"]
        return {"PATH": ":".join(path), "TMPDIR": str(tmp), "HOME": str(tmp), "LANG": "C.UTF-8"}

    def step_log(self, job: BuildJob[CudaInstall], argv: list[str], outcome: ProcessResult) -> str:
        """The output with the build folder's paths made relative: the team sees its own file names."""
        return super().step_log(job, argv, outcome).replace(f"{job.workdir}/", "")

    def step_stop(self, job: BuildJob[CudaInstall], index: int, outcome: ProcessResult) -> BuildStop | None:
        """The sandbox's findings come first, then the time limit, then the compiler's failure."""
        if outcome.violation:
            headline = f"the sandbox stopped the compiler: {outcome.violation}\n"
            return BuildStop(Verdict.SV, job.output, headline=headline)
        if outcome.timed_out:
            limit = job.limits.compile_time_limit_s
            return BuildStop(Verdict.TLE, job.output, headline=f"compilation exceeded {limit:g} s\n")
        if outcome.returncode != 0:
            return BuildStop(Verdict.CE, job.output)
        return None

    def after_steps(self, job: BuildJob[CudaInstall]) -> None:
        """Keep nvcc's preprocessed units, then remove its scratch folder."""
        tmp = _keep_dir(job.workdir / LIBRARY_NAME)
        job.preprocessed = _keep_preprocessed(tmp, job.workdir / "preprocessed")
        shutil.rmtree(tmp, ignore_errors=True)

    def finish(self, job: BuildJob[CudaInstall]) -> str:
        if not (job.workdir / LIBRARY_NAME).is_file():
            raise BuildStop(Verdict.CE, job.output)
        return job.output

    def cut_log(self, text: str, limit_bytes: int) -> str:
        return cut_log(text, limit_bytes)

    def version(self) -> str:
        """e.g. "nvcc 13.0.88 (sm_90a)"; raises ToolchainUnavailableError without nvcc."""
        if self._version is None:
            install = find_cuda(self.cuda_home)
            try:
                out = subprocess.run(
                    [str(install.nvcc), "--version"], capture_output=True, text=True, timeout=60, check=True
                ).stdout
            except (OSError, subprocess.SubprocessError) as exc:
                raise ToolchainUnavailableError(f"{install.nvcc} --version failed: {exc}") from exc
            match = re.search(r"release [\d.]+, V([\d.]+)", out)
            self._version = f"nvcc {match.group(1) if match else out.strip().splitlines()[-1]} ({self.arch})"
        return self._version


def _keep_dir(output: Path) -> Path:
    """nvcc's scratch folder beside the library: the build folder is the only writable one."""
    return output.parent / KEEP_DIR


def _keep_preprocessed(tmp: Path, folder: Path) -> list[str]:
    """Move nvcc's preprocessed units out of its scratch folder before that is removed."""
    units = sorted(tmp.glob("*.ii"))
    if units:
        folder.mkdir(exist_ok=True)
    return [str(unit.replace(folder / unit.name)) for unit in units]
