"""NPU policy rules on Ascend C sources, through judge/policy's registry and checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.backends import Backend
from judge.limits import Limits
from judge.policy import check_sources, rules_for
from judge.toolchains.base import SourceFile
from judge.tracks.npu.policy import RULES
from tests.judge.fixtures import load_fixtures
from tests.judge.npu.conftest import REPO

STARTER = REPO / "reference_kernels" / "sparse_flash_attention_grad" / "npu"
PROBLEM_HEADER = ("sparse_flash_attention_grad.h",)


def _check(name: str, text: str) -> list:
    return check_sources(Backend.NPU, [SourceFile(name=name, content=text.encode())], Limits(),
                         problem_headers=PROBLEM_HEADER)


def test_the_registry_serves_the_npu_rules() -> None:
    assert rules_for(Backend.NPU) is RULES


def test_the_starter_kernel_passes_the_policy_it_ships_with() -> None:
    sources = [SourceFile(name=p.name, content=p.read_bytes()) for p in sorted(STARTER.iterdir())
               if p.suffix in (".cpp", ".h")]
    assert {s.name for s in sources} == {"sfag_zero_kernel.cpp", "sfag_main_kernel.cpp", "sfag_finalize_kernel.cpp",
                                         "sfag_device.h", "sfag_host.cpp", "sfag_tiling.h"}
    assert check_sources(Backend.NPU, sources, Limits(), problem_headers=PROBLEM_HEADER) == []


@pytest.mark.parametrize(
    ("code", "rule"),
    [
        ("aclnnFlashAttentionScoreGrad(0);", "vendor-kernel"),
        ("aclopCompileAndExecute(0);", "vendor-kernel"),
        ("aclmdlExecute(0, 0, 0);", "vendor-kernel"),
        ("aclrtSetDevice(1);", "device-management"),
        ("aclrtCreateStreamWithConfig(&s, 0, 0);", "device-management"),
        ("aclrtSynchronizeDevice();", "device-management"),
        ("int64_t c = AscendC::GetSystemCycle();", "timer-read"),
        ("aclrtEventElapsedTime(&ms, a, b);", "timer-read"),
        ("ReadFile(\"./input/x.bin\", n, p, n);", "file-io"),
        ("void *h = dlopen(\"libopapi.so\", 2);", "dynamic-loading"),
        ("asm volatile(\"nop\");", "inline-assembly"),
        ("std::thread t([]{});", "threads"),
    ],
)
def test_banned_constructs_are_refused_with_file_and_line(code: str, rule: str) -> None:
    findings = _check("x_kernel.cpp", f'#include "sparse_flash_attention_grad.h"\n\nvoid f() {{\n    {code}\n}}\n')
    assert [(f.rule, f.file, f.line) for f in findings] == [(rule, "x_kernel.cpp", 4)]


def test_what_kernels_legitimately_use_passes() -> None:
    code = """#include <kernel_operator.h>
