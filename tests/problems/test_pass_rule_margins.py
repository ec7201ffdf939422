"""The pass rule's margins on fixed seeds: bench/pass_rule_margins.py's machinery on the
riskiest small CPU cases, cheap enough for every run. The bench itself proves the margins over hundreds of
fresh draws; here the figures of a few fixed seeds must stay inside bounds measured with it, with headroom.

Measured with the bench (tests set, 800 fresh draws per case, 2026-12-03): no failure of the baseline or R;
the baseline's worst MERE share 0.21 (t10_custom_scale_dense, float32; 0.29 in 5000 draws) and worst abs
share 0.45 (t11_ragged_bs1, float16); the serial float32 kernel's worst MERE share on t10 0.93 (it failed 3
of 5000 draws there: reported by the bench, not a target). On the fixed seeds here: baseline 0.08 and serial
0.29 (t10 MERE), baseline abs shares 0.43-0.44 (t07, t11).
No timing is asserted anywhere.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch

from judge.backends import Backend, CaseSet
from judge.problem import Case

BENCH = Path(__file__).resolve().parents[2] / "bench" / "pass_rule_margins.py"
SEEDS = [1110, 1, 2, 3]  # fixed: the figures below do not move from run to run

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pass_rule_margins_under_test", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def sfag_subject(bench: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Any:
    threads = min(2, len(os.sched_getaffinity(0)))
    return bench.load_subject("sparse_flash_attention_grad", tmp_path_factory.mktemp("sfag"), threads)


@pytest.fixture(scope="module")
def amr_subject(bench: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Any:
    return bench.load_subject("add_mul_relu", tmp_path_factory.mktemp("amr"), 1)


def _case(subject: Any, name: str) -> Case:
    (case,) = [c for c in subject.problem.cases_for(Backend.CPU, [CaseSet.TESTS]) if c.name == name]
    return case


def test_float32_dense_custom_scale_baseline_and_serial_kernel_pass_with_margin(sfag_subject, bench):
    case = _case(sfag_subject, "t10_custom_scale_dense")
    assert case.dtype == "float32"
    tallies = bench.measure(sfag_subject, case, SEEDS)
    assert set(tallies) == {"baseline", "serial"}  # no R for float32
    # The baseline within the target (0.5; its worst in 5000 draws 0.29); the serial kernel passing (below 1;
    # 0.29 on these seeds, 0.93 the worst of 800 draws). With the old absolute floor (2^-14) seed 1 gives the
    # serial kernel's dq a MERE share of 2.3: this test fails if the relative floor goes.
    for name, bound in (("baseline", bench.SHARE_TARGET), ("serial", 1.0)):
        t = tallies[name]
        assert (t.draws, t.failures) == (len(SEEDS), 0), t.first_failure
        assert 0 < t.mere_share < bound, (name, t.mere_share, t.mere_output)
        assert 0 < t.abs_share < bench.SHARE_TARGET, (name, t.abs_share, t.abs_output)  # measured <= 0.16
    assert tallies["baseline"].status(len(SEEDS)) == "PASS"


@pytest.mark.parametrize("name", ["t07_ragged_topk", "t11_ragged_bs1"])  # bfloat16, float16
def test_reduced_precision_baseline_and_reference_pass_within_the_target(sfag_subject, bench, name):
    case = _case(sfag_subject, name)
    tallies = bench.measure(sfag_subject, case, SEEDS)
    assert set(tallies) == {"baseline", "reference"}  # the serial kernel is the float32 candidate
    for candidate, t in tallies.items():
        assert (t.draws, t.failures) == (len(SEEDS), 0), t.first_failure
        # The baseline at most half its allowance (the target); R below it by construction (2x its error + slack).
        assert 0 < t.abs_share <= bench.SHARE_TARGET, (candidate, t.abs_share, t.abs_output)
        assert 0 < t.mere_share <= bench.SHARE_TARGET, (candidate, t.mere_share, t.mere_output)
        assert t.status(len(SEEDS)) == "PASS"
    assert tallies["baseline"].mere_share < 0.4  # worst of 800 draws 0.23 (t07), 0.16 (t11): inside R's 0.5


def test_a_kernel_off_by_a_little_more_than_allowed_is_counted_as_failing(sfag_subject, bench):
    """The tally can fail: the baseline's float32 outputs 1e-3 off (8x the MERE bound) fail every output."""
    case = _case(sfag_subject, "t10_custom_scale_dense")
    module = sfag_subject.module
    inputs = module.make_inputs(case, SEEDS[0])
    oracle = module.oracle(case, inputs)
    outputs = {k: v * (1 + 1e-3) for k, v in sfag_subject.kernels["baseline"](case, inputs).items()}
    tally = bench.Tally()
    tally.add(module.check(case, outputs, oracle, None), outputs, oracle, None)
    assert (tally.draws, tally.failures) == (1, 1) and "MERE" in tally.first_failure
    assert tally.mere_share > 1 and tally.status(1) == "MISS"


def test_add_mul_relu_baseline_is_exact_at_every_expected_zero(amr_subject, bench):
    """The rule "at an expected 0": G = 0 wherever x <= -1 (a third of y), left out of MERE by the floor;
    the ulp rule holds them to 2^-p absolute. The baseline writes exactly 0 there and the exactly rounded
    value everywhere else: no margin is used at all, so the rule needs no change."""
    for name in ("t02_odd_f32", "t03_odd_f16", "t04_odd_bf16"):
        case = _case(amr_subject, name)
        inputs = amr_subject.module.make_inputs(case, SEEDS[0])
        zeros = int((amr_subject.module.oracle(case, inputs)["y"] == 0).sum())
        assert zeros > case.params["n"] // 5  # the relu's zeros are there to be tested
        t = bench.measure(amr_subject, case, SEEDS)["baseline"]
        assert (t.draws, t.failures) == (len(SEEDS), 0), t.first_failure
        assert t.zero_err == 0.0 and t.ulp_share == 0.0
        assert 0 < t.mere_share < 0.5 and 0 < t.abs_share <= 0.5  # rounding G to the dtype: half an ulp at most


def test_shares_and_the_ulp_share(bench):
    assert bench.share(1.0, 4.0) == 0.25
    assert bench.share(0.0, 0.0) == 0.0 and bench.share(1e-30, 0.0) == float("inf")
    truth = {"y": torch.tensor([0.0, 1.0, 3.0], dtype=torch.float64)}
    outputs = {"y": torch.tensor([0.0, 1.0, 3.0 + 2.0**-22], dtype=torch.float32)}  # 1 ulp off at 3
    assert bench.worst_ulp_share(outputs, truth, lambda exact: torch.full_like(exact, 2.0**-22)) == 1.0
    outputs["y"][0] = float("nan")
    assert bench.worst_ulp_share(outputs, truth, lambda exact: torch.full_like(exact, 2.0**-22)) == float("inf")
