"""A built kernel library as the runner child loads it, its calls' arguments, and the faults that
are the submission's."""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from judge.abi import pack_args


class LibraryLoadError(Exception):
    """The submission's library cannot be loaded or lacks kernel_run: the submission's fault."""


class KernelFault(Exception):
    """A call left the device in error (illegal address, trap, assert): the submission's fault."""


class WorkspaceRefused(Exception):
    """kernel_workspace_bytes asked for more than the limit, or a negative size: the call is not made."""

    def __init__(self, requested: int) -> None:
        super().__init__(f"{requested} bytes of workspace asked for")
        self.requested = requested


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


class KernelCalls:
    """kernel_args packed for each call of the loaded kernels, with the workspace each one asks for."""

    def __init__(self, struct: type[ctypes.Structure], pointer_names: set[str], runtime: Any, workspace_limit: int,
                 restore_fp: Callable[[], None]) -> None:
        self.struct, self.pointer_names, self.runtime = struct, pointer_names, runtime
        self.workspace_limit, self.restore_fp = workspace_limit, restore_fp
        self.kernels: dict[str, Kernel] = {}
        self.wanted: dict[str, int] = {}  # kernel_workspace_bytes per library, for the case (`new_case`)

    def load(self, libraries: dict[str, Path]) -> None:
        """Load the libraries, by role: from here on, their code may run."""
        self.kernels = {role: Kernel(str(path)) for role, path in libraries.items()}

    def new_case(self) -> None:
        self.wanted = {}

    def prepare(self, lib: str, device_inputs: dict[str, torch.Tensor], outputs: dict[str, torch.Tensor],
                scalars: dict[str, float | int]) -> Callable[[], int]:
        """The call of `lib`'s kernel_run with this call's arguments and the workspace given, garbage-filled;
        `WorkspaceRefused` where the kernel asks for more than the limit."""
        kernel = self.kernels[lib]
        pointers: dict[str, int | None] = dict.fromkeys(self.pointer_names)
        pointers.update({k: t.data_ptr() for k, t in (*device_inputs.items(), *outputs.items())})
        pointers.update(workspace=None, stream=self.runtime.stream_handle())
        args = pack_args(self.struct, pointers=pointers, scalars=scalars)
        workspace = None
        if kernel.workspace_bytes is not None:
            wanted = self._workspace_request(lib, scalars)
            if wanted < 0 or wanted > self.workspace_limit:
                raise WorkspaceRefused(wanted)
            if wanted:
                workspace = self.runtime.garbage(wanted)
                args.workspace = workspace.data_ptr()
                args.workspace_bytes = wanted

        def invoke(_workspace: Any = workspace) -> int:  # the default keeps the workspace alive
            return int(kernel.run(ctypes.byref(args)))

        return invoke

    def _workspace_request(self, lib: str, scalars: dict[str, float | int]) -> int:
        """kernel_workspace_bytes for the case, asked once per case and library with every pointer
        NULL ("scratch bytes wanted for these sizes").

        Asked off the clock, it must never see a call's data: the red team's kernel wrote the
        outputs from the real pointers it was given here, and timed only the last eighth of the
        work (ratio 0.15, score 200). Asked at the case's first call, whose time never counts
        (a correctness call or a warm-up), with no pointer at all.
        """
        if lib not in self.wanted:
            blank = pack_args(self.struct, pointers=dict.fromkeys([*self.pointer_names, "workspace", "stream"]),
                              scalars=scalars)
            workspace_bytes = self.kernels[lib].workspace_bytes
            assert workspace_bytes is not None
            self.wanted[lib] = int(workspace_bytes(ctypes.byref(blank)))
            self.restore_fp()
        return self.wanted[lib]
