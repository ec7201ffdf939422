"""The engine's entry point: judge one submission from sources to a `JudgeResult`."""

from __future__ import annotations

from judge.host_config import HostConfig
from judge.pipeline import run_pipeline
from judge.request import JudgeRequest, Reporter, SilentReporter
from judge.results import JudgeResult

__all__ = ["JudgeRequest", "Reporter", "SilentReporter", "judge_submission"]


def judge_submission(
    request: JudgeRequest, *, host: HostConfig, reporter: Reporter | None = None
) -> JudgeResult:
    """Policy check, build, correctness, timing and scoring of one submission.

    Never raises for anything the submission did: that is a verdict. Raises
    only `JudgeError` subclasses for misuse (unknown backend on this host).
    """
    return run_pipeline(request, host=host, reporter=reporter or SilentReporter())
