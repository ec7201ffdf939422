"""Finding and checking a CANN toolkit, and the environment its tools and runtime need.

judge/ never reads the environment (the worker reads it once and passes a HostConfig down, so a
run depends only on what it was given): the CANN root comes in through the track's settings'
`ascend_home` and the SoC through their `soc` (judge/track_settings/npu.py), which
`judge.host.host_from_env` reads from a shell where CANN's `set_env.sh` was sourced.

The layout knowledge here follows CANN's own CMake modules (host_config.cmake
and the ascendc_kernel_cmake folder, looked up in CANN 7.x-9.x samples): the
ascendc CMake modules live in `compiler/tikcpp/ascendc_kernel_cmake` or
`tools/tikcpp/ascendc_kernel_cmake` (older trees: `ascendc_devkit/tikcpp/samples/cmake`),
the bisheng compiler in `{tools,compiler,ascendc_devkit}/ccec_compiler/bin`.
"""

from __future__ import annotations

import platform
import re
from dataclasses import dataclass
from pathlib import Path

from judge.errors import ToolchainUnavailableError
from judge.host_config import HostConfig
from judge.track_settings.npu import DEFAULT_DRIVER_DIR, ENV_VARIABLES, NpuSettings

# Where the ascendc CMake module (ascendc.cmake, which defines ascendc_library) may live, in the
# order CANN's samples probe them; `{arch}` is the host's machine (x86_64, aarch64). CANN 8.5+
# (asc-devkit) installs it under <arch>-linux/ (cannmirror/asc-devkit: CMakeLists.txt sets
# INSTALL_LIBRARY_DIR to ${CMAKE_SYSTEM_PROCESSOR}-linux, cmake/package.cmake installs
# tikcpp/ascendc_kernel_cmake there), older ones under compiler/ or tools/.
CMAKE_MODULE_DIRS = (
    "{arch}-linux/tikcpp/ascendc_kernel_cmake",
    "compiler/tikcpp/ascendc_kernel_cmake",
    "tools/tikcpp/ascendc_kernel_cmake",
    "ascendc_devkit/tikcpp/samples/cmake",
)
# host_config.cmake (asc-devkit cmake/asc/legacy_modules) picks the first of these that holds
# ccec_compiler as ASCENDC_DEVKIT_PATH: <arch>-linux first, for the host's own arch only.
COMPILER_DIRS = ("{arch}-linux/ccec_compiler", "tools/ccec_compiler", "compiler/ccec_compiler",
                 "ascendc_devkit/ccec_compiler")


def host_arch() -> str:
    """The machine name CANN's folders use (x86_64, aarch64), as CMAKE_SYSTEM_PROCESSOR lowercased."""
    machine = platform.machine().lower()
    return "aarch64" if machine == "arm64" else machine


def _for_arch(relatives: tuple[str, ...], arch: str) -> tuple[str, ...]:
    return tuple(relative.format(arch=arch) for relative in relatives)



# SoC names CANN's host_config.cmake accepts for Ascend C kernel builds, by family (cannmirror/asc-devkit
# cmake/asc/legacy_modules/host_config.cmake at 0da921b: ascend910b_list, ascend910_list, ascend310p_list,
# ascend310b_list; ascendc_runtime.cpp's AscendCheckSoCVersion maps the same names). The judge refuses
# others up front instead of letting a CMake error surface as a compile error. Ascend910_9363 is named by
# other CANN components (torch_npu's device types, HCCL) but by neither of these two files: a build for it
# stops at host_config.cmake's FATAL_ERROR, so it is left out until an asc-devkit that lists it.
SOC_FAMILIES: dict[str, tuple[str, ...]] = {
    "ascend910b": ("ascend910b1", "ascend910b2", "ascend910b2c", "ascend910b3", "ascend910b4",
                   "ascend910b4-1", "ascend910_9391", "ascend910_9381", "ascend910_9372",
                   "ascend910_9392", "ascend910_9382", "ascend910_9362"),
    "ascend910": ("ascend910a", "ascend910proa", "ascend910b", "ascend910prob", "ascend910premiuma"),
    "ascend310p": ("ascend310p1", "ascend310p3", "ascend310p5", "ascend310p7", "ascend310p3vir01",
                   "ascend310p3vir02", "ascend310p3vir04", "ascend310p3vir08"),
    "ascend310b": ("ascend310b1", "ascend310b2", "ascend310b3", "ascend310b4"),
}

