"""The CUDA track end to end on a real GPU: every CUDA fixture gets the verdict written beside it.

Runs only where torch sees a GPU (marker `cuda`); the fixtures' case sets come from their .toml.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from judge.backends import Backend, CaseSet
from judge.engine import JudgeRequest, judge_submission
from judge.host_config import HostConfig
from judge.problem import load_problem
from judge.submission import read_sources
from judge.tracks.cuda import CUDA_LIMITS
from tests.judge.fixtures import Fixture, hardware_test_sandbox, load_fixtures

FIXTURES = load_fixtures("cuda")
REPO = Path(__file__).resolve().parents[3]


def test_cuda_corpus_covers_every_kind() -> None:
    assert {"AC", "WA", "CE", "SV"} <= {f.verdict for f in FIXTURES}
    assert any(f.source.stem.startswith("exploit_") for f in FIXTURES)


def _judge(source: Path, problem: str, sets: tuple[str, ...], tmp_path: Path):
    request = JudgeRequest(problem=load_problem(problem), backend=Backend.CUDA,
                           sources=read_sources([source], CUDA_LIMITS),
                           case_sets=tuple(CaseSet(s) for s in sets), secret=b"cuda-test")
    host = HostConfig(work_root=tmp_path, limits=CUDA_LIMITS, cache_dir=tmp_path / "cache",
                      sandbox_mode=hardware_test_sandbox())
    return judge_submission(request, host=host)


@pytest.mark.cuda
@pytest.mark.slow
@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f.id)
def test_cuda_fixture_gets_its_verdict(fixture: Fixture, tmp_path: Path) -> None:
    result = _judge(fixture.source, fixture.problem, fixture.case_sets, tmp_path)
    accepted = {fixture.verdict, *fixture.expect.get("also_accepted", ())}
    assert result.verdict.value in accepted, result.message
    for text in fixture.message_contains:
        assert text in result.message + result.compile_log + str(result.findings), text


@pytest.mark.cuda
@pytest.mark.slow
@pytest.mark.parametrize("problem", ["add_mul_relu", "sparse_flash_attention_grad"])
def test_cuda_baseline_is_accepted_on_the_tests(problem: str, tmp_path: Path) -> None:
    source = REPO / "reference_kernels" / problem / "cuda" / "baseline.cu"
    result = _judge(source, problem, ("tests",), tmp_path)
    assert result.verdict.value == "AC", result.message
    assert (result.conditions.toolchain or "").startswith("nvcc")


# CE and SV are decided before any kernel runs (policy check, nvcc, library check): the engine
# reaches them on this host too, GPU or not.
BUILD_STAGE = [f for f in FIXTURES if f.verdict in ("CE", "SV")]


@pytest.mark.slow
@pytest.mark.skipif(not (Path("/usr/local/cuda/bin/nvcc").is_file() or shutil.which("nvcc")),
                    reason="nvcc is not installed on this host")
@pytest.mark.parametrize("fixture", BUILD_STAGE, ids=lambda f: f.id)
def test_build_stage_verdicts_without_a_gpu(fixture: Fixture, tmp_path: Path) -> None:
    result = _judge(fixture.source, fixture.problem, fixture.case_sets, tmp_path)
    assert result.verdict.value == fixture.verdict, result.message
    for text in fixture.message_contains:
        assert text in result.message + result.compile_log + str(result.findings), text
    assert result.cases == []  # nothing ran