#include <acl/acl.h>
#include <cstdint>
#include "sparse_flash_attention_grad.h"
#include "my_tiling.h"
// aclnnSparseFlashAttentionGrad is the baseline we race; mentioning it in a comment is fine.
extern "C" int kernel_run(const kernel_args *a) {
    aclrtMemsetAsync(a->workspace, 64, 0, 64, a->stream);
    my_kernel<<<40, nullptr, a->stream>>>((uint8_t *)a->dq);
    return 0;
}
"""
    sources = [SourceFile(name="x_kernel.cpp", content=code.encode()),
               SourceFile(name="my_tiling.h", content=b"#pragma once\n")]
    assert check_sources(Backend.NPU, sources, Limits(), problem_headers=PROBLEM_HEADER) == []


def test_vendor_operator_headers_are_refused_with_a_hint() -> None:
    findings = _check("x_kernel.cpp", "#include <aclnnop/aclnn_sparse_flash_attention_grad.h>\n")
    include = [f for f in findings if f.rule == "banned-include"]
    assert include and "baseline" in include[0].message


def test_cann_headers_must_come_by_angle_brackets() -> None:
    # A quoted path could reach any file; CANN's headers are on the <...> list.
    assert [f.rule for f in _check("x_kernel.cpp", '#include "acl/acl.h"\n')] == ["banned-include"]


def test_library_imports_of_the_launch_path_are_allowed_and_vendor_operators_are_not() -> None:
    from judge.tracks.npu.policy import TEAM_RULES

    for symbol in ("aclrtMemcpyAsync", "aclrtlaunch_sfag_main", "memcpy_s", "malloc", "_Znwm"):
        assert TEAM_RULES.import_allowed(symbol) and RULES.import_allowed(symbol), symbol
    # The CANN runtime's own API: its launchers' and runtime objects' (recorded), never the team's.
    for symbol in ("rtKernelLaunchWithHandleV2", "rtDevBinaryRegister", "AlogRecord"):
        assert RULES.import_allowed(symbol) and not TEAM_RULES.import_allowed(symbol), symbol
    for symbol in ("rtStreamCreate", "rtEventRecord", "rtEventElapsedTime", "rtSetDevice", "rtDeviceSynchronize",
                   "aclrtStreamWaitEvent", "aclrtMallocHost"):
        assert not TEAM_RULES.import_allowed(symbol), symbol
    for symbol in ("aclnnSparseFlashAttentionGrad", "aclopExecuteV2", "aclmdlExecute", "aclrtCreateStream",
                   "dlopen", "fopen", "socket"):
        assert not RULES.import_allowed(symbol), symbol
    # CANN's own runtime objects set devices (aicpu_rt.cpp); the team's objects may not (test_link_check.py).
    assert RULES.import_allowed("aclrtSetDevice") and not TEAM_RULES.import_allowed("aclrtSetDevice")


# Entries marked `needs = "npu"` pass every static check by design: only an NPU host judges them.
NPU_FIXTURES = [f for f in load_fixtures("npu", prefixes=("exploit_",)) if f.expect.get("needs") != "npu"]


@pytest.mark.parametrize("fixture", NPU_FIXTURES, ids=[f.id for f in NPU_FIXTURES])
def test_exploit_fixtures_are_refused_before_building(fixture) -> None:  # type: ignore[no-untyped-def]
    assert fixture.verdict == "SV"
    findings = check_sources(Backend.NPU, [SourceFile(name=fixture.source.name, content=fixture.source.read_bytes())],
                             Limits(), problem_headers=PROBLEM_HEADER)
    text = " ".join(f"{f.rule} {f.message}" for f in findings)
    for needle in fixture.message_contains:
        assert needle in text


def test_the_corpus_has_the_npu_fixtures() -> None:
    stems = {Path(f.source).stem for f in load_fixtures("npu")}
    assert {"exploit_vendor_op_kernel", "exploit_own_stream_kernel", "exploit_cycle_counter_kernel",
            "exploit_read_file_kernel", "ce_syntax_error_kernel", "re_nonzero_return_kernel",
            "wrong_zero_grads_kernel"} <= stems


def test_host_code_may_launch_through_the_generated_aclrtlaunch_header() -> None:
    host = ('#include "sparse_flash_attention_grad.h"\n#include "aclrtlaunch_sfag_main.h"\n'
            'extern "C" int kernel_run(const kernel_args *args) {\n'
            '    return (int)ACLRT_LAUNCH_KERNEL(sfag_main)(40, args->stream, args->q, args->dq);\n}\n')
    assert _check("sfag_host.cpp", host) == []
    # Only that header family, only by its plain name; other tracks build no such header.
    for bad in ('#include "aclrtlaunch_x.hpp"\n', '#include "../aclrtlaunch_x.h"\n', '#include "aclrtlaunch.h"\n'):
        assert [f.rule for f in _check("sfag_host.cpp", bad)] == ["banned-include"], bad
    cpu = check_sources(Backend.CPU, [SourceFile(name="k.cpp", content=b'#include "aclrtlaunch_x.h"\n')], Limits(),
                        problem_headers=PROBLEM_HEADER)
    assert [f.rule for f in cpu] == ["banned-include"]
