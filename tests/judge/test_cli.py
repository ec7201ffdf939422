"""`opjudge judge` and `opjudge problems` as a person runs them."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import pytest

from judge import cli
from judge.backends import Backend
from judge.tracks import Track
from tests.conftest import REPO_ROOT
from tests.judge.conftest import least_timing

AMR_BASELINE = REPO_ROOT / "reference_kernels/add_mul_relu/cpu/baseline.cpp"
AMR_CE = REPO_ROOT / "tests/submissions/add_mul_relu/cpu/ce_missing_semicolon.cpp"


def opjudge(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="160")
    return subprocess.run([sys.executable, "-m", "judge", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=REPO_ROOT, env=env)


def test_problems_lists_both_with_counts():
    out = opjudge("problems")
    assert out.returncode == 0
    assert "sparse_flash_attention_grad" in out.stdout and "add_mul_relu" in out.stdout
    assert "tests 12" in out.stdout or "tests" in out.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--problem", "no_such_problem", str(AMR_BASELINE)], "unknown problem"),
        (["--problem", "add_mul_relu", "missing.cpp"], "no such file"),
        (["--problem", "add_mul_relu", "--cases", "some", str(AMR_BASELINE)], "--cases"),
        (["--problem", "add_mul_relu", "--backend", "tpu", str(AMR_BASELINE)], "unknown backend"),
    ],
)
def test_usage_errors_exit_2_with_one_line(args, needle):
    out = opjudge("judge", *args)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], out.stderr


@pytest.fixture
def quick_timing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's CPU limits with the least timing: this file checks the report's shape."""
    real = cli.get_track

    def get_track(backend: Backend) -> Track:
        track = real(backend)
        return dataclasses.replace(track, limits=least_timing(track.limits))

    monkeypatch.setattr(cli, "get_track", get_track)


@pytest.mark.slow
def test_json_report_of_the_baseline(no_forged_timer_check, quick_timing, capsys):
    # In this process, for the two fixtures: a loaded host can neither call the baseline SV nor
    # make the test slow.
    with pytest.raises(SystemExit) as exited:
        cli.app(["judge", "--problem", "add_mul_relu", "--cases", "all", "--json", str(AMR_BASELINE)])
    out = capsys.readouterr()
    assert exited.value.code in (0, None), out.err
    report = json.loads(out.out)
    assert report["verdict"] == "AC", report["message"]
    assert {"verdict", "problem", "backend", "message", "compile_log", "score", "cases"} <= report.keys()
    timed = [c for c in report["cases"] if c["set"] != "tests"]
    assert timed and all(c["median_ns"] > 0 and c["ratio"] > 0 for c in timed)
    assert all(c["ratio"] is None for c in report["cases"] if c["set"] == "tests")
    for case in report["cases"]:
        assert {"name", "set", "passed", "median_ns", "ratio", "gflops", "outputs"} <= case.keys()
        for output in case["outputs"].values():
            assert {"passed", "max_abs_err", "mere"} <= output.keys()
    # The baseline against itself scores about 100; the bound is generous (ratios 0.05-20 on average),
    # so a loaded host cannot fail it (CI, two test workers and the e2e services on 2 cores, once scored
    # it 22: ratio 4.5) and a broken score (0, negative, NaN, unbounded) still does.
    assert 5 < report["score"] < 2000


@pytest.mark.slow
def test_compile_error_is_judged_not_a_crash():
    out = opjudge("judge", "--problem", "add_mul_relu", "--cases", "tests", "--json", str(AMR_CE))
    assert out.returncode == 0
    report = json.loads(out.stdout)
    assert report["verdict"] == "CE" and "error" in report["compile_log"]


@pytest.mark.slow
def test_readable_report_names_verdict_and_cases():
    out = opjudge("judge", "--problem", "add_mul_relu", "--cases", "tests", str(AMR_BASELINE))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("AC") and "t" in out.stdout and "cases" in out.stdout
