"""Helpers shared by the benchmarks: judge a file in-process and return the result."""

from __future__ import annotations

import dataclasses
import platform
import tempfile
from pathlib import Path
from typing import Any

from judge import hostload
from judge.backends import Backend, CaseSet
from judge.engine import JudgeRequest, judge_submission
from judge.host_config import HostConfig
from judge.problem import load_problem
from judge.results import JudgeResult
from judge.submission import read_sources
from judge.tracks import get_track
from judge.tracks.cpu.doctor import cpu_model
from judge.tracks.cpu.runtime import last_level_cache_bytes

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


class HostRecord:
    """The host a benchmark ran on, printed with its figures (docs/benchmarks.md records every figure
    with its host): CPU model, usable CPUs, last-level cache, kernel, hypervisor, and over the run the
    load averages and the CPU steal (the share of the vCPUs' time the hypervisor gave elsewhere, which
    the judge's disturbed rule also reads)."""

    def __init__(self) -> None:
        self.cpu_before = hostload.cpu_times()
        self.load_before = hostload.load_average()

    @staticmethod
    def describe() -> str:
        llc_mib = last_level_cache_bytes() / 2**20
        return (f"host: {cpu_model()}, last-level cache {llc_mib:.0f} MiB, kernel {platform.release()}, "
                f"{_hypervisor()}")

    def summary(self) -> str:
        steal = hostload.steal_percent(self.cpu_before, hostload.cpu_times())
        steal_text = f"{steal:.1f} %" if steal is not None else "not reported"
        return (f"over the run: load average {self.load_before} at the start, {hostload.load_average()} at the "
                f"end; CPU steal {steal_text} of all CPU time")


def _hypervisor() -> str:
    """Whether /proc/cpuinfo's flags say the CPUs are virtual."""
    try:
        flags = next((line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags")), "")
    except OSError:
        return "hypervisor unknown"
    return "virtual CPUs (hypervisor flag)" if " hypervisor" in flags else "no hypervisor flag"
