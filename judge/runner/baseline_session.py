"""The baseline's own runner child.

The baseline is timed in a child of its own, never in the process that loads the submission:
a kernel can write anywhere in its process's memory without calling anything (the red team
walked the C stack to the Python frames), so in a shared process it could slow the baseline's
calls, or swap the baseline's entry point for a slow one, and be paid for it in the ratio.
Nothing the submission runs reaches this child, so whatever goes wrong in it is the judge's
failure (IE), never a verdict on the team.

It is launched before the submission's child and is ready before any submission code runs:
its device context and flush buffer are in place before a kernel could take the memory they
need, and its start-up is not charged to the run's time limit.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from typing import Any

from judge.errors import JudgeError
from judge.problem import Case
from judge.runner.calls import CallOutcome
from judge.runner.failures import RunnerFailed
from judge.runner.protocol import ProtocolViolation
from judge.runner.session import RunnerDied, RunnerSession, RunnerStartFailed

log = logging.getLogger("opjudge.judge")


class BaselineFailed(JudgeError):
    """The baseline's child failed: it started badly, died, or broke the protocol (IE).

    The message is what the team sees, so it names the step only; the child's own account
    (which could quote a private case's sizes) goes to the worker's log."""


class BaselineRunner:
    """A RunnerSession that holds only the baseline; its failures become `BaselineFailed`.

    Use as a context manager, which launches the child; `ready` waits until it is ready."""

    def __init__(self, session: RunnerSession) -> None:
        self.session = session
        self._case = ""
        # Cases the vendor operator failed on, so the baseline kernel timed them (child/main.py, _vendor_runs):
        # the organisers' concern, read by the pipeline after timing; the reason may quote a private case.
        self.vendor_failures: dict[str, str] = {}

    def __enter__(self) -> BaselineRunner:
        with self._judges_fault("start"):
            self.session.launch()
        return self

    def __exit__(self, *exc: object) -> None:
        self.session.__exit__(*exc)

    def ready(self) -> dict[str, str]:
        """Wait for the child to be ready; what its runtime says of the device."""
        with self._judges_fault("start"):
            self.session.wait_ready()
        return self.session.device_info

    def set_case(self, case: Case, timeout_s: float) -> None:
        with self._judges_fault("set a case"):  # not its name: a private case's can say its sizes
            self.session.set_case(case, timeout_s)
        self._case = case.name

    def call(self, lib: str, seed: int, *, timeout_s: float, recheck_ms: int = 0) -> CallOutcome:
        self.begin(lib, seed, recheck_ms=recheck_ms)
        return self.report(timeout_s)

    def begin(self, lib: str, seed: int, *, recheck_ms: int = 0, hold: bool = False,
              hold_report: bool = False) -> None:
        with self._judges_fault("run a call"):
            self.session.begin(lib, seed, recheck_ms=recheck_ms, hold=hold, hold_report=hold_report)

    def await_prepared(self, timeout_s: float) -> None:
        with self._judges_fault("run a call"):
            self.session.await_prepared(timeout_s)

    def run(self, timeout_s: float, at_armed: Callable[[], None] | None = None) -> None:
        with self._judges_fault("run a call"):
            self.session.run(timeout_s, at_armed)

    def report(self, timeout_s: float) -> CallOutcome:
        with self._judges_fault("run a call"):
            outcome = self.session.report(timeout_s)
        if outcome.vendor_failed and self._case not in self.vendor_failures:
            self.vendor_failures[self._case] = outcome.vendor_failed
            log.error("the vendor baseline failed on case %s, which its contract says it takes, so the baseline "
                      "kernel timed it: %s (run `opjudge doctor --baselines` and fix the contract)",
                      self._case, outcome.vendor_failed)
        return outcome

    def fetch_outputs(self, timeout_s: float) -> dict[str, Any]:
        """The outputs of the last call, for the oracle's check of the baseline (judge/baseline_trust.py)."""
        with self._judges_fault("send its outputs"):
            return self.session.fetch_outputs(timeout_s)

    def empty_call(self, timeout_s: float) -> int:
        with self._judges_fault("run a call"):
            return self.session.empty_call(timeout_s)

    @staticmethod
    @contextlib.contextmanager
    def _judges_fault(doing: str) -> Iterator[None]:
        try:
            yield
        except (RunnerDied, RunnerFailed, RunnerStartFailed, ProtocolViolation) as exc:
            log.warning("the baseline's runner failed to %s: %s; exit status %s; stderr: %s%s", doing, exc,
                        getattr(exc, "returncode", None), getattr(exc, "stderr", "")[-4000:],
                        getattr(exc, "withheld_stderr", "")[-4000:])
            raise BaselineFailed(f"the baseline's runner failed to {doing} ({type(exc).__name__}); "
                                 "the judge's failure, not the submission's: the worker's log has the details"
                                 ) from exc
