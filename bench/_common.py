"""Helpers shared by the benchmarks: judge a file in-process and return the result."""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path
from typing import Any

from judge.backends import Backend, CaseSet
from judge.engine import JudgeRequest, judge_submission
from judge.host_config import HostConfig
from judge.problem import load_problem
from judge.results import JudgeResult
from judge.submission import read_sources
from judge.tracks import get_track

REPO_ROOT = Path(__file__).resolve().parent.parent
SFA_BASELINE = REPO_ROOT / "reference_kernels/sparse_flash_attention_grad/cpu/baseline.cpp"


def judge_file(path: Path, *, problem: str = "sparse_flash_attention_grad", sets: tuple[CaseSet, ...],
               sandbox: str = "auto", cache_dir: Path | None = None, secret: bytes = b"bench",
               memory_cgroup: str = "auto", **limit_overrides: Any) -> JudgeResult:
    """Judge one source file on the CPU track; `limit_overrides` replace fields of its Limits."""
    limits = dataclasses.replace(get_track(Backend.CPU).limits, **limit_overrides)
    request = JudgeRequest(problem=load_problem(problem), backend=Backend.CPU,
                           sources=read_sources([path], limits), case_sets=sets, secret=secret)
    with tempfile.TemporaryDirectory(prefix="opjudge-bench-") as work:
        host = HostConfig(work_root=Path(work), limits=limits, sandbox_mode=sandbox, cache_dir=cache_dir,
                          memory_cgroup=memory_cgroup)
        return judge_submission(request, host=host)
