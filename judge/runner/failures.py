"""Whose failure a runner child's error report is, and what the team is told (docs/security.md, layer 5).

The child reports why it gives up with an "error" message of a `kind` and a free `detail`. Up to
the moment it says "loading", only the judge's code has run in it, and its detail is the judge's
own traceback (an IE). From then on the submission's code has run in the same process: it can
reach the interpreter's C API (a kernel raised a Python exception from inside `kernel_run` with
`PyErr_SetString`, found through libc's own symbol table), fill the address space so that the
runner's next allocation fails, or forge the error message outright, since it can read the
channel's nonce. So from "loading" on:

- nothing the child reports is an IE (retried, never charged): an allocation failure is MLE,
  anything else RE;
- the detail is never shown: the team gets the judge's own words (a kernel's text could carry a
  private case's sizes); the worker's log keeps the detail.

Kinds the child sends: "load" (the library cannot be loaded: CE or RE), "kernel" (a device fault
after a call: RE), "internal" (anything else).
"""

from __future__ import annotations

from enum import StrEnum

from judge.errors import JudgeError


class FailureKind(StrEnum):
    LOAD = "load"  # the submission's library could not be loaded (before "ready")
    KERNEL = "kernel"  # a call left the device in error
    INTERNAL = "internal"  # the judge's own failure, before any submission code ran (IE)
    AFTER_SUBMISSION = "after_submission"  # the child failed once submission code had run (RE or MLE)


# What a failed allocation says: Python's MemoryError, an OSError of errno ENOMEM, torch's
# allocator, C++'s std::bad_alloc, glibc's messages.
ALLOCATION_FAILURES = ("MemoryError", "can't allocate memory", "Cannot allocate memory", "out of memory",
                       "bad_alloc", "[Errno 12]")

AFTER_SUBMISSION_MESSAGE = ("the runner failed after the submission's code ran in its process (its memory or "
                            "the interpreter was left broken); the runner's own account is not shown")
AFTER_SUBMISSION_MEMORY_MESSAGE = ("memory limit exceeded: the runner's own allocation failed after the "
                                   "submission's code ran in its process")
DEVICE_FAULT_WITHHELD = ("kernel_run left the device in error (the device's message is not shown from the "
                         "first private case on)")


class RunnerFailed(JudgeError):
    """The child reported why it gave up: `kind` is a `FailureKind` value."""

    def __init__(self, message: str, *, kind: str = "internal") -> None:
        super().__init__(message)
        self.kind = kind


class RunnerDied(JudgeError):
    """The child ended during a call: crash, signal, exit, or killed for the time limit."""

    def __init__(self, message: str, *, returncode: int | None, timed_out: bool, stderr: str,
                 withheld_stderr: str = "", memory_limit_mib: int | None = None,
                 judge_memory_mib: int = 0) -> None:
        super().__init__(message)
        self.returncode = returncode
        self.timed_out = timed_out
        # Set when the kernel's OOM killer ended a process of the child's memory cgroup: the
        # child's memory (shared memory and tmpfs files included) reached this limit (MLE), the
        # team's share; the judge's own buffers (`judge_memory_mib`) came on top of it.
        self.memory_limit_mib = memory_limit_mib
        self.judge_memory_mib = judge_memory_mib
        self.stderr = stderr  # what the team may see: written before the first private case
        self.withheld_stderr = withheld_stderr  # written after it: for the verdict only


class RunnerStartFailed(JudgeError):
    """The child ended before any submission code ran (its runtime, the driver or the sandbox
    failed): the judge's failure, never the team's."""


def allocation_failed(text: str) -> bool:
    """Whether a death's output or a failure's account says an allocation failed."""
    return any(marker in text for marker in ALLOCATION_FAILURES)


class SubmissionBrokeRunner(RunnerFailed):
    """The child failed once submission code had run in it: RE, or MLE for an allocation failure.

    `str()` is the judge's own sentence; `detail` is the child's account, for the worker's log only.
    """

    def __init__(self, detail: str) -> None:
        self.memory = allocation_failed(detail)
        super().__init__(AFTER_SUBMISSION_MEMORY_MESSAGE if self.memory else AFTER_SUBMISSION_MESSAGE,
                         kind=FailureKind.AFTER_SUBMISSION.value)
        self.detail = detail


def runner_failure(kind: str, detail: str, *, submission_ran: bool, ready: bool, private: bool) -> RunnerFailed:
    """The exception for a child's error report.

    `submission_ran`: the child had said "loading" (its libraries' code may have run); `ready`: it
    had said "ready" (loading was over); `private`: a private case had been set.
    """
    if not submission_ran:
        return RunnerFailed(detail, kind=FailureKind.INTERNAL.value)
    if kind == FailureKind.LOAD and not ready:  # dlopen's own error; no case had been set yet
        return RunnerFailed(detail, kind=FailureKind.LOAD.value)
    if kind == FailureKind.KERNEL:
        return RunnerFailed(DEVICE_FAULT_WITHHELD if private else detail[:300], kind=FailureKind.KERNEL.value)
    return SubmissionBrokeRunner(detail)
