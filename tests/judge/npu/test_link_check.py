"""The NPU library policy by object: CANN's objects may call its launch path, the team's may not.

The names come from CANN 8.5.0's own objects (data/cann_v8.5.0/symbols: asc-devkit v8.5.0's runtime
sources compiled with g++ 12, and the generator's host stubs, each one's undefined symbols recorded by
regen.sh); the objects here are real ones, compiled by this host's compiler and archived
by `ar`, built through the fake CANN tree whose ascendc_library adds libascendc_runtime.a's members
to the kernel archive as CANN's function.cmake does.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from judge.backends import Backend
from judge.host_config import HostConfig
from judge.limits import Limits
from judge.policy import check_library
from judge.toolchains.base import SourceFile
from judge.tracks.npu.cann_symbols import CANN_OBJECT_CALLS
from judge.tracks.npu.link_check import LinkedObjects, check_linked_objects, collect_objects
from judge.tracks.npu.objects import archive_members, read_archive
from judge.tracks.npu.policy import RULES, TEAM_RULES
from judge.tracks.npu.toolchain import AscendToolchain
from judge.verdict import Verdict
from tests.judge.npu.conftest import DATA, LocalSandbox

SYMBOLS = DATA / "cann_v8.5.0" / "symbols"
# (object, name) for every name a recorded CANN object leaves undefined.
CALLS = [(path.name.split(".undefined")[0], line.strip()) for path in sorted(SYMBOLS.glob("*.undefined.txt"))
         if ".dump_unset." not in path.name
         for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]
DEFINED = {line.split()[0] for path in SYMBOLS.glob("*.defined.txt") for line in path.read_text().splitlines()
           if line.strip() and not line.startswith("#")}
# Calls of CANN's objects a team's code must never make (profiling, streams, events, devices, own launches).
CANN_ONLY = {"MsprofReportApi", "MsprofSysCycleTime", "aclrtSetDevice", "aclrtResetDevice", "aclrtRecordEvent",
             "aclrtCreateStreamWithConfig", "aclrtDestroyStream", "rtKernelLaunchWithHandleV2", "rtMalloc",
             "rtRegStreamStateCallback", "_ZNSt6thread4joinEv", "nanosleep"}

# A stand-in for CANN's ascendc_runtime.cpp: it makes the calls the real one makes (a few of them) and
# has a global with a constructor, as the real one's static unordered_set does.
RUNTIME_SOURCE = """
#include <cctype>
#include <string>
extern "C" int MsprofReportApi(unsigned, void *);
extern "C" unsigned long MsprofSysCycleTime(void);
extern "C" int aclrtSetDevice(int);
extern "C" int aclrtRecordEvent(void *, void *);
static std::string g_name = std::string("ascend") + "c";
extern "C" int RegisterAscendBinary(const char *bin) {
    (void)aclrtSetDevice(0);
    (void)aclrtRecordEvent(nullptr, nullptr);
    return MsprofReportApi(1, nullptr) + (int)MsprofSysCycleTime() + std::tolower(bin[0]) + (int)g_name.size();
}
"""
HOST = b"""#include "sparse_flash_attention_grad.h"
extern "C" void my_launch(void *stream);
extern "C" int kernel_run(const kernel_args *args) { my_launch(args->stream); return 0; }
"""
KERNEL = b"""extern "C" int RegisterAscendBinary(const char *bin);
extern "C" void my_launch(void *stream) { (void)stream; (void)RegisterAscendBinary("k"); }
"""


def _runtime_archive(cann_root: Path, tmp_path: Path) -> Path:
    """cann_root/lib64/libascendc_runtime.a holding one real object, as CANN ships it."""
    source = tmp_path / "ascendc_runtime.cpp"
    source.write_text(RUNTIME_SOURCE)
    obj = tmp_path / "ascendc_runtime.cpp.o"
    subprocess.run(["g++", "-O2", "-fPIC", "-D_GLIBCXX_USE_CXX11_ABI=0", "-c", str(source), "-o", str(obj)],
                   check=True)
    archive = cann_root / "lib64" / "libascendc_runtime.a"
    subprocess.run(["ar", "rcs", str(archive), str(obj)], check=True, cwd=tmp_path)
    return archive


def _build(tmp_path: Path, host: HostConfig, include_dir: Path, files: dict[str, bytes]):  # type: ignore[no-untyped-def]
    workdir = tmp_path / "build"
    workdir.mkdir()
    sources = []
    for name, content in files.items():
        (workdir / name).write_bytes(content)
        sources.append(SourceFile(name=name, content=content))
    return AscendToolchain(host).build(sources=sources, include_dirs=[include_dir], workdir=workdir,
                                       limits=Limits(compile_time_limit_s=240.0), sandbox=LocalSandbox()), workdir


def test_the_cann_list_holds_every_call_of_canns_own_objects() -> None:
    assert len(CALLS) > 100
    missing = [f"{obj}: {name}" for obj, name in CALLS
               if name not in DEFINED and name != "_GLOBAL_OFFSET_TABLE_" and not RULES.import_allowed(name)]
    assert not missing, f"CANN's own objects call these and the library check would refuse them: {missing}"
    # What a review found refused before: aicpu_rt.cpp's thread and sleep, v8.5.0's log.
    for name in ("_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE",
                 "_ZNSt6thread4joinEv", "_ZNSt6thread6_StateD2Ev", "nanosleep", "AlogCheckDebugLevel", "AlogRecord",
                 "_ZNSaIcEC1Ev", "MsprofReportApi", "tolower", "_ZNSsC1EPKcRKSaIcE"):
        assert RULES.import_allowed(name), name


def test_what_only_cann_may_call_stays_refused_for_the_team() -> None:
    assert CANN_ONLY <= {name for _, name in CALLS} and CANN_ONLY <= CANN_OBJECT_CALLS
    for name in CANN_ONLY:
        assert RULES.import_allowed(name) and not TEAM_RULES.import_allowed(name), name
    # What team host code compiled like CANN's (old-ABI strings, the tiling API) may call.
    for name in ("_ZNSs4_Rep10_M_destroyERKSaIcE", "_ZN13matmul_tiling13MatmulApiTiling8GetTilingERN8optiling12"
                 "TCubeTilingE", "aclrtMemcpyAsync", "memcpy_s"):
        assert TEAM_RULES.import_allowed(name), name


def test_archives_and_objects_are_read_as_the_compiler_wrote_them(tmp_path: Path) -> None:
    (tmp_path / "lib64").mkdir()
    archive = _runtime_archive(tmp_path, tmp_path)
    [(name, body)] = archive_members(archive)
    assert name == "ascendc_runtime.cpp.o" and body[:4] == b"\x7fELF"
    [obj] = read_archive(archive)
    assert {"MsprofReportApi", "aclrtSetDevice", "tolower"} <= obj.undefined
    assert "RegisterAscendBinary" in obj.defined and "RegisterAscendBinary" not in obj.undefined
    assert obj.init_entries == 1  # g_name's constructor


def test_cann_objects_pass_and_the_same_calls_from_the_team_are_refused(tmp_path: Path, npu_host: HostConfig,
                                                                       fake_cann: Path, include_dir: Path) -> None:
    _runtime_archive(fake_cann, tmp_path)
    result, workdir = _build(tmp_path, npu_host, include_dir, {"host.cpp": HOST, "my_kernel.cpp": KERNEL})
    assert result.ok, result.log
    objects = collect_objects(workdir / "opjudge_build", fake_cann)
    assert [o.name for o in objects.cann] == ["ascendc_runtime.cpp.o"]
    assert {o.source_name for o in objects.team} >= {"my_kernel.cpp", "host.cpp"}
    assert check_library(Backend.NPU, Path(result.library_path or "")) == []  # the whole library: CANN's list

    # The team's own object making a call of CANN's runtime: refused, on the team's file.
    sneaky = KERNEL + b'extern "C" int aclrtRecordEvent(void *, void *);\n' \
                      b'extern "C" int grab(void) { return aclrtRecordEvent(nullptr, nullptr); }\n'
    (tmp_path / "again").mkdir()
    bad, _ = _build(tmp_path / "again", npu_host, include_dir, {"host.cpp": HOST, "my_kernel.cpp": sneaky})
    assert not bad.ok and bad.verdict is Verdict.SV
    assert [(f.rule, f.file) for f in bad.findings] == [("banned-symbol", "my_kernel.cpp")]
    assert "aclrtRecordEvent" in bad.findings[0].message and "aclrtRecordEvent" in bad.log


def test_a_team_constructor_is_refused_on_its_object(tmp_path: Path, npu_host: HostConfig, fake_cann: Path,
                                                     include_dir: Path) -> None:
    _runtime_archive(fake_cann, tmp_path)
    ctor = HOST + b"volatile int g_seen;\n__attribute__((constructor)) static void early(void) { g_seen = 1; }\n"
    result, _ = _build(tmp_path, npu_host, include_dir, {"host.cpp": ctor, "my_kernel.cpp": KERNEL})
    assert result.verdict is Verdict.SV
    assert [(f.rule, f.file) for f in result.findings] == [("load-time-code", "host.cpp")], result.findings


def test_a_copy_of_cann_code_in_the_teams_files_is_still_the_teams(tmp_path: Path, npu_host: HostConfig,
                                                                   fake_cann: Path, include_dir: Path) -> None:
    # Same source as CANN's object, compiled as the team's: other bytes (other flags), so held to the team's list.
    _runtime_archive(fake_cann, tmp_path)
    copy = RUNTIME_SOURCE.replace("RegisterAscendBinary", "mine").encode()
    result, _ = _build(tmp_path, npu_host, include_dir, {"host.cpp": HOST + copy, "my_kernel.cpp": KERNEL})
    assert result.verdict is Verdict.SV
    refused = {f.message.split("`")[1] for f in result.findings if f.rule == "banned-symbol"}
    assert {"MsprofReportApi", "aclrtSetDevice", "aclrtRecordEvent"} <= refused


def test_the_host_stub_may_register_kernels_but_not_run_more(tmp_path: Path) -> None:
    stub_src = tmp_path / "host_stub.cpp"
    stub_src.write_text('extern "C" int rtRegisterAllKernel(const void *);\n'
                        'static void reg(void) __attribute__((constructor));\n'
                        'void reg(void) { (void)rtRegisterAllKernel(nullptr); }\n')
    obj = tmp_path / "host_stub.cpp.o"
    subprocess.run(["g++", "-fPIC", "-c", str(stub_src), "-o", str(obj)], check=True)
    archive = tmp_path / "libopjudge_kernels.a"
    subprocess.run(["ar", "rcs", str(archive), str(obj)], check=True, cwd=tmp_path)
    [stub] = read_archive(archive)
    assert check_linked_objects(LinkedObjects(cann=[], stub=[stub], team=[]), TEAM_RULES) == []
    stub_src.write_text(stub_src.read_text() + 'struct T { static inline int x = rtRegisterAllKernel(nullptr); };\n'
                        'int use() { return T::x; }\n')
    subprocess.run(["g++", "-std=c++17", "-fPIC", "-c", str(stub_src), "-o", str(obj)], check=True)
    archive.unlink()
    subprocess.run(["ar", "rcs", str(archive), str(obj)], check=True, cwd=tmp_path)
    [stub] = read_archive(archive)
    findings = check_linked_objects(LinkedObjects(cann=[], stub=[stub], team=[]), TEAM_RULES)
    assert [f.rule for f in findings] == ["load-time-code"]


@pytest.mark.parametrize("name", ["MsprofReportApi", "aclrtSetDevice"])
def test_the_team_source_check_still_refuses_the_names(name: str) -> None:
    from judge.policy import check_sources

    code = f'extern "C" int {name}(int);\nint f() {{ return {name}(0); }}\n'.encode()
    findings = check_sources(Backend.NPU, [SourceFile(name="x_kernel.cpp", content=code)], Limits())
    assert findings, name


def test_canns_runtime_objects_that_are_not_the_toolkits_are_the_judges_problem(tmp_path: Path) -> None:
    from judge.tracks.npu.link_check import LinkCheckError

    (tmp_path / "lib64").mkdir()
    archive = _runtime_archive(tmp_path, tmp_path)
    build = tmp_path / "build"
    build.mkdir()
    kernels = build / "libopjudge_kernels.a"
    kernels.write_bytes(archive.read_bytes())
    assert [o.name for o in collect_objects(build, tmp_path).cann] == ["ascendc_runtime.cpp.o"]
    archive.unlink()  # a toolkit without lib64/libascendc_runtime.a
    with pytest.raises(LinkCheckError, match="cannot tell CANN's objects from the team's"):
        collect_objects(build, tmp_path)


def test_a_name_the_source_check_cannot_see_is_caught_on_its_object(tmp_path: Path, npu_host: HostConfig,
                                                                    fake_cann: Path) -> None:
    # Token pasting hides aclrtSetDevice from the source check, and the NPU build keeps no
    # preprocessed units: the object check is what refuses it, as SV naming the team's file.
    from judge.backends import CaseSet
    from judge.builds import build_kernels
    from judge.engine import JudgeRequest, SilentReporter
    from judge.problem import load_problem
    from judge.results import JudgeResult
    from judge.tracks import get_track

    _runtime_archive(fake_cann, tmp_path)
    pasted = HOST + b'#define CAT(a, b) a##b\nextern "C" int CAT(aclrtSet, Device)(int);\n' \
                    b'extern "C" int grab(void) { return CAT(aclrtSet, Device)(0); }\n'
    problem = load_problem("sparse_flash_attention_grad")
    request = JudgeRequest(problem=problem, backend=Backend.NPU, secret=b"t", case_sets=(CaseSet.TESTS,),
                           sources=[SourceFile("host.cpp", pasted), SourceFile("my_kernel.cpp", KERNEL)])
    result = JudgeResult(verdict=Verdict.IE, problem=problem.slug, backend=Backend.NPU, message="")
    work = tmp_path / "run"
    work.mkdir()
    built = build_kernels(request, host=npu_host, track=get_track(Backend.NPU), sandbox=LocalSandbox(),
                          workdir=work, reporter=SilentReporter(), result=result)
    assert built is None and result.verdict is Verdict.SV, result.message
    assert result.message.startswith("policy rule banned-symbol (host.cpp)") and "aclrtSetDevice" in result.message
