"""The OpenMP state a kernel call starts from, and whether it left a parallel region open.

The submission and the baseline share the runner's libgomp (torch's copy, loaded under the
soname libgomp.so.1) and are called on the same thread, so OpenMP's per-thread settings would
carry over from one call to the next: a kernel could leave `omp_set_num_threads(1)` behind
and slow the baseline it is measured against. Each call therefore starts from the settings
the runner had before any kernel ran (thread count and limit, dynamic adjustment, nesting,
schedule). A kernel that jumps out of a parallel region (longjmp)
leaves the thread inside it, with a pool thread that never returns: that shows as a
nesting level above 0 after the call.
"""

from __future__ import annotations

import ctypes


class OpenMpGuard:
    def __init__(self, library: ctypes.CDLL | None) -> None:
        self._gomp = library
        if library is None:
            return
        self._threads = library.omp_get_max_threads()
        self._dynamic = library.omp_get_dynamic()
        self._levels = library.omp_get_max_active_levels()
        kind, chunk = ctypes.c_int(), ctypes.c_int()
        library.omp_get_schedule(ctypes.byref(kind), ctypes.byref(chunk))
        self._schedule = (kind.value, chunk.value)
        self._nested = library.omp_get_nested()
        # The thread limit has no omp_set_ call, but GOMP_teams (an allowed import: the host
        # `teams` construct) sets it for the calling thread, and nothing else ever puts it back.
        self._thread_limit = library.omp_get_thread_limit()

    @classmethod
    def of_this_process(cls) -> OpenMpGuard:
        """The guard of the libgomp this process has loaded (none: nothing to guard)."""
        try:
            return cls(ctypes.CDLL("libgomp.so.1"))
        except OSError:
            return cls(None)

    def reset(self) -> None:
        """Give the calling thread the settings it had when the guard was made."""
        if self._gomp is None:
            return
        self._gomp.omp_set_num_threads(self._threads)
        self._gomp.omp_set_dynamic(self._dynamic)
        self._gomp.omp_set_max_active_levels(self._levels)
        self._gomp.omp_set_schedule(*self._schedule)
        self._gomp.omp_set_nested(self._nested)
        if self._gomp.omp_get_thread_limit() != self._thread_limit:
            self._gomp.GOMP_teams(ctypes.c_uint(0), ctypes.c_uint(self._thread_limit))

    def level(self) -> int:
        """How many parallel regions enclose the calling thread: 0 outside every one."""
        return 0 if self._gomp is None else int(self._gomp.omp_get_level())
