"""The CPU track's cache flush by line: the native helper, built once per host and loaded in the child.

Writing a buffer of twice the last-level cache before every call costs what the LLC's size
dictates, not what a case uses: 15 s of a judging on a host whose one L3 is 480 MiB, for
sparse FA buffers of about 10 MiB. Evicting exactly the lines of the call's buffers (inputs,
outputs, workspace: every one the runtime handed out since the last flush) with the processor's
own instruction (`clflushopt` or `clflush` on x86, `dc civac` on Arm) leaves none of them in any
cache level, at a cost that follows the case. `bench/flush_methods.py` compares the cold-cache
times of the two methods (docs/benchmarks.md, "The cache flush"); docs/rules.md says which one runs.

The helper is the judge's own code, built from `native/evict.c` with the host's C compiler into
the judge's cache (or work) folder, named by a digest of the source and the compiler, so a
changed source or compiler builds a new one. Without a compiler, or on another architecture,
the track flushes with the buffer.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import logging
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path

log = logging.getLogger("opjudge.judge")

SOURCE = Path(__file__).parent / "native" / "evict.c"
FLAGS = ("-O2", "-shared", "-fPIC")
METHODS = {1: "clflush", 2: "clflushopt", 3: "dc civac"}  # what opjudge_evict_method() returns


class EvictHelperError(Exception):
    """The line-flush helper could not be built or loaded; the reason names the step."""


def _compiler() -> str | None:
    for name in (os.environ.get("CC", ""), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return name
    return None


@functools.cache  # asked once per process: every run's options name the helper, and --version is a process
def _compiler_identity(compiler: str) -> str:
    try:
        return subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise EvictHelperError(f"{compiler} --version failed: {exc}") from None


def build_helper(folder: Path) -> Path:
    """The helper library in `folder` (built there first if needed): raises EvictHelperError."""
    compiler = _compiler()
    if compiler is None:
        raise EvictHelperError("no C compiler (cc, gcc or clang) on the PATH")
    digest = hashlib.sha256()
    for part in (SOURCE.read_bytes(), _compiler_identity(compiler).encode(), " ".join(FLAGS).encode(),
                 platform.machine().encode()):
        digest.update(part)
    target = folder / f"evict-{digest.hexdigest()[:16]}.so"
    if target.exists():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".evict-") as scratch:
        built = Path(scratch) / "evict.so"
        try:
            run = subprocess.run([compiler, *FLAGS, str(SOURCE), "-o", str(built)],
                                 capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.SubprocessError) as exc:
            raise EvictHelperError(f"{compiler} could not build {SOURCE.name}: {exc}") from None
        if run.returncode != 0:
            raise EvictHelperError(f"{compiler} could not build {SOURCE.name}: {run.stderr.strip()[-500:]}")
        os.replace(built, target)  # atomic: two workers building at once leave one whole file
    return target


def helper_for(folder: Path) -> Path | None:
    """`build_helper`, or None (logged) where it cannot be built: the track then flushes with the buffer."""
    try:
        return build_helper(folder)
    except EvictHelperError as exc:
        log.warning("cache flush: the line-flush helper is unavailable (%s); flushing with a buffer of twice "
                    "the last-level cache instead", exc)
        return None


class LineEvictor:
    """The loaded helper: `evict(address, nbytes)` drops those bytes' lines from every cache level."""

    def __init__(self, path: str) -> None:
        try:
            library = ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
        except OSError as exc:
            raise EvictHelperError(f"the line-flush helper {path} could not be loaded: {exc}") from None
        library.opjudge_evict_method.restype = ctypes.c_int
        library.opjudge_evict.restype = ctypes.c_int
        library.opjudge_evict.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        method = int(library.opjudge_evict_method())
        if method not in METHODS:
            raise EvictHelperError(f"no line-flush instruction on {platform.machine()}")
        self.method = METHODS[method]
        self._evict = library.opjudge_evict

    def evict(self, address: int, nbytes: int) -> None:
        if nbytes > 0 and self._evict(address, nbytes) != 0:
            raise EvictHelperError("the line-flush helper refused a buffer")
