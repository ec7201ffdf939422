"""The floating-point environment every kernel call starts from and leaves behind.

Rounding mode, flush-to-zero and denormals-are-zero live in a per-thread register (MXCSR and
the x87 control word on x86-64, FPCR on AArch64), and a kernel runs on the runner's main
thread. Left changed, they alter what the runner computes next: the red team set
round-toward-zero with `_mm_setcsr` (a plain instruction, no import to refuse), the runner's
next inputs then differed from the worker's, and every later case became an internal error
(retried, never charged), hiding a wrong answer. So the environment the runner had before any
kernel ran is put back after every call into a library (and before each call, so a kernel
always starts from it). A kernel may still set its own modes inside a call.
"""

from __future__ import annotations

import ctypes

_FENV_BYTES = 64  # fenv_t is 32 bytes on x86-64 and 8 on AArch64; room to spare


class FloatingPointGuard:
    """Saves the calling thread's floating-point environment; `restore` puts it back."""

    def __init__(self) -> None:
        self._saved = ctypes.create_string_buffer(_FENV_BYTES)
        try:
            self._libm: ctypes.CDLL | None = ctypes.CDLL("libm.so.6")  # by soname: no ldconfig in the sandbox
        except OSError:
            self._libm = None
        if self._libm is not None and self._libm.fegetenv(self._saved) != 0:
            self._libm = None  # no C99 fenv here: nothing to guard with

    def restore(self) -> None:
        if self._libm is not None:
            self._libm.fesetenv(self._saved)

    def rounding_mode(self) -> int:
        """fegetround(): the current rounding mode (for tests)."""
        return int(self._libm.fegetround()) if self._libm is not None else -1
