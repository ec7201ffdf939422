"""A built kernel library as the runner child loads it, and the faults that are the submission's."""

from __future__ import annotations

import ctypes
import os


class LibraryLoadError(Exception):
    """The submission's library cannot be loaded or lacks kernel_run: the submission's fault."""


class KernelFault(Exception):
    """A call left the device in error (illegal address, trap, assert): the submission's fault."""


def check_launches(lib: str, launches: int, limit: int, rc: int) -> None:
    """The competition's launch rule, on the team's kernel only: the vendor baseline's operator may
    launch several kernels (its launches are recorded, never capped). A call that returned 0 and in
    which the profiler saw no task at all cannot be timed by device time: an error, never a zero time."""
    if launches == 0 and rc == 0:  # a call that failed (non-zero return) is RE for its return code
        raise RuntimeError("device timing: the profiler recorded no device task in this call, so it cannot be "
                           "timed by device time (the profiler did not see the kernel's launch)")
    if lib == "submission" and limit and launches > limit:
        raise KernelFault(f"kernel_run ran {launches} device tasks in one call; this competition times device "
                          f"time and allows {limit} launch{'es' if limit > 1 else ''} per call of your kernel")


class Kernel:
    """One loaded library: kernel_run and the optional kernel_workspace_bytes."""

    def __init__(self, path: str) -> None:
        try:
            self.library = ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
        except OSError as exc:
            raise LibraryLoadError(f"the library could not be loaded: {exc}") from None
        if not hasattr(self.library, "kernel_run"):
            raise LibraryLoadError("the library does not export kernel_run (declare it extern \"C\")")
        self.run = self.library.kernel_run
        self.run.restype = ctypes.c_int
        self.run.argtypes = [ctypes.c_void_p]
        try:
            self.workspace_bytes = self.library.kernel_workspace_bytes
            self.workspace_bytes.restype = ctypes.c_int64
            self.workspace_bytes.argtypes = [ctypes.c_void_p]
        except AttributeError:
            self.workspace_bytes = None
