"""What a sandboxed process may read: the system, the Python installation, the judge package.

Everything else of the host (/root, /work, /home, the rest of /etc, other runs'
folders) stays invisible under bubblewrap and unreadable under Landlock.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# Programs, libraries and the few /etc files the dynamic loader, the compiler
# and OpenMP read. Missing ones are skipped.
SYSTEM_READ_ONLY: tuple[str, ...] = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
    "/etc/nsswitch.conf",
    # OpenMP and torch size their thread pools from these.
    "/sys/devices/system/cpu",
)

# The environment every sandboxed program starts with; the caller's entries are added.
BASE_ENV: dict[str, str] = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
}


def interpreter() -> str:
    """sys.executable without `..` parts: inside the sandbox only bound folders exist to walk through."""
    return os.path.abspath(sys.executable)


def python_paths() -> list[Path]:
    """The interpreter, its standard library and the virtual environment (sys.executable's)."""
    paths = [Path(sys.prefix), Path(sys.base_prefix)]
    real = Path(os.path.realpath(sys.executable))
    paths.append(real.parent.parent)
    return paths


def judge_package_path() -> Path:
    """The `judge` package, which holds the launcher and the runner child."""
    import judge

    return Path(judge.__file__).resolve().parent


def collapse(paths: list[Path]) -> list[Path]:
    """Existing absolute paths without duplicates or paths below another one, parents first."""
    result: list[Path] = []
    for path in sorted({Path(os.path.abspath(p)) for p in paths}, key=lambda p: (len(p.parts), str(p))):
        if not os.path.lexists(path):
            continue
        if any(path == kept or kept in path.parents for kept in result):
            continue
        result.append(path)
    return result


def default_read_only(extra: list[Path]) -> list[Path]:
    """System, Python and judge paths plus `extra`, collapsed."""
    return collapse([Path(p) for p in SYSTEM_READ_ONLY] + python_paths() + [judge_package_path()] + extra)