INSTALL_HINT = (
    "Install the CANN toolkit (Ascend-cann-toolkit_<version>_linux-<arch>.run --install, see "
    "https://www.hiascend.com/cann) and point the worker at it: set OPJUDGE_ASCEND_HOME, or source "
    "<cann>/set_env.sh so that ASCEND_HOME_PATH / ASCEND_TOOLKIT_HOME are exported where the worker starts "
    "(typically /usr/local/Ascend/ascend-toolkit/latest). docs/npu-worker.md has the steps."
)


@dataclass(frozen=True)
class CannInstall:
    """A CANN toolkit tree that has what an Ascend C kernel build needs."""

    root: Path  # ASCEND_HOME_PATH
    cmake_module_dir: Path  # holds ascendc.cmake (defines ascendc_library)
    compiler_bin: Path  # holds bisheng / ccec
    version: str  # e.g. "8.0.RC2", or "unknown"

    def build_env(self, base_path: str = "/usr/local/bin:/usr/bin:/bin") -> dict[str, str]:
        """What set_env.sh would export for a build: compilers first on PATH, the toolkit libraries."""
        return {
            "ASCEND_HOME_PATH": str(self.root),
            "ASCEND_TOOLKIT_HOME": str(self.root),
            "ASCEND_OPP_PATH": str(self.root / "opp"),
            "PATH": f"{self.compiler_bin}:{self.root / 'bin'}:{base_path}",
            "LD_LIBRARY_PATH": ":".join(str(p) for p in self.library_dirs()),
        }

    def library_dirs(self, driver_dir: Path = DEFAULT_DRIVER_DIR) -> list[Path]:
        """The toolkit's and the driver's shared libraries, as set_env.sh lists them."""
        return [self.root / "lib64", self.root / "runtime" / "lib64", driver_dir / "lib64" / "common",
                driver_dir / "lib64" / "driver", driver_dir / "lib64"]


def soc_family(soc: str) -> str | None:
    """The family of a SoC name ("Ascend910B3" -> "ascend910b"), None when CANN would refuse it."""
    lower = soc.lower()
    for family, members in SOC_FAMILIES.items():
        if lower in members:
            return family
    return None


def locate_cann(host: HostConfig, arch: str | None = None) -> CannInstall:
    """The CANN tree named by the host, checked; ToolchainUnavailableError says what is missing.

    `arch`: the machine whose <arch>-linux/ folders count (default: this host's)."""
    arch = arch or host_arch()
    root = host.track_settings(NpuSettings).ascend_home
    if root is None:
        raise ToolchainUnavailableError(
            "the NPU track needs the CANN toolkit, and no CANN root was given: its setting ascend_home is not "
            f"set (from OPJUDGE_ASCEND_HOME, or {' / '.join(ENV_VARIABLES)} as set_env.sh exports them). "
            + INSTALL_HINT
        )
    if not root.is_dir():
        raise ToolchainUnavailableError(f"the CANN root {root} does not exist or is not a folder. {INSTALL_HINT}")
    missing: list[str] = []
    module_dirs, compiler_dirs = _for_arch(CMAKE_MODULE_DIRS, arch), _for_arch(COMPILER_DIRS, arch)
    cmake_dir = _first_existing(root, module_dirs, "ascendc.cmake")
    if cmake_dir is None:
        missing.append("the ascendc CMake module (ascendc.cmake) in any of "
                       + ", ".join(str(root / d) for d in module_dirs))
    compiler_dir = _first_existing(root, compiler_dirs, "bin")
    compiler_bin = compiler_dir / "bin" if compiler_dir is not None else None
    if compiler_bin is None or not any((compiler_bin / name).exists() for name in ("bisheng", "ccec")):
        missing.append("the bisheng/ccec compiler in any of "
                       + ", ".join(str(root / d / "bin") for d in compiler_dirs))
    for needed in ("bin", "lib64", "include"):
        if not (root / needed).is_dir():
            missing.append(f"{root / needed}/")
    if missing or cmake_dir is None or compiler_bin is None:
        raise ToolchainUnavailableError(
            f"the CANN tree at {root} is incomplete: missing " + "; ".join(missing)
            + ". Install the full toolkit package (not only nnrt/nnae). " + INSTALL_HINT
        )
    return CannInstall(root=root, cmake_module_dir=cmake_dir, compiler_bin=compiler_bin,
                       version=cann_version(root))


