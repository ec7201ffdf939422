"""The CUDA track's policy rules (judge/policy/cuda.py): what a CUDA submission may not do."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from judge.backends import Backend
from judge.limits import DEVICE_LIMITS
from judge.policy import check_sources, rules_for
from judge.toolchains.base import SourceFile

REPO = Path(__file__).resolve().parents[3]
HEADER = "sparse_flash_attention_grad.h"
PRELUDE = f'#include <cuda_runtime.h>\n#include "{HEADER}"\n'


def findings(body: str, name: str = "k.cu") -> list[tuple[str, int | None]]:
    source = SourceFile(name, (PRELUDE + body).encode())
    return [(f.rule, f.line) for f in check_sources(Backend.CUDA, [source], DEVICE_LIMITS, problem_headers=[HEADER])]


def rules_of(body: str) -> set[str]:
    return {rule for rule, _ in findings(body)}


@pytest.mark.parametrize(
    "source",
    sorted((REPO / "reference_kernels").glob("*/cuda/*.cu"))
    + sorted(p for p in (REPO / "tests" / "submissions").glob("*/cuda/*.cu") if not p.stem.startswith("sv_")),
    ids=lambda p: f"{p.parent.parent.name}/{p.name}",
)
def test_reference_and_fixture_sources_pass(source: Path) -> None:
    header = f"{source.parent.parent.name}.h"
    got = check_sources(Backend.CUDA, [SourceFile(source.name, source.read_bytes())], DEVICE_LIMITS,
                        problem_headers=[header])
    assert got == []


@pytest.mark.parametrize(
    ("snippet", "rule"),
    [
        # The attention itself may not come from a vendor library.
        ("cublasHandle_t h; int f() { return cublasCreate_v2(&h); }", "vendor-routine"),
        ("int f() { return cublasLtMatmul(0); }", "vendor-routine"),
        ("int f() { return cudnnCreate(0); }", "vendor-routine"),
        ("void f() { cutlass::gemm::device::Gemm<float> g; }", "vendor-routine"),
        ("void f() { mha_bwd(0); }", "vendor-routine"),
        ("void f() { thrust::fill(0, 0, 0); }", "vendor-routine"),
        # The device belongs to the judge.
        ("void f() { cudaDeviceReset(); }", "device-state"),
        ("void f() { cudaSetDevice(1); }", "device-state"),
        ("void f() { cudaDeviceSetLimit(cudaLimitStackSize, 1 << 20); }", "device-state"),
        ("void f(cudaStream_t s, cudaStreamAttrValue* v) { cudaStreamSetAttribute(s, "
         "cudaStreamAttributeAccessPolicyWindow, v); }", "device-state"),
        # Everything on args->stream; no host synchronisation, events or graphs.
        ("void f() { cudaStream_t s; cudaStreamCreate(&s); }", "stream-control"),
        ("void f(cudaStream_t s) { cudaStreamSynchronize(s); }", "stream-control"),
        ("void f() { cudaDeviceSynchronize(); }", "stream-control"),
        ("void f() { cudaEvent_t e; cudaEventCreate(&e); }", "stream-control"),
        ("void f(cudaStream_t s) { cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal); }", "stream-control"),
        ("void f() { cudaGraph_t g; cudaGraphCreate(&g, 0); }", "stream-control"),
        ("__global__ void k(); void f() { k<<<1, 1, 0, cudaStreamPerThread>>>(); }", "stream-control"),
        ("void f(cudaStream_t s) { cudaLaunchHostFunc(s, 0, 0); }", "stream-control"),
        ("void* f() { void* p; cudaGetDriverEntryPoint(\"cuMemAlloc\", &p, 0); return p; }", "stream-control"),
        # The workspace is the only scratch memory; copies are asynchronous on the stream.
        ("void f() { void* p; cudaMalloc(&p, 64); cudaFree(p); }", "device-allocation"),
        ("void f(cudaStream_t s) { void* p; cudaMallocAsync(&p, 64, s); }", "device-allocation"),
        ("void f() { void* p; cudaMallocManaged(&p, 64); }", "device-allocation"),
        ("void f(void* a, void* b) { cudaMemcpy(a, b, 4, cudaMemcpyDeviceToDevice); }", "synchronous-copy"),
        ("void f(void* a) { cudaMemset(a, 0, 4); }", "synchronous-copy"),
        # No driver API, no device clocks.
        ("void f() { cuLaunchKernel(0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0); }", "driver-api"),
        ("void f() { cuCtxSynchronize(); }", "driver-api"),
        ("__device__ long long t() { return clock64(); }", "timer-read"),
        ("__device__ unsigned t() { return cuda::ptx::get_sreg_globaltimer_lo(); }", "timer-read"),
        ("__device__ long t() { return clock(); }", "timer-read"),
        # The rules every C/C++ backend shares apply too.
        ('void f() { fopen("/etc/passwd", "r"); }', "file-io"),
        ("void f() { system(\"ls\"); }", "process-creation"),
        ('__device__ void f() { asm volatile("mov.u32 %0, %%clock;" : "=r"(x)); }', "inline-assembly"),
    ],
)
def test_banned_constructs(snippet: str, rule: str) -> None:
    assert rule in rules_of(snippet), findings(snippet)


@pytest.mark.parametrize(
    "snippet",
    [
        "// cudaDeviceSynchronize() would be wrong here\nint x;",  # comments are not code
        'const char* s = "cudaMalloc cublasSgemm clock64";',  # nor strings
        "void f(void* a, cudaStream_t s) { cudaMemsetAsync(a, 0, 4, s); cudaMemcpyAsync(a, a, 4, "
        "cudaMemcpyDeviceToDevice, s); }",
        "__global__ void k(float* x); void f(cudaStream_t s) { k<<<1, 32, 0, s>>>(0); }",
        "__global__ void k(); void f() { cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 1); }",
        "int f() { int d, v; cudaGetDevice(&d); cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, d);"
        " return v; }",
        "struct cuda_event_like { int cuCount; }; int cudaEventual = 0;",  # names that only look alike
        "namespace flash { int x; } int y = flash::x;",  # a team's own namespace named flash
    ],
)
def test_allowed_constructs(snippet: str) -> None:
    assert findings(snippet) == []


@pytest.mark.parametrize(
    ("include", "allowed"),
    [
        ("<cuda_fp16.h>", True),
        ("<cuda_bf16.h>", True),
        ("<mma.h>", True),
        ("<cooperative_groups.h>", True),
        ("<cuda/pipeline>", True),
        ("<cub/block/block_reduce.cuh>", True),
        ("<cuda.h>", False),
        ("<cublas_v2.h>", False),
        ("<cudnn.h>", False),
        ("<thrust/device_vector.h>", False),
        ("<fstream>", False),
    ],
)
def test_system_headers(include: str, allowed: bool) -> None:
    got = findings(f"#include {include}\n")
    assert (got == []) is allowed, got


def test_cuda_h_is_refused_with_a_hint() -> None:
    source = SourceFile("k.cu", b"#include <cuda.h>\n")
    (finding,) = check_sources(Backend.CUDA, [source], DEVICE_LIMITS, problem_headers=[HEADER])
    assert finding.rule == "banned-include" and "driver API" in finding.message and finding.line == 1


def test_findings_name_the_file_and_line() -> None:
    got = findings("int a;\nvoid f() {\n  cudaDeviceReset();\n}\n")
    assert got == [("device-state", 5)]  # two prelude lines above


def test_cuda_file_types() -> None:
    rules = rules_for(Backend.CUDA)
    assert {".cu", ".cuh", ".cpp", ".h"} <= rules.source_suffixes
    bad = check_sources(Backend.CUDA, [SourceFile("k.py", b"print(1)\n")], DEVICE_LIMITS)
    assert [f.rule for f in bad] == ["file-type"]


def test_library_allow_list_is_the_runtime_launch_path() -> None:
    rules = rules_for(Backend.CUDA)
    for name in ("__cudaRegisterFatBinary", "__cudaLaunchKernel", "__cudaPushCallConfiguration", "cudaGetLastError",
                 "cudaMemsetAsync", "cudaFuncSetAttribute", "memcpy", "expf", "_Znwm"):
        assert rules.import_allowed(name), name
    for name in ("cublasCreate_v2", "cudnnCreate", "cudaMalloc", "cudaDeviceSynchronize", "cudaStreamCreate",
                 "cudaEventRecord", "cuLaunchKernel", "dlopen", "fopen", "cudaGraphLaunch", "cudaLaunchHostFunc"):
        assert not rules.import_allowed(name), name
    needed = rules.allowed_needed
    assert any(re.fullmatch(p, "libcudart.so.13") for p in needed)
    assert not any(re.fullmatch(p, "libcublas.so.13") for p in needed)
