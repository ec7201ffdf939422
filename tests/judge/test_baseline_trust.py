"""Every baseline is checked against the oracle on its first call of each case.

On the CPU track with add_mul_relu: a baseline kernel that builds, runs and returns 0 but computes
the wrong thing must never score a run (IE, the reason in the worker's log), and a right one is
named as what timed each case.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import pytest

from judge.backends import Backend, CaseSet
from judge.baseline_trust import BASELINE_KERNEL, BaselineNames, first_call_verifier
from judge.call_check import CallCheck
from judge.engine import JudgeRequest, judge_submission
from judge.host_config import HostConfig
from judge.limits import CPU_LIMITS
from judge.problem import DEFAULT_REFERENCE_DIR, Case, load_problem
from judge.toolchains.base import SourceFile
from judge.verdict import Verdict
from tests.judge.conftest import least_timing

BASELINE = DEFAULT_REFERENCE_DIR / "add_mul_relu" / "cpu" / "baseline.cpp"
# Builds and links like the baseline, returns 0, and writes zeros: wrong wherever y > 0.
WRONG_BASELINE = b"""
#include "add_mul_relu.h"
#include <cstring>
extern "C" int kernel_run(const kernel_args *a) {
    std::memset(a->y, 0, (size_t)a->n * (a->dtype == KERNEL_F32 ? 4 : 2));
    return 0;
}
"""


def _request(reference_dir: Path) -> JudgeRequest:
    problem = load_problem("add_mul_relu", reference_dir=reference_dir)
    return JudgeRequest(problem=problem, backend=Backend.CPU,
                        sources=[SourceFile("kernel.cpp", BASELINE.read_bytes())],
                        case_sets=(CaseSet.TESTS, CaseSet.BENCHMARKS), secret=b"test")


def _host(tmp_path: Path) -> HostConfig:
    # The least timing: what is checked is which baseline timed a case, not the figures.
    return HostConfig(work_root=tmp_path / "work", cache_dir=tmp_path / "cache", limits=least_timing(CPU_LIMITS),
                      sandbox_mode=os.environ.get("OPJUDGE_TEST_SANDBOX", "auto"))


@pytest.mark.slow
def test_a_wrong_baseline_never_scores_a_run(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    reference = tmp_path / "reference_kernels"
    shutil.copytree(DEFAULT_REFERENCE_DIR / "add_mul_relu", reference / "add_mul_relu")
    (reference / "add_mul_relu" / "cpu" / "baseline.cpp").write_bytes(WRONG_BASELINE)
    with caplog.at_level(logging.ERROR, logger="judge.baseline_trust"):
        result = judge_submission(_request(reference), host=_host(tmp_path))
    assert result.verdict is Verdict.IE, result.message
    assert "fails the pass rule" in result.message and BASELINE_KERNEL in result.message
    assert all(c.ratio is None for c in result.cases if c.case_set is CaseSet.BENCHMARKS)  # nothing scored by it
    assert all(c.passed for c in result.cases if c.case_set is CaseSet.TESTS)  # the submission is right
    assert any("fails the pass rule" in r.getMessage() for r in caplog.records)  # the worker's log


@pytest.mark.slow
def test_a_right_baseline_is_named_as_what_timed_each_case(tmp_path: Path) -> None:
    result = judge_submission(_request(DEFAULT_REFERENCE_DIR), host=_host(tmp_path))
    assert result.verdict is Verdict.AC, result.message
    timed = [c for c in result.cases if c.case_set is CaseSet.BENCHMARKS]
    assert timed and all(c.baseline == BASELINE_KERNEL for c in timed)


def _case(name: str = "c1", flags: tuple[str, ...] = ()) -> Case:
    return Case(name=name, case_set=CaseSet.BENCHMARKS, dtype="bfloat16", seed=1, flags=flags,
                params={"B": 1, "S1": 64, "S2": 8192, "N1": 16, "N2": 1, "D": 512, "Dr": 64, "K": 2048,
                        "block_size": 1, "sparse_mode": 3})


def test_only_the_first_call_of_each_case_is_checked() -> None:
    calls: list[str] = []

    def verify(case: Case, seed: int, outcome: object) -> CallCheck:
        calls.append(case.name)
        return CallCheck(Verdict.AC)

    check = first_call_verifier(verify, lambda case: "x")
    for name in ("c1", "c1", "c2", "c1", "c2"):
        assert check(_case(name), 0, object()).verdict is Verdict.AC  # type: ignore[arg-type]
    assert calls == ["c1", "c2"]


def test_the_vendor_operator_is_named_only_inside_its_contract() -> None:
    adapter = DEFAULT_REFERENCE_DIR / "sparse_flash_attention_grad" / "npu"
    names = BaselineNames("torch_npu.npu_sparse_flash_attention_grad", adapter, vendor_release=("CANN", "9.0.0"))
    assert names(_case(flags=("value_is_key",))) == "torch_npu.npu_sparse_flash_attention_grad"
    assert names(_case()) == BASELINE_KERNEL  # v other than k (9.x reads v from k)
    assert names(_case(flags=("value_is_key", "contract_indices"))) == BASELINE_KERNEL
    assert BaselineNames("", adapter)(_case(flags=("value_is_key",))) == BASELINE_KERNEL  # no operator here
    # The contract is the worker's CANN version's: 8.5.0 gathers v on its own (v need not be k) and its
    # tiling takes K = 2048 only.
    pinned = BaselineNames("torch_npu.npu_sparse_flash_attention_grad", adapter, vendor_release=("CANN", "8.5.0"))
    assert pinned(_case()) == "torch_npu.npu_sparse_flash_attention_grad"
    k1024 = _case(flags=("value_is_key",))
    k1024.params["K"] = 1024
    assert pinned(k1024) == BASELINE_KERNEL and pinned.reason(k1024).endswith("(it takes 2048)")
    assert names(k1024) == "torch_npu.npu_sparse_flash_attention_grad"  # 9.x takes it
