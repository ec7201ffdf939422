"""The device tracks' profilers (docs/profiles.md): the seam runs one untimed pass of a public case in
a fresh child started under the tool's command line, and says why not where the tool is missing.

Nsight Compute and msprof cannot run here: their command lines and parsers are
judge/tracks/cuda/ncu.py's and judge/tracks/npu/msprof_op.py's, stood in for by fakes; the pass
under a prefix itself is real (a CPU child under `env`, through the whole pipeline)."""

from __future__ import annotations

import dataclasses
import os
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from judge.backends import Backend, CaseSet
from judge.engine import JudgeRequest, judge_submission
from judge.host_config import HostConfig
from judge.limits import CPU_LIMITS
from judge.modes import RunMode
from judge.problem import DEFAULT_REFERENCE_DIR, Case, load_problem
from judge.profiling import Metric, ProfileSection
from judge.profiling import passes as profile_passes
from judge.profiling.context import ProfileContext
from judge.profiling.device import run_folder
from judge.seeds import fresh_seed
from judge.threadprofile import busiest_process
from judge.toolchains.base import SourceFile
from judge.tracks.cuda import profile as cuda_profile
from judge.tracks.npu import profile as npu_profile
from judge.tracks.npu.project import KERNEL_NAMES_FILE
from judge.verdict import Verdict
from tests.judge.conftest import least_timing

CASE = Case(name="b01", case_set=CaseSet.BENCHMARKS, dtype="float32", seed=1, flags=(), params={"n": 8})


class _Child:
    """Stands in for a runner child started under a tool: the "tool" writes its report on exit."""

    def __init__(self, prefix: list[str], folder: Path, on_exit: Any) -> None:
        self.prefix, self.folder, self.on_exit, self.calls = prefix, folder, on_exit, 0

    def __enter__(self) -> _Child:
        return self

    def __exit__(self, *exc: object) -> None:
        self.on_exit(self)

    def set_case(self, case: Case, timeout_s: float) -> None:
        assert case is CASE and timeout_s >= 10.0

    def call(self, lib: str, seed: int, *, timeout_s: float) -> None:
        # Fresh content, as in timing: never the case seed (7) that the checks already used.
        assert lib == "submission" and seed != 7 and isinstance(seed, int)
        self.calls += 1


class _Session:
    """The submission's child as the NPU seam reads it: where its library is (the build's kernel names beside)."""

    def __init__(self, library: Path) -> None:
        self.libraries = {"submission": library}


def _context(tmp_path: Path, on_exit: Any, started: list[_Child]) -> ProfileContext:
    def start(prefix: list[str], folder: Path) -> Any:
        started.append(_Child(prefix, folder, on_exit))
        return started[-1]

    session = _Session(tmp_path / "kernel.so")
    return ProfileContext(case=CASE, session=session, threads=2, call_timeout_s=10.0,  # type: ignore[arg-type]
                          budget_s=1.0, folder=tmp_path, start_runner=start)  # fmt: skip


def _fake_module(monkeypatch: pytest.MonkeyPatch, name: str, **functions: Any) -> None:
    module = types.ModuleType(name)
    for key, value in functions.items():
        setattr(module, key, value)
    monkeypatch.setitem(sys.modules, name, module)


def test_without_the_tools_parser_or_binary_the_section_says_why(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "judge.tracks.cuda.ncu", None)  # importing it raises ImportError
    monkeypatch.setitem(sys.modules, "judge.tracks.npu.msprof_op", None)
    ctx = _context(tmp_path, lambda child: None, [])
    assert "no Nsight Compute support" in cuda_profile.profile_case(ctx)[0].reason
    assert "no msprof op support" in npu_profile.profile_case(ctx)[0].reason
    _fake_module(monkeypatch, "judge.tracks.cuda.ncu", ncu_prefix=lambda *a: ["ncu"], parse_ncu_csv=lambda t: None)
    monkeypatch.setattr(cuda_profile, "tool_path", lambda name: None)
    [section] = cuda_profile.profile_case(ctx)
    assert (section.tool, section.available, section.reason) == ("ncu", False, "ncu is not installed on this worker")


def test_ncu_runs_one_pass_under_its_prefix_and_its_csv_is_parsed(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[Any, Path]] = []

    def ncu_prefix(kernel_regex: str | None, out_path: Path, launch_count: int) -> list[str]:
        assert launch_count == cuda_profile.LAUNCH_COUNT
        asked.append((kernel_regex, out_path))
        return ["ncu", "--csv", "--log-file", str(out_path)]

    def parse_ncu_csv(text: str) -> ProfileSection:
        return ProfileSection("ncu", True, metrics=(Metric("rows", len(text.splitlines())),))

    _fake_module(monkeypatch, "judge.tracks.cuda.ncu", ncu_prefix=ncu_prefix, parse_ncu_csv=parse_ncu_csv)
    monkeypatch.setattr(cuda_profile, "tool_path", lambda name: "/opt/nvidia/ncu")
    started: list[_Child] = []
    ctx = _context(tmp_path, lambda child: Path(child.prefix[-1]).write_text('"ID","Kernel Name"\n"0","k"\n'), started)
    [section] = cuda_profile.profile_case(ctx)
    assert section.available and section.metrics[0].value == 2
    [child] = started
    assert child.prefix[0] == "/opt/nvidia/ncu" and child.calls == 1  # the tool's full path: no PATH in the sandbox
    assert asked[0][1].parent == child.folder == run_folder(ctx)  # its report is where the child may write


