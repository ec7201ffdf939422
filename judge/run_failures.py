"""What a failure of a run's children means for the run: one table from the exception to its
verdict (docs/rules.md, "Verdicts"; docs/security.md, layer 5). `judge/run.py` applies it."""

from __future__ import annotations

import signal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from judge.runner.baseline_session import BaselineFailed
from judge.runner.failures import (
    FailureKind,
    RunnerDied,
    RunnerFailed,
    RunnerStartFailed,
    SubmissionBrokeRunner,
    allocation_failed,
)
from judge.runner.protocol import ProtocolViolation
from judge.verdict import Verdict


class RunOutOfTime(Exception):
    """The run as a whole passed its time limit (docs/rules.md: TLE for the run)."""


@dataclass(frozen=True)
class Failure:
    """What a failure of the run's children makes of the run (docs/rules.md, "Verdicts")."""

    verdict: Verdict
    message: str
    # The case being judged gets the verdict and the run is scored from its cases (a failure the
    # submission earned stands beside the others); otherwise it is the run's verdict and it ends.
    on_case: bool


def _runner_failed(exc: RunnerFailed) -> Failure:
    if exc.kind == FailureKind.KERNEL:  # the device faulted in the call: RE on that case, like a crash
        # A hang the device's watchdog ended is TLE (the NPU's faults.py marks it "[device timeout]").
        return Failure(Verdict.TLE if "[device timeout]" in str(exc) else Verdict.RE, str(exc), on_case=True)
    if exc.kind == FailureKind.LOAD:
        return Failure(Verdict.CE if "kernel_run" in str(exc) else Verdict.RE, str(exc), on_case=False)
    return Failure(Verdict.IE, f"the runner failed: {exc}", on_case=False)


# Each failure the children can raise, and its verdict; an exception's most specific class wins
# (`failure_of`: a SubmissionBrokeRunner is a RunnerFailed). An IE is the judge's: retried, never
# charged; once the submission's code has run a failure is never IE (docs/security.md, layer 5).
FAILURES: dict[type[Exception], Callable[[Any], Failure]] = {
    RunnerStartFailed: lambda exc: Failure(Verdict.IE, str(exc), on_case=False),
    BaselineFailed: lambda exc: Failure(Verdict.IE, str(exc), on_case=False),
    RunOutOfTime: lambda exc: Failure(Verdict.TLE, str(exc), on_case=True),
    RunnerDied: lambda exc: Failure(*classify_death(exc), on_case=True),
    ProtocolViolation: lambda exc: Failure(Verdict.SV, f"the result channel was tampered with: {exc}",
                                           on_case=False),
    SubmissionBrokeRunner: lambda exc: Failure(Verdict.MLE if exc.memory else Verdict.RE, str(exc),
                                               on_case=True),
    RunnerFailed: _runner_failed,
}


def failure_of(exc: Exception) -> Failure:
    """`exc`'s entry in FAILURES, by its most specific class there."""
    return next(FAILURES[cls](exc) for cls in type(exc).__mro__ if cls in FAILURES)


def classify_death(exc: RunnerDied) -> tuple[Verdict, str]:
    """Verdict for a child that ended during a call (docs/rules.md: TLE, MLE, RE, SV).

    Never IE: by now the launcher has exec'd the child and the submission is loaded, so a launcher
    failure would have been `RunnerStartFailed`. The launcher's exit status and stderr line are
    easy for a kernel to forge, and an IE is retried and never charged.
    """
    if exc.memory_limit_mib is not None:
        judge_part = (f" (besides the judge's own {exc.judge_memory_mib} MiB cache-flush buffer, which is not "
                      "counted against it)" if exc.judge_memory_mib else "")
        return Verdict.MLE, (f"memory limit exceeded: the process's memory (shared memory and files in /tmp "
                             f"included) reached its limit of {exc.memory_limit_mib} MiB{judge_part} and the "
                             "kernel ended it")
    if exc.timed_out:
        return Verdict.TLE, f"{exc} (the call time limit); the process was killed"
    code = exc.returncode
    text = exc.stderr + exc.withheld_stderr
    if code is not None and 128 < code < 128 + 65:
        code = 128 - code  # a sandbox's init reports its child's death by signal N as status 128 + N
    if code is not None and code < 0:
        sig = signal.Signals(-code)
        if sig is signal.SIGSYS:
            return Verdict.SV, "a forbidden system call was made (killed by the sandbox's seccomp filter)"
        if sig is signal.SIGXCPU:
            return Verdict.TLE, "CPU time limit exceeded"
        if sig in (signal.SIGKILL, signal.SIGABRT) and ("MemoryError" in text or "bad_alloc" in text):
            return Verdict.MLE, "memory limit exceeded (an allocation failed)"
        if sig is signal.SIGXFSZ:
            return Verdict.RE, "wrote more than the file size limit"
        return Verdict.RE, f"the process died with {sig.name}"
    if allocation_failed(text):
        return Verdict.MLE, "memory limit exceeded (an allocation failed)"
    return Verdict.RE, f"the process exited with status {code} inside kernel_run"
