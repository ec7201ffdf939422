"""The baseline's own runner child.

The baseline is timed in a child of its own, never in the process that loads the submission:
a kernel can write anywhere in its process's memory without calling anything (the red team
walked the C stack to the Python frames), so in a shared process it could slow the baseline's
calls, or swap the baseline's entry point for a slow one, and be paid for it in the ratio.
Nothing the submission runs reaches this child, so whatever goes wrong in it is the judge's
failure (IE), never a verdict on the team.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from judge.errors import JudgeError
from judge.problem import Case
from judge.runner.protocol import ProtocolViolation
from judge.runner.session import CallOutcome, RunnerDied, RunnerFailed, RunnerSession, RunnerStartFailed


class BaselineFailed(JudgeError):
    """The baseline's child failed: it started badly, died, or broke the protocol (IE)."""


class BaselineRunner:
    """A RunnerSession that holds only the baseline; its failures become `BaselineFailed`."""

    def __init__(self, session: RunnerSession) -> None:
        self.session = session

    def __enter__(self) -> BaselineRunner:
        with self._judges_fault("start"):
            self.session.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.session.__exit__(*exc)

    def set_case(self, case: Case, timeout_s: float) -> None:
        with self._judges_fault(f"set case {case.name}"):
            self.session.set_case(case, timeout_s)

    def call(self, lib: str, seed: int, *, timeout_s: float, recheck_ms: int = 0) -> CallOutcome:
        with self._judges_fault("run a call"):
            return self.session.call(lib, seed, timeout_s=timeout_s, recheck_ms=recheck_ms)

    @staticmethod
    @contextlib.contextmanager
    def _judges_fault(doing: str) -> Iterator[None]:
        try:
            yield
        except (RunnerDied, RunnerFailed, RunnerStartFailed, ProtocolViolation) as exc:
            raise BaselineFailed(f"the baseline's runner failed to {doing}: {exc}") from exc