def read_only_paths(root: Path) -> list[Path]:
    """What a sandbox must bind read-only for the CANN tree at `root` to work inside it.

    Up to CANN 8.3, `ascend-toolkit/latest/` is a folder of symlinks into the version folder
    beside it (`latest/compiler -> ../8.0.RC2/compiler`), and `latest` itself may be a symlink:
    bound alone, every path under it dangles inside the sandbox. So besides `root`: where it
    resolves to, and the install root that holds the version folders (the parent of `latest`,
    or of any root whose top-level links point into its siblings). The extra paths only where
    they exist, each once.
    """
    paths = [root]
    extra = [root.resolve()]
    if root.name == "latest" or _links_into_siblings(root):
        # Resolved too: absolute links name the real folder, not a symlinked path to it.
        extra += [root.parent, root.parent.resolve()]
    for path in extra:
        if path.exists() and path not in paths:
            paths.append(path)
    return paths


def _links_into_siblings(root: Path) -> bool:
    try:
        links = [entry for entry in root.iterdir() if entry.is_symlink()]
    except OSError:
        return False
    resolved_root = root.resolve()
    for link in links:
        target = link.resolve()
        if target.is_relative_to(root.parent.resolve()) and not target.is_relative_to(resolved_root):
            return True
    return False


def checked_soc(host: HostConfig) -> str:
    """The SoC to compile for, as CANN spells it; ToolchainUnavailableError when unset or unknown."""
    soc = host.track_settings(NpuSettings).soc
    if not soc:
        raise ToolchainUnavailableError(
            "the NPU track needs the SoC to compile for: its setting soc is not set (OPJUDGE_NPU_SOC, "
            "e.g. Ascend910B3; `npu-smi info` shows the chip name)"
        )
    if soc_family(soc) is None:
        known = ", ".join(m for members in SOC_FAMILIES.values() for m in members)
        raise ToolchainUnavailableError(
            f"SoC {soc!r} is not one CANN's ascendc_library builds for; known: {known}"
        )
    return soc


def cann_version(root: Path) -> str:
    """The toolkit version from its install records, else from the folder name, else "unknown"."""
    candidates = [root / "version.cfg", root / "compiler" / "version.info", root / "runtime" / "version.info",
                  *sorted(root.glob("*-linux/ascend_toolkit_install.info"))]
    for path in candidates:
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        match = re.search(r"^\s*(?:version|Version)\s*=\s*\[?([\w.\-]+)", text, re.M)
        if match:
            return match.group(1)
    match = re.search(r"(\d+\.\d+(?:\.\w+)*)", root.resolve().name)
    return match.group(1) if match else "unknown"


def _first_existing(root: Path, relatives: tuple[str, ...], must_hold: str) -> Path | None:
    for relative in relatives:
        candidate = root / relative
        if (candidate / must_hold).exists():
            return candidate
    return None
