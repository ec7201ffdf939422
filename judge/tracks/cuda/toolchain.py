"""nvcc with the judge's fixed flags: CUDA C++ sources into a shared library."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from judge.backends import Backend
from judge.errors import ToolchainUnavailableError
from judge.limits import Limits
from judge.results import BuildResult
from judge.sandbox.base import Bind, Sandbox, SandboxLimits
from judge.toolchains.base import SourceFile, Toolchain
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


class CudaToolchain(Toolchain):
    """nvcc -O3 -std=c++17 for one GPU arch, shared libcudart, run in the given sandbox."""

    backend = Backend.CUDA

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

    def build(
        self,
        *,
        sources: list[SourceFile],
        include_dirs: list[Path],
        workdir: Path,
        limits: Limits,
        sandbox: Sandbox,
    ) -> BuildResult:
        """Compile the .cu/.cpp files of `sources` (already in `workdir`) into `workdir/libkernel.so`."""
        install = find_cuda(self.cuda_home)
        toolchain = self.version()
        units = [workdir / s.name for s in sources if s.name.endswith(self.source_suffixes())]
        output = workdir / LIBRARY_NAME
        argv = self.command(install=install, sources=units, include_dirs=include_dirs, output=output)
        if not units:
            return BuildResult(False, Verdict.CE, None, "no .cu, .cpp or .cc source to compile", 0.0, toolchain,
                               argv)
        cu_files = [u.name for u in units if u.suffix == ".cu"]
        if len(cu_files) > 1:
            # nvcc registers each .cu file's device code with a load-time constructor; the library
            # check allows exactly one (judge/policy/cuda.py), so say it plainly here instead.
            message = (f"one .cu file per submission, not {len(cu_files)} ({', '.join(cu_files)}): "
                       "put the rest of the device code in .cuh headers that it includes")
            return BuildResult(False, Verdict.CE, None, message, 0.0, toolchain, argv)
        tmp = _keep_dir(output)
        tmp.mkdir(exist_ok=True)
        binds = [Bind(source=workdir, target=workdir, writable=True)]
        binds += [Bind(source=d, target=d) for d in include_dirs]
        if install.root is not None:
            binds.append(Bind(source=install.root, target=install.root))
        sandbox_limits = SandboxLimits(
            cpu_time_s=limits.compile_time_limit_s,
            address_space_mib=None,  # cicc and ptxas reserve large address ranges
            max_processes=limits.max_processes,
            max_file_size_bytes=limits.max_file_size_bytes,
            max_open_files=limits.max_open_files,
        )
        started = time.monotonic()
        proc = sandbox.run(
            argv,
            limits=sandbox_limits,
            binds=binds,
            workdir=workdir,
            timeout_s=limits.compile_time_limit_s,
            env=self._env(install, tmp),
        )
        duration = time.monotonic() - started
        log = (proc.stdout + proc.stderr).decode("utf-8", "replace").replace(f"{workdir}/", "")
        log = cut_log(log, limits.compile_log_limit_bytes)
        preprocessed = _keep_preprocessed(tmp, workdir / "preprocessed")
        shutil.rmtree(tmp, ignore_errors=True)
        verdict = _verdict(proc.returncode, proc.timed_out, proc.violation, output)
        if verdict is Verdict.TLE:
            log = f"compilation exceeded {limits.compile_time_limit_s:g} s\n{log}"
        elif verdict is Verdict.SV:
            log = f"the sandbox stopped the compiler: {proc.violation}\n{log}"
        ok = verdict is None
        return BuildResult(
            ok=ok,
            verdict=verdict,
            library_path=str(output) if ok else None,
            log=log,
            duration_s=duration,
            toolchain=toolchain,
            command=argv,
            preprocessed=preprocessed,
        )

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

    @staticmethod
    def _env(install: CudaInstall, tmp: Path) -> dict[str, str]:
        path = [str(install.nvcc.parent), "/usr/local/bin", "/usr/bin", "/bin"]
        return {"PATH": ":".join(path), "TMPDIR": str(tmp), "HOME": str(tmp), "LANG": "C.UTF-8"}


def _keep_dir(output: Path) -> Path:
    """nvcc's scratch folder beside the library: the build folder is the only writable one."""
    return output.parent / KEEP_DIR


def _keep_preprocessed(tmp: Path, folder: Path) -> list[str]:
    """Move nvcc's preprocessed units out of its scratch folder before that is removed."""
    units = sorted(tmp.glob("*.ii"))
    if units:
        folder.mkdir(exist_ok=True)
    return [str(unit.replace(folder / unit.name)) for unit in units]


def _verdict(returncode: int, timed_out: bool, violation: str | None, output: Path) -> Verdict | None:
    """None when the library was built; else why not (the sandbox's findings come first)."""
    if violation:
        return Verdict.SV
    if timed_out:
        return Verdict.TLE
    if returncode != 0 or not output.is_file():
        return Verdict.CE
    return None