def test_msprof_op_runs_one_pass_with_its_launch_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[Any, ...]] = []
    _fake_module(monkeypatch, "judge.tracks.npu.msprof_op",
                 msprof_op_prefix=lambda name, out_dir, count: asked.append((name, out_dir, count)) or ["msprof", "op"],
                 parse_msprof_op_dir=lambda path: ProfileSection("msprof", True, raw_name=str(path)))  # fmt: skip
    monkeypatch.setattr(npu_profile, "tool_path", lambda name: "/usr/local/Ascend/bin/msprof")
    monkeypatch.setattr("judge.profiling.device.LOCK_DIR", tmp_path)
    started: list[_Child] = []
    [section] = npu_profile.profile_case(_context(tmp_path, lambda child: None, started))
    assert not section.available and "no kernel names" in section.reason and not started  # none recorded
    (tmp_path / KERNEL_NAMES_FILE).write_text("sfag_zero\nsfag_main\nsfag_finalize\n")  # what the build writes
    [section] = npu_profile.profile_case(_context(tmp_path, lambda child: None, started))
    assert started[0].prefix == ["/usr/local/Ascend/bin/msprof", "op"] and started[0].calls == 1
    out_dir = run_folder(_context(tmp_path, None, [])) / "msprof"
    assert asked == [("sfag_zero|sfag_main|sfag_finalize", out_dir, npu_profile.LAUNCH_COUNT)]
    assert section.raw_name == str(asked[0][1])


def test_the_cuda_seam_asks_ncu_for_every_kernel_of_the_call(tmp_path: Path) -> None:
    from judge.tracks.cuda.ncu import ncu_prefix

    argv = ncu_prefix(cuda_profile.KERNEL_REGEX, tmp_path / "ncu.csv", cuda_profile.LAUNCH_COUNT)
    assert "--kernel-name" not in argv and str(tmp_path / "ncu.csv") in argv
    assert argv[argv.index("--launch-count") + 1] == str(cuda_profile.LAUNCH_COUNT)


def test_the_npu_seam_asks_msprof_op_for_a_name_it_accepts(tmp_path: Path) -> None:
    """The seam's arguments through the real command builder (it refuses an empty kernel name)."""
    from judge.tracks.npu.msprof_op import msprof_op_prefix

    (tmp_path / KERNEL_NAMES_FILE).write_text("add_custom\nadd_custom\nsfag_main\n")
    names = npu_profile.kernel_filter(tmp_path / "kernel.so")
    assert names == "add_custom|sfag_main"
    argv = msprof_op_prefix(names, tmp_path, npu_profile.LAUNCH_COUNT)
    assert argv[:2] == ["msprof", "op"] and f"--launch-count={npu_profile.LAUNCH_COUNT}" in argv
    assert f"--kernel-name={names}" in argv and f"--output={tmp_path}" in argv


@pytest.mark.slow
def test_a_fresh_child_runs_a_public_case_under_a_command_prefix(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The seam end to end on the CPU: `env` stands in for the tool, in the sandbox the run uses."""

    def under_env(ctx: ProfileContext) -> list[ProfileSection]:
        with ctx.start_runner(["/usr/bin/env", "OPJUDGE_UNDER_TOOL=1"], run_folder(ctx)) as child:
            child.set_case(ctx.case, timeout_s=ctx.call_timeout_s)
            outcome = child.call("submission", fresh_seed(), timeout_s=ctx.call_timeout_s)
            assert child.process_id is not None
            environ = Path(f"/proc/{busiest_process(child.process_id)}/environ").read_bytes()
        return [ProfileSection("env", True, metrics=(Metric("rc", outcome.rc),
                                                     Metric("under", int(b"OPJUDGE_UNDER_TOOL=1" in environ))))]

    monkeypatch.setattr(profile_passes, "track_profiler", lambda backend: under_env)
    baseline = DEFAULT_REFERENCE_DIR / "add_mul_relu" / "cpu" / "baseline.cpp"
    request = JudgeRequest(problem=load_problem("add_mul_relu"), backend=Backend.CPU,
                           sources=[SourceFile("kernel.cpp", baseline.read_bytes())],
                           case_sets=(CaseSet.TESTS, CaseSet.BENCHMARKS), secret=b"seam", mode=RunMode.BENCHMARK)
    host = HostConfig(work_root=tmp_path / "work", cache_dir=tmp_path / "cache",
                      limits=dataclasses.replace(least_timing(CPU_LIMITS), threads=2),
                      sandbox_mode=os.environ.get("OPJUDGE_TEST_SANDBOX", "auto"))  # fmt: skip
    result = judge_submission(request, host=host)
    assert result.verdict is Verdict.AC, result.message
    assert len(result.profiles) == 2
    for profile in result.profiles:
        [section] = profile["sections"]
        assert {m["name"]: m["value"] for m in section["metrics"]} == {"rc": 0, "under": 1}, section
