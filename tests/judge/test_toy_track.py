"""Adding a backend is adding a track's folder and nothing else (judge/tracks/__init__.py).

The toy track is written here into a temporary folder: a host-CPU track named `toycpu` that reuses
the CPU track's runtime, toolchain, policy and doctor checks by importing them from judge.tracks.cpu,
with its own name, file types, queue, seal decisions and host settings. Registered, its name is a backend
everywhere, and a kernel is judged through it. Nothing outside the temporary folders is written:
were any other file needed, this test could not pass. Problem packages name the backends they have
cases and reference kernels for, so the test copies add_mul_relu's package beside the track and
gives it `toycpu` cases and baseline: the CPU ones, reference_kernels/add_mul_relu/cpu/baseline.cpp.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from api.store.similarity import ReviewDocument
from api.web.pages.devices import DevicePeaks, device_peaks
from judge import cli
from judge.backends import EXTRA_TRACKS_VARIABLE, Backend, CaseSet
from judge.baseline_preflight import BaselineCheckReport, check_baselines, plan
from judge.baseline_trust import VENDOR_MODULE
from judge.doctor import doctor_report
from judge.engine import JudgeRequest, judge_submission
from judge.errors import SubmissionFormatError
from judge.host import host_from_env
from judge.host_config import HostConfig
from judge.limits import CPU_LIMITS
from judge.modes import RunMode
from judge.problem import load_problem
from judge.sandbox.seal import RuntimeRule
from judge.submission import check_name, make_sources, source_suffixes
from judge.track_settings import NoSettings, overridable
from judge.track_settings.cpu import CpuSettings
from judge.tracks import Track, find_track_by_queue, get_track, register_track, unregister_track
from judge.verdict import Verdict
from tests.judge.conftest import least_timing
from workers.context import pin_device
from workers.hostinfo import probe
from workers.similarity_job import boilerplate_of, compare_documents, source_language

ROOT = Path(__file__).resolve().parents[2]

TOY_INIT = '''"""toycpu: the host CPU under another name (a test's track)."""

from __future__ import annotations

import dataclasses

from judge.backends import Backend
from judge.tracks import HostReport, Track
from judge.tracks import cpu

from .seal import DECISIONS
from .settings import ToySettings
from .vendor import python_baseline


def doctor_checks(host):
    return [*cpu.TRACK.doctor_checks(host), ("toy kit", lambda: "toykit 1.0")]


TRACK = Track(
    backend=Backend("toycpu"),
    limits=cpu.TRACK.limits,
    make_toolchain=cpu.TRACK.make_toolchain,
    make_runtime=cpu.TRACK.make_runtime,
    runtime_options=cpu.TRACK.runtime_options,
    device_nodes=lambda host: [],
    runner_env=cpu.TRACK.runner_env,
    readonly_paths=cpu.TRACK.readonly_paths,
    host_clock=False,  # as tests/judge/conftest.py's no_forged_timer_check: the host's load must not decide
    policy_rules=dataclasses.replace(cpu.TRACK.policy_rules, source_suffixes=frozenset({".cxx", ".hxx"})),
    seal_decisions=DECISIONS,
    settings=ToySettings,
    python_baseline=python_baseline,
    profiler=cpu.profile_case,
    doctor_checks=doctor_checks,
    source_language="c",
    pin_environment=lambda device: {"TOY_VISIBLE_BOARDS": device},
    vendor_release=lambda options: ("ToyKit", "1.2"),
    known_peaks=lambda device, same_host: (2e12, 5e10, "the toy board's manual") if device == "toy board" else None,
    host_report=HostReport(toolchain="toy kit", device_probe=lambda: "a toy board",
                           driver_probe=lambda: "toy driver 2"),
)
'''

TOY_SEAL = '''"""toycpu's runtime rules: all but the signal handlers' (to tell its seal from the CPU track's)."""

from judge.sandbox.seal import RuntimeRule
from judge.sandbox.seal_tracks import Decision, Status

DECISIONS = tuple(
    Decision(rule, Status.STATIC_ONLY if rule is RuntimeRule.SIGNAL_HANDLERS else Status.RUNTIME,
             "the toy track runs the CPU track's runtime, which bears every rule; one is left out to show it")
    for rule in RuntimeRule
)
'''


TOY_SETTINGS = '''"""toycpu's host settings: declared in its own folder, read from the environment by the host."""

from dataclasses import dataclass
from typing import ClassVar

from judge.track_settings.base import TrackSettings, setting


@dataclass(frozen=True)
class ToySettings(TrackSettings):
    track: ClassVar[str] = "toycpu"

    board: str = setting("board0", env="OPJUDGE_TOYCPU_BOARD", overridable=True, meaning="the toy board judged on")
'''


# Its vendor operator, called through Python where the problem's reference folder has an adapter for
# toycpu: torch's own add, multiply and ReLU on the host.
TOY_PYTHON_BASELINE = '''"""toycpu's vendor operator for add_mul_relu (a test's)."""

import torch


class ToyAddMulRelu:
    name = "toy.add_mul_relu"

    def unsupported_reason(self, params, dtype, flags=()):
        return None

    def prepare(self, inputs, scalars):
        return {"x": inputs["x"]}

    def run(self, prepared):
        self.y = torch.relu((prepared["x"] + 1) * 2)
        return 0

    def outputs(self):
        return {"y": self.y}


def python_baseline(reference_dir, problem, options):
    adapter = reference_dir / problem / "toycpu" / "vendor_baseline.py"
    return ToyAddMulRelu() if problem == "add_mul_relu" and adapter.is_file() else None
'''


def _toy_problem(problems: Path) -> Path:
    """add_mul_relu's package with `toycpu` cases (the CPU ones) and baseline (the CPU one)."""
    folder = problems / "add_mul_relu"
    shutil.copytree(ROOT / "problems/add_mul_relu", folder, ignore=shutil.ignore_patterns("__pycache__"))
    toml = folder / "problem.toml"
    text = toml.read_text()
    text = text.replace('backends = ["cpu", "cuda", "npu"]', 'backends = ["cpu", "cuda", "npu", "toycpu"]')
    text = text.replace('cpu = "cpu/baseline.cpp"\n', 'cpu = "cpu/baseline.cpp"\ntoycpu = "cpu/baseline.cpp"\n')
    cpu_cases = re.search(r"\[cases\.cpu\]\n(.*?)(?=\n\[cases\.)", text, re.S)
    assert cpu_cases is not None
    toml.write_text(text + "\n[cases.toycpu]\n" + cpu_cases.group(1) + "\n")
    return problems


@pytest.fixture
def toy(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "tracks" / "toycpu"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(TOY_INIT)
    (folder / "seal.py").write_text(TOY_SEAL)
    (folder / "settings.py").write_text(TOY_SETTINGS)
    (folder / "vendor.py").write_text(TOY_PYTHON_BASELINE)
    register_track(folder)
    try:
        yield folder
    finally:
        unregister_track("toycpu")


def test_before_it_is_registered_toycpu_is_no_backend() -> None:
    with pytest.raises(ValueError, match="registered backends are cpu, cuda, npu"):
        Backend("toycpu")


def test_a_registered_track_is_a_backend_everywhere(toy: Path) -> None:
    backend = Backend("toycpu")
    assert backend in Backend and backend in list(Backend)
    track = get_track(backend)
    assert track.backend is backend
    # Its own file types, for the upload and the page's picker (one list, the policy's).
    assert source_suffixes(backend) == (".cxx", ".hxx")
    assert check_name("kernel.cxx", backend) == "kernel.cxx"
    with pytest.raises(SubmissionFormatError, match="for the toycpu backend: accepted are .cxx, .hxx"):
        check_name("kernel.cpp", backend)
    # Its own queue, found back from the name.
    assert track.queue_name() == "judge.toycpu"
    found = find_track_by_queue("judge.toycpu")
    assert found is not None and found.backend is backend
    # Its own seal decisions.
    assert RuntimeRule.SIGNAL_HANDLERS not in track.runtime_rules
    assert set(track.runtime_rules) == set(RuntimeRule) - {RuntimeRule.SIGNAL_HANDLERS}
    # The doctor asks it for its checks.
    checks = [c for c in doctor_report(HostConfig(work_root=toy.parent)) if c.area == "toycpu"]
    assert [c.name for c in checks] == ["compiler", "openmp", "toy kit"]
    # The runner child, whose environment starts empty, finds the track's folder.
    host = HostConfig(work_root=toy.parent, limits=track.limits)
    assert str(toy.resolve()) in track.runner_env(host).values()
    assert toy.resolve() in track.readonly_paths(host)


def test_a_host_is_built_from_the_environment_with_its_settings(toy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    backend = Backend("toycpu")
    toy_settings = get_track(backend).settings
    assert "toycpu_board" in overridable()
    environ = {"OPJUDGE_TOYCPU_BOARD": "board7", "OPJUDGE_CPU_FLUSH": "lines"}
    host = host_from_env(environ, backend=backend, work_root=toy.parent)
    assert host.track_settings(toy_settings).board == "board7"
    assert host.track_settings(CpuSettings).flush == "lines"  # every track's, as `opjudge doctor` checks them
    organised = host_from_env(environ, backend=backend, work_root=toy.parent, competition={"toycpu_board": "board9"})
    assert organised.track_settings(toy_settings).board == "board9"
    # The CLI's host, from its own environment.
    monkeypatch.setenv("OPJUDGE_TOYCPU_BOARD", "board3")
    cli_host = cli.host_config(backend=backend, sandbox="auto", cache_dir=None, work_root=toy.parent)
    assert cli_host.track_settings(toy_settings).board == "board3"
    assert cli_host.limits == get_track(backend).limits


def test_the_command_line_names_a_track_from_outside_judge_tracks(toy: Path) -> None:
    """`opjudge` with the toy's folder in OPJUDGE_EXTRA_TRACKS: its help and its errors name the backend, and
    the doctor, whose one host judges nothing, checks it with the others."""
    env = {**os.environ, EXTRA_TRACKS_VARIABLE: str(toy), "COLUMNS": "200"}

    def opjudge(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "judge", *args], capture_output=True, text=True, timeout=300,
                              cwd=ROOT, env=env)

    assert "cpu, cuda, npu, toycpu" in opjudge("judge", "--help").stdout
    refused = opjudge("judge", "--problem", "add_mul_relu", "--backend", "tpu", str(toy / "__init__.py"))
    assert refused.returncode == 2 and "backends: cpu, cuda, npu, toycpu" in refused.stderr, refused.stderr
    doctor = opjudge("doctor")
    assert "toy kit" in doctor.stdout and "toykit 1.0" in doctor.stdout, doctor.stdout + doctor.stderr


def test_a_track_without_settings_has_the_empty_record() -> None:
    assert get_track(Backend.CPU).settings is CpuSettings
    assert Track.__dataclass_fields__["settings"].default is NoSettings
    assert NoSettings.declared() == {}


def test_a_worker_reports_the_toolchain_device_and_driver_its_track_names(toy: Path) -> None:
    info = probe(Backend("toycpu"), HostConfig(work_root=toy.parent))
    assert info["toycpu.toy kit"] == "toykit 1.0"
    assert (info["toolchain"], info["device"], info["driver"]) == ("toykit 1.0", "a toy board", "toy driver 2")


def test_a_worker_pinned_to_a_device_sets_what_its_track_says(toy: Path) -> None:
    env = {"PATH": "/usr/bin"}
    assert pin_device(Backend("toycpu"), "4", env) == {"TOY_VISIBLE_BOARDS": "4"}
    assert env == {"PATH": "/usr/bin", "TOY_VISIBLE_BOARDS": "4"}
    assert pin_device(Backend("toycpu"), None, env) == {}


def test_machine_review_reads_its_sources_in_the_tracks_language(toy: Path) -> None:
    pytest.importorskip("copydetect")
    assert source_language(Backend("toycpu")) == "c"
    kernel = (ROOT / "reference_kernels/add_mul_relu/cpu/baseline.cpp").read_text()
    docs = [ReviewDocument(submission_id=n, team_id=n, problem="add_mul_relu", backend=Backend("toycpu"),
                           files=[("kernel.cxx", kernel)]) for n in (1, 2)]
    pairs, compared = compare_documents(docs, boilerplate_of([], {"c"}), 0.5)
    assert compared == 1 and [(p.submission_a, p.submission_b) for p in pairs] == [(1, 2)]


def test_the_report_chart_takes_the_roofs_its_track_knows(toy: Path) -> None:
    toy_backend = Backend("toycpu")
    toy_roofs = DevicePeaks(2000.0, 50.0, "the toy board's manual")
    assert device_peaks({}, backend=toy_backend, device="toy board") == toy_roofs
    assert device_peaks({}, backend=toy_backend, device="another board").gflops is None
    recorded = {"conditions": {"peak_flops": 3e12}}
    assert device_peaks(recorded, backend=toy_backend, device="toy board").source == "as recorded by the worker"
    h200 = device_peaks({}, backend=Backend.CUDA, device="NVIDIA H200")
    assert h200.gflops and h200.gflops > 1000 and "datasheet" in h200.source
    here = device_peaks({"host": platform.node()}, backend=Backend.CPU, device=None)
    assert here.gflops and "CPU ceiling" in here.source
    assert device_peaks({"host": "elsewhere"}, backend=Backend.CPU, device=None).gflops is None


# A vendor operator's adapter whose contract holds at ToyKit 1.2 only (judge/baseline_trust.py reads it).
TOY_VENDOR = '''def unsupported_reason(params, dtype, flags, cann_version=None):
    return None if cann_version == "1.2" else f"no contract for release {cann_version}"
'''


def test_the_baselines_plan_follows_the_vendor_release_its_track_names(toy: Path, tmp_path: Path) -> None:
    problems = _toy_problem(tmp_path / "problems")
    problem = load_problem("add_mul_relu", problems, ROOT / "reference_kernels")
    reference = tmp_path / "reference_kernels"
    (reference / "add_mul_relu" / "toycpu").mkdir(parents=True)
    (reference / "add_mul_relu" / "toycpu" / VENDOR_MODULE).write_text(TOY_VENDOR)
    host = HostConfig(work_root=tmp_path, reference_dir=reference)
    planned = plan(problem, Backend("toycpu"), host, vendor_name="toy.add_mul_relu")
    assert planned and {c.baseline for c in planned} == {"toy.add_mul_relu"}
    report = BaselineCheckReport(problem="add_mul_relu", backend="toycpu", vendor_release="ToyKit 1.2")
    assert report.render().startswith("baselines of add_mul_relu on toycpu (ToyKit 1.2)")


def test_the_run_names_the_vendor_operator_by_the_release_its_track_names(toy: Path, tmp_path: Path) -> None:
    """The run asks the track which vendor release the adapter's contract is for (ToyKit 1.2 here): the
    toy's runtime options name none, and the adapter takes release 1.2 only."""
    problems = _toy_problem(tmp_path / "problems")
    toml = problems / "add_mul_relu" / "problem.toml"  # its baseline kernel in the toy's file type, for the doctor
    toml.write_text(toml.read_text().replace('toycpu = "cpu/baseline.cpp"', 'toycpu = "toycpu/baseline.cxx"'))
    reference = tmp_path / "reference_kernels"
    adapter = reference / "add_mul_relu" / "toycpu"
    adapter.mkdir(parents=True)
    (adapter / VENDOR_MODULE).write_text(TOY_VENDOR)
    baseline = (ROOT / "reference_kernels/add_mul_relu/cpu/baseline.cpp").read_bytes()
    (adapter / "baseline.cxx").write_bytes(baseline)
    problem = load_problem("add_mul_relu", problems, reference)
    backend = Backend("toycpu")
    request = JudgeRequest(problem=problem, backend=backend, mode=RunMode.BENCHMARK, case_sets=(CaseSet.BENCHMARKS,),
                           sources=make_sources([("kernel.cxx", baseline)], CPU_LIMITS, backend))
    work = tmp_path / "work"
    work.mkdir()
    result = judge_submission(request, host=HostConfig(work_root=work, limits=least_timing(CPU_LIMITS),
                                                       sandbox_mode="auto", reference_dir=reference))
    assert result.verdict is Verdict.AC, result.message
    assert result.conditions.python_baseline == "toy.add_mul_relu"
    assert "baseline_python_baseline" not in result.host  # the conditions hold it (judge/conditions.py)
    assert result.cases and {c.baseline for c in result.cases} == {"toy.add_mul_relu"}
    # `opjudge doctor --baselines` plans by the operator the run's conditions name.
    report = check_baselines(problem, backend, HostConfig(work_root=work, limits=least_timing(CPU_LIMITS),
                                                          reference_dir=reference))
    assert report.ok, report.render()
    assert report.planned and {c.baseline for c in report.planned} == {"toy.add_mul_relu"}


def test_a_kernel_is_judged_through_the_toy_track(toy: Path, tmp_path: Path) -> None:
    problems = _toy_problem(tmp_path / "problems")
    problem = load_problem("add_mul_relu", problems, ROOT / "reference_kernels")
    baseline = (ROOT / "reference_kernels/add_mul_relu/cpu/baseline.cpp").read_bytes()
    backend = Backend("toycpu")
    request = JudgeRequest(problem=problem, backend=backend, mode=RunMode.TEST,
                           sources=make_sources([("kernel.cxx", baseline)], CPU_LIMITS, backend))
    work = tmp_path / "work"
    work.mkdir()
    result = judge_submission(request, host=HostConfig(work_root=work, limits=CPU_LIMITS, sandbox_mode="auto",
                                                       reference_dir=ROOT / "reference_kernels"))
    assert result.verdict is Verdict.AC, result.message
    assert result.backend == "toycpu"
    assert [c.name for c in result.cases] == [c.name for c in problem.cases_for(Backend.CPU) if not c.case_set.timed]
