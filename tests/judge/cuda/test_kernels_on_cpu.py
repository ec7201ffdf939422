"""The CUDA kernels' logic, checked here without a GPU: built through the CPU shim, run on host
memory, graded by the problem's own oracle and pass rule (tests/judge/cuda/harness.py).

What this proves: indexing, masking, dtype handling, workspace use and statelessness of the
CUDA sources. What it cannot: speed, memory coalescing, races that only a GPU's scheduling
shows (the shim runs real threads, but few and in another order).
"""

from __future__ import annotations

import ctypes
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import torch

from judge.backends import Backend
from judge.problem import Case, Problem, load_problem
from tests.judge.cuda.harness import call_on_host, small_case
from tests.judge.cuda.shim import build_shim_library, gxx_available

REPO = Path(__file__).resolve().parents[3]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not gxx_available(), reason="g++ is not installed on this host"),
]

SFAG = "sparse_flash_attention_grad"
AMR = "add_mul_relu"


@pytest.fixture(scope="module")
def sfag() -> Problem:
    return load_problem(SFAG)


@pytest.fixture(scope="module")
def amr() -> Problem:
    return load_problem(AMR)


@pytest.fixture(scope="module")
def libs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every CUDA kernel this file runs, built once through the shim."""
    out = tmp_path_factory.mktemp("shim")
    wanted = {
        "sfag_baseline": (REPO / "reference_kernels" / SFAG / "cuda" / "baseline.cu", SFAG),
        "amr_baseline": (REPO / "reference_kernels" / AMR / "cuda" / "baseline.cu", AMR),
    }
    for problem in (SFAG, AMR):
        for source in sorted((REPO / "tests" / "submissions" / problem / "cuda").glob("*.cu")):
            if source.stem.startswith(("ok_", "wrong_", "exploit_")):
                wanted[f"{problem}/{source.stem}"] = (source, problem)
    # g++ runs in its own process: one build per core at a time.
    with ThreadPoolExecutor(max_workers=len(os.sched_getaffinity(0))) as pool:
        built = {
            name: pool.submit(build_shim_library, source, [REPO / "problems" / problem],
                              out / f"{name.replace('/', '_')}.so")
            for name, (source, problem) in wanted.items()
        }
        return {name: future.result() for name, future in built.items()}


def _cpu_case(problem: Problem, name: str) -> Case:
    return next(c for c in problem.cases_for(Backend.CPU) if c.name == name)


@pytest.mark.parametrize(
    "name",
    [
        "t01_causal_dense_bs1",  # float32, dense causal, rope
        "t03_s1_gt_s2_empty_rows",  # rows that see nothing, Dr = 0
        "t04_cut_short_block",  # float16, the last block cut at the causal threshold
        "t05_two_kv_heads",  # N2 = 2, B = 2
        "t07_ragged_topk",  # bfloat16, lists ending early
        "t09_head_dim_512",  # D + Dr = 576, the official head size
        "t13_contract_causal_cut_short",  # contract_indices: random order, junk after the first -1
        "t14_contract_ragged_empty_rows",  # contract_indices with ragged lists and rows that see nothing
    ],
)
def test_baseline_passes_the_cpu_test_cases(sfag: Problem, libs: dict[str, Path], name: str) -> None:
    result = call_on_host(libs["sfag_baseline"], sfag, _cpu_case(sfag, name), seed=20261130)
    assert result.rc == 0 and result.inputs_unchanged
    assert result.passed, result.failures()


def test_baseline_multi_pass_dq_columns(sfag: Problem, libs: dict[str, Path]) -> None:
    """D + Dr above what one pass keeps in shared memory (about 1090 columns): dq in two passes."""
    case = small_case(sfag, "wide_head", "float32", B=1, S1=3, S2=20, N1=2, N2=1, D=1200, Dr=64, K=3,
                      block_size=4, sparse_mode=3)
    result = call_on_host(libs["sfag_baseline"], sfag, case, seed=5)
    assert result.passed, result.failures()


def test_baseline_partial_head_group(sfag: Problem, libs: dict[str, Path]) -> None:
    """G = 20: one full group of 16 heads and one of 4, for each of two KV heads."""
    case = small_case(sfag, "g20", "bfloat16", B=2, S1=5, S2=30, N1=40, N2=2, D=32, Dr=16, K=4,
                      block_size=4, sparse_mode=0)
    result = call_on_host(libs["sfag_baseline"], sfag, case, seed=6)
    assert result.passed, result.failures()


def test_baseline_keeps_no_state_between_calls(sfag: Problem, libs: dict[str, Path]) -> None:
    case = _cpu_case(sfag, "t08_one_head")
    first = call_on_host(libs["sfag_baseline"], sfag, case, seed=1)
    second = call_on_host(libs["sfag_baseline"], sfag, case, seed=2)
    assert first.passed and second.passed, first.failures() + second.failures()
    assert not torch.equal(first.outputs["dq"], second.outputs["dq"])


# The warp-per-head fixtures are slow in the shim (every shuffle is a 32-thread barrier): small cases.
def _tiny(problem: Problem, dtype: str, **over: Any) -> Case:
    params = dict(B=1, S1=8, S2=40, N1=4, N2=1, D=32, Dr=16, K=3, block_size=8, sparse_mode=3)
    params.update(over)  # S2 - S1 = 32: row s sees up to token 32 + s, inside block 4: cut short
    return small_case(problem, f"tiny_{dtype}", dtype, **params)


def test_second_cuda_kernel_agrees(sfag: Problem, libs: dict[str, Path]) -> None:
    contract = _tiny(sfag, "float32", K=8, flags=("contract_indices",))  # random order, junk after the -1
    for case in (_tiny(sfag, "float16", B=2, N2=2, sparse_mode=0), _tiny(sfag, "bfloat16", Dr=0, block_size=1),
                 contract):
        result = call_on_host(libs[f"{SFAG}/ok_warp_per_head"], sfag, case, seed=3)
        assert result.passed, result.failures()


@pytest.mark.parametrize(
    ("fixture", "dtype", "output"),
    [
        ("wrong_cut_short_block", "float32", "dq"),
        ("wrong_dtype", "bfloat16", "dq"),
        ("wrong_no_workspace_clear", "float32", "dk"),
    ],
)
def test_wrong_fixtures_fail_where_their_bug_is(
    sfag: Problem, libs: dict[str, Path], fixture: str, dtype: str, output: str
) -> None:
    result = call_on_host(libs[f"{SFAG}/{fixture}"], sfag, _tiny(sfag, dtype), seed=4)
    assert result.rc == 0
    assert not result.checks[output].passed


def test_sfag_exploit_replays_stale_outputs(sfag: Problem, libs: dict[str, Path]) -> None:
    """The cache fixture really cheats: right on the first call of a shape, stale on the next."""
    case = _tiny(sfag, "float32")
    library = libs[f"{SFAG}/exploit_pointer_cache"]
    assert call_on_host(library, sfag, case, seed=10).passed
    again = call_on_host(library, sfag, case, seed=11)
    assert not again.passed


def test_add_mul_relu_kernels(amr: Problem, libs: dict[str, Path]) -> None:
    for case in amr.cases_for(Backend.CPU, None)[:5]:
        for name in ("amr_baseline", f"{AMR}/ok_one_per_thread"):
            result = call_on_host(libs[name], amr, case, seed=7)
            assert result.passed, f"{name} {case.name}: {result.failures()}"
        wrong = call_on_host(libs[f"{AMR}/wrong_no_relu"], amr, case, seed=7)
        assert case.params["n"] == 1 or not wrong.passed
    case = next(c for c in amr.cases_for(Backend.CPU) if c.params["n"] > 1000)
    library = libs[f"{AMR}/exploit_pointer_cache"]
    assert call_on_host(library, amr, case, seed=1).passed
    assert not call_on_host(library, amr, case, seed=2).passed


def test_add_mul_relu_ported_exploits(amr: Problem, libs: dict[str, Path]) -> None:
    """KernelGuard's hardcoded shapes and KernelBench's result reuse, on the CUDA ABI (docs/security.md)."""
    public = next(c for c in amr.cases_for(Backend.CUDA) if c.params["n"] == 4097)
    gated = libs[f"{AMR}/exploit_shape_gated"]
    assert call_on_host(gated, amr, public, seed=3).passed  # right where it knows the size
    other = small_case(amr, "other_size", public.dtype, n=5000)
    assert not call_on_host(gated, amr, other, seed=3).passed
    assert not call_on_host(libs[f"{AMR}/exploit_result_reuse"], amr, public, seed=3).passed


def test_shim_rounds_16_bit_floats_like_torch(tmp_path: Path) -> None:
    """The shim's conversions are exact, or the dtype results above would prove nothing."""
    source = tmp_path / "convert.cu"
    source.write_text(
        '#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#include <stdint.h>\n'
        'extern "C" void convert(const float* x, uint16_t* h, uint16_t* b, float* hb, float* bb, long n) {\n'
        '  for (long i = 0; i < n; ++i) {\n'
        '    __half a = __float2half_rn(x[i]); __nv_bfloat16 c = __float2bfloat16_rn(x[i]);\n'
        '    h[i] = a.bits; b[i] = c.bits; hb[i] = __half2float(a); bb[i] = __bfloat162float(c); } }\n'
    )
    library = ctypes.CDLL(str(build_shim_library(source, [], tmp_path / "convert.so")))
    gen = torch.Generator().manual_seed(0)
    edges = torch.tensor([0.0, -0.0, 1.0, 65504.0, 65519.0, 65520.0, 1e9, -1e9, 2.0**-24, 2.0**-25,
                          3 * 2.0**-26, 2.0**-14, 2.0**-14 - 2.0**-25, 1 + 2.0**-11, 1 + 3 * 2.0**-11, 3e-39])
    x = torch.cat([edges, torch.randn(20000, generator=gen) * 4, torch.randn(20000, generator=gen) * 1e-5,
                   (torch.rand(20000, generator=gen) - 0.5) * 1.3e5])
    n = x.numel()
    h, b = torch.empty(n, dtype=torch.int16), torch.empty(n, dtype=torch.int16)
    hb, bb = torch.empty(n), torch.empty(n)
    library.convert(*(ctypes.c_void_p(t.data_ptr()) for t in (x, h, b, hb, bb)), ctypes.c_long(n))
    assert torch.equal(h, x.to(torch.float16).view(torch.int16))
    assert torch.equal(b, x.to(torch.bfloat16).view(torch.int16))
    assert torch.equal(hb, x.to(torch.float16).float())
    assert torch.equal(bb, x.to(torch.bfloat16).float())
    assert shutil.which("g++")
