"""What one runner child is started with (`RunnerSession(spec)`): one frozen record.

The children of one run (the submission's, the baseline's, the private cases', a profiled one)
differ in a few fields only: the libraries, the folder, the environment, the profiler's prefix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.problem import Problem
from judge.sandbox.base import Bind, Sandbox, SandboxLimits
from judge.sandbox.memcg import CgroupRoot

REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class SessionSpec:
    sandbox: Sandbox
    problem: Problem
    backend: str
    libraries: dict[str, Path]  # by role ("submission", "baseline"): what the child loads
    reference_dir: Path
    runtime_options: dict[str, Any]
    workdir: Path  # the child's own folder (writable, its HOME)
    sandbox_limits: SandboxLimits
    env: dict[str, str]
    workspace_limit_bytes: int
    stdout_limit_bytes: int  # of the kernel's stdout and stderr, each: the rest is dropped
    lockdown: bool  # the child seals itself before loading the libraries (judge/sandbox/seal.py)
    runtime_rules: tuple[str, ...] = ()
    readonly_paths: tuple[Path, ...] = ()  # bound read-only besides the judge and the problems
    python_baseline: bool = False  # the baseline is the vendor's Python operator (judge/runner/baseline_session.py)
    generation_device: str = "cpu"
    deterministic: bool = False
    startup_timeout_s: float = 120.0
    # The page reads and the checks after each call (judge/runner/child/guard.py); off only to measure
    # what they cost (HostConfig.call_guard = False, bench/timing_stability.py).
    call_guard: bool = True
    command_prefix: tuple[str, ...] = ()  # a profiler the child runs under (ncu, msprof op)
    # The host's memory cgroups (judge/sandbox/memcg.py): the child gets a group of its own at launch.
    memory_root: CgroupRoot | None = field(default=None, compare=False)
    # Of the group's limit, what the judge's own runtime holds (the CPU flush buffer): the team's
    # limit is the rest, and an MLE names that (judge/limits.py, `child_memory_limit_mib`).
    judge_memory_mib: int = 0

    def binds(self) -> list[Bind]:
        """What the sandbox shows the child: its folder (writable), the judge, the problems, the
        libraries' folders outside its folder, and the read-only paths."""
        binds = [Bind(self.workdir, self.workdir, writable=True), Bind(REPO_ROOT / "judge", REPO_ROOT / "judge"),
                 Bind(self.problem.root.parent, self.problem.root.parent)]
        binds += [Bind(p.parent, p.parent) for p in self.libraries.values() if not p.is_relative_to(self.workdir)]
        return binds + [Bind(p, p) for p in self.readonly_paths]
