"""Fixtures shared by the judge's tests."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from judge import pipeline
from judge.backends import Backend
from judge.limits import CPU_LIMITS, Limits
from judge.tracks import Track

ADD_MUL_RELU_CPU_BASELINE = Path(__file__).parents[2] / "reference_kernels/add_mul_relu/cpu/baseline.cpp"


def judge_add_mul_relu_quickly(tmp_path: Path, mode: object) -> object:
    """add_mul_relu's CPU baseline judged in this process in `mode`, with the least timing, sandbox off."""
    from judge.engine import JudgeRequest, judge_submission
    from judge.host_config import HostConfig
    from judge.problem import load_problem
    from judge.submission import read_sources

    request = JudgeRequest(problem=load_problem("add_mul_relu"), backend=Backend.CPU,
                           sources=read_sources([ADD_MUL_RELU_CPU_BASELINE], CPU_LIMITS), mode=mode)  # type: ignore[arg-type]
    host = HostConfig(work_root=tmp_path / "work", limits=least_timing(CPU_LIMITS), sandbox_mode="off",
                      cache_dir=tmp_path / "cache")
    return judge_submission(request, host=host)


def least_timing(limits: Limits) -> Limits:
    """`limits` with the least timing the judge allows (0.2 s per case, as tests/e2e runs it, and a
    few calls): for tests of a report's shape, not of its figures' precision."""
    return dataclasses.replace(limits, case_time_budget_s=0.2, min_timed_calls=4, min_warmup_calls=1,
                               min_warmup_s=0.0, min_checked_calls=1)


@pytest.fixture
def no_forged_timer_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CPU track without its forged-timer check (`Track.host_clock`), for judging in this process.

    That check holds the child's times against the worker's own clock, and on a loaded host an
    honest baseline's gap has crossed its allowance (CI called honest baselines SV). Tests of an
    honest kernel's report must not hang on the host's load; the check itself is tested on
    scripted times (tests/judge/test_case_timing.py) and by the exploit corpus, which keeps it on.
    """
    real = pipeline.get_track

    def get_track(backend: Backend) -> Track:
        track = real(backend)
        return dataclasses.replace(track, host_clock=False) if backend is Backend.CPU else track

    monkeypatch.setattr(pipeline, "get_track", get_track)
