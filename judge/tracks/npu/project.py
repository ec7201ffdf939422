"""The CMake project the NPU track builds a submission with (docs/npu-worker.md, "Submission format").

A submission is a handful of files in one folder:
- `*_kernel.cpp`: Ascend C device sources, built by CANN's `ascendc_library` (bisheng, device and
  host passes; they may also hold a host-side `<<<blocks, nullptr, stream>>>` launch wrapper);
- other `.cpp`/`.cc`/`.cxx`/`.c` files: host sources (kernel_run, tiling), built by the host compiler;
- `.h`/`.hpp`: headers, on the include path of both.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path

import jinja2

from judge.toolchains.base import SourceFile

KERNEL_SUFFIX = "_kernel.cpp"
HOST_SUFFIXES = (".cpp", ".cc", ".cxx", ".c")
HEADER_SUFFIXES = (".h", ".hpp")
# The judge's fixed flags (docs/rules.md: "the judge's compiler flags only").
KERNEL_FLAGS = ("-O3",)
HOST_FLAGS = ("-O2", "-std=c++17", "-fPIC", "-fvisibility=default")
PROJECT_DIR = "opjudge_cmake"  # under the build's workdir; names no submission file can take
BUILD_DIR = "opjudge_build"
ANCHOR_NAME = "opjudge_link_anchor.c"  # gives the shared library a host source when there is none
OUTPUT_NAME = "kernel"
# Beside the built library: the names of its kernels, one a line (the profiler names them to msprof op).
KERNEL_NAMES_FILE = "kernel.kernels.txt"

_TEMPLATES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
    autoescape=False,  # CMake, not HTML; every interpolated path is checked by _cmake_safe
)


class ProjectError(ValueError):
    """The files cannot form an NPU submission; the message is safe to show a team."""


@dataclass(frozen=True)
class SourceRoles:
    kernels: list[str]  # device sources, by file name
    hosts: list[str]  # host translation units
    headers: list[str]
    ignored: list[str]  # e.g. README.txt: copied, never compiled
    kernel_names: list[str] = dataclasses.field(default_factory=list)  # the __global__ functions, in file order


def classify(sources: list[SourceFile]) -> SourceRoles:
    """Sort the files into device sources, host sources and headers; ProjectError when unusable."""
    kernels = [s.name for s in sources if s.name.endswith(KERNEL_SUFFIX)]
    hosts = [s.name for s in sources if s.name.endswith(HOST_SUFFIXES) and not s.name.endswith(KERNEL_SUFFIX)]
    headers = [s.name for s in sources if s.name.endswith(HEADER_SUFFIXES)]
    ignored = [s.name for s in sources if s.name not in {*kernels, *hosts, *headers}]
    if not kernels:
        raise ProjectError(
            "an NPU submission needs at least one Ascend C device source named *_kernel.cpp "
            f"(given: {', '.join(s.name for s in sources) or 'nothing'}); host code goes in other .cpp files"
        )
    if any(name.startswith("opjudge_") for name in (*kernels, *hosts, *headers)):
        raise ProjectError("file names starting with 'opjudge_' are reserved for the judge")
    names: list[str] = []
    for source in sources:
        if source.name in kernels:
            names += check_kernel_signatures(source.name, source.content.decode(errors="replace"))
    return SourceRoles(kernels=kernels, hosts=hosts, headers=headers, ignored=ignored, kernel_names=names)


def kernel_names_beside(library: Path) -> list[str]:
    """The kernel names the build recorded beside `library` (KERNEL_NAMES_FILE); [] when it recorded none."""
    try:
        text = (library.parent / KERNEL_NAMES_FILE).read_text()
    except OSError:
        return []
    return [line for line in text.split() if re.fullmatch(r"\w+", line)]


_KERNEL = re.compile(r"__global__(?:\s+\w+)*?\s+void\s+(\w+)\s*\(([^)]*)\)")
_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)


def check_kernel_signatures(name: str, code: str) -> list[str]:
    """ProjectError unless the file holds at most one `__global__` kernel, ending in (GM_ADDR workspace, tiling).

    The template builds with HAVE_WORKSPACE and HAVE_TILING (templates/CMakeLists.txt.tmpl): CANN's
    generated wrapper then takes each kernel's second-to-last parameter as the workspace, sets the
    system workspace from it and hands the kernel the part after the system's 16 MiB. Any other
    parameter there would be moved 16 MiB on, silently: refused before building instead.
    Returns the file's kernel names.
    """
    kernels = list(_KERNEL.finditer(_COMMENTS.sub("", code)))
    if len(kernels) > 1:
        names = ", ".join(match.group(1) for match in kernels)
        raise ProjectError(
            f"{name}: defines {len(kernels)} kernels ({names}); put each __global__ kernel in its own *_kernel.cpp "
            "file: CANN's ascendc_library supports one kernel function per kernel file (with more, it files a "
            "kernel's metadata under another kernel's index; see docs/npu-worker.md, \"Checked against CANN 8.5.0\")")
    for match in kernels:
        kernel, params = match.group(1), [p.strip() for p in match.group(2).split(",") if p.strip()]
        workspace = params[-2] if len(params) >= 2 else ""
        if "workspace" not in workspace.lower() or not ("GM_ADDR" in workspace or "__gm__" in workspace):
            raise ProjectError(
                f"{name}: kernel {kernel}({', '.join(params)}) must end with (GM_ADDR workspace, <tiling struct> "
                "tiling): the judge builds with HAVE_WORKSPACE and HAVE_TILING, so CANN's launcher takes the "
                "second-to-last parameter as the workspace (16 MiB of it for the system, the rest the kernel's; "
                "see statement_npu.md)")
    return [match.group(1) for match in kernels]


def render_cmakelists(*, roles: SourceRoles, workdir: Path, include_dirs: list[Path], soc: str,
                      cann_root: Path, cmake_module_dir: Path) -> str:
    """The text of CMakeLists.txt for these sources (paths absolute, sources in `workdir`)."""
    hosts = [workdir / name for name in roles.hosts] or [workdir / PROJECT_DIR / ANCHOR_NAME]
    values = {
        "soc": soc,
        "cann_root": cann_root,
        "cmake_module_dir": cmake_module_dir,
        "kernel_sources": [workdir / name for name in roles.kernels],
        "host_sources": hosts,
        "include_dirs": [workdir, *include_dirs],
        "kernel_flags": KERNEL_FLAGS,
        "host_flags": HOST_FLAGS,
        "output_dir": workdir,
        "output_name": OUTPUT_NAME,
    }
    for key, value in values.items():
        for item in value if isinstance(value, list | tuple) else [value]:
            _cmake_safe(key, str(item))
    return _TEMPLATES.get_template("CMakeLists.txt.tmpl").render(**values)


def write_project(*, roles: SourceRoles, workdir: Path, include_dirs: list[Path], soc: str, cann_root: Path,
                  cmake_module_dir: Path) -> Path:
    """Write the project folder under `workdir`; returns it (the `-S` of cmake)."""
    project = workdir / PROJECT_DIR
    project.mkdir(exist_ok=True)
    if not roles.hosts:
        # Only device sources: kernel_run sits beside its <<<>>> launch in a *_kernel.cpp file.
        (project / ANCHOR_NAME).write_text("/* opjudge: the shared library's own (empty) host unit */\n")
    (project / "CMakeLists.txt").write_text(render_cmakelists(
        roles=roles, workdir=workdir, include_dirs=include_dirs, soc=soc, cann_root=cann_root,
        cmake_module_dir=cmake_module_dir))
    return project


def _cmake_safe(key: str, text: str) -> None:
    # Inside a quoted CMake argument these would end the string or expand a variable.
    if any(ch in text for ch in '"\\$;\n\r') or not text:
        raise ProjectError(f"{key} {text!r} cannot be written into a CMake file")
