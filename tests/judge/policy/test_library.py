"""The library policy: imports, exports, load-time code and machine code of built kernels."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from judge.backends import Backend
from judge.policy import check_library

REPO = Path(__file__).resolve().parents[3]
FLAGS = ["-std=c++17", "-O3", "-march=native", "-fopenmp", "-fPIC", "-shared"]  # the CPU track's flags
ENTRY = 'extern "C" int kernel_run(const void* a) { return a == nullptr; }\n'

pytestmark = pytest.mark.skipif(
    shutil.which("g++") is None or shutil.which("objdump") is None,
    reason="needs g++ and objdump (apt-get install g++ binutils)",
)


def build(tmp_path: Path, code: str, *extra: str) -> Path:
    src = tmp_path / "k.cpp"
    src.write_text(code)
    out = tmp_path / "k.so"
    subprocess.run(["g++", *FLAGS, *extra, str(src), "-o", str(out)], check=True, capture_output=True)
    return out


def rules_of(tmp_path: Path, code: str, *extra: str) -> list[str]:
    return [f.rule for f in check_library(Backend.CPU, build(tmp_path, code, *extra))]


@pytest.mark.parametrize("problem", ["add_mul_relu", "sparse_flash_attention_grad"])
def test_baseline_libraries_pass(tmp_path: Path, problem: str) -> None:
    src = REPO / "reference_kernels" / problem / "cpu" / "baseline.cpp"
    code = src.read_text()
    found = check_library(Backend.CPU, build(tmp_path, code, f"-I{REPO / 'problems' / problem}"))
    assert found == []


def test_openmp_math_and_cxx_runtime_are_allowed(tmp_path: Path) -> None:
    code = (
        "#include <cmath>\n#include <vector>\n#include <string>\n#include <cstdio>\n#include <omp.h>\n"
        "namespace { float helper(float x) { return std::exp(x) + std::sqrt(x); } }\n"
        'extern "C" int kernel_run(const float* a) {\n'
        '  std::vector<float> v(16); std::string s("x");\n'
        "  #pragma omp parallel for\n  for (int i = 0; i < 16; ++i) v[i] = helper(a[i]) + omp_get_thread_num();\n"
        '  std::printf("%f", v[0]); return s.size() == 1 ? 0 : 1;\n}\n'
    )
    assert rules_of(tmp_path, code) == []


def test_imported_file_function_is_refused(tmp_path: Path) -> None:
    code = '#include <cstdio>\nextern "C" int kernel_run(const void*) { return fopen("/x", "r") != nullptr; }\n'
    found = check_library(Backend.CPU, build(tmp_path, code))
    assert [f.rule for f in found] == ["banned-symbol"]
    assert "fopen" in found[0].message and found[0].file == "<library>"


def test_exported_clock_interposer_is_refused(tmp_path: Path) -> None:
    code = ENTRY + 'extern "C" int clock_gettime(int, void*) { return 0; }\n'
    found = check_library(Backend.CPU, build(tmp_path, code))
    assert [f.rule for f in found] == ["exported-symbol"] and "clock_gettime" in found[0].message


def test_plain_c_helper_export_is_refused_with_how_to_fix(tmp_path: Path) -> None:
    found = check_library(Backend.CPU, build(tmp_path, ENTRY + 'extern "C" int helper(int x) { return x; }\n'))
    assert [f.rule for f in found] == ["exported-symbol"] and "static" in found[0].message


def test_replacing_operator_new_is_refused(tmp_path: Path) -> None:
    code = (
        "#include <cstdlib>\n#include <new>\n"
        + ENTRY
        + "void* operator new(std::size_t n) { return std::malloc(n); }\n"
    )
    assert "exported-symbol" in rules_of(tmp_path, code)


@pytest.mark.parametrize(
    "code",
    [
        ENTRY + "static volatile int seen;\n__attribute__((constructor)) static void early() { seen = 1; }\n",
        ENTRY + "#include <vector>\nstd::vector<float>* keep();\nstatic std::vector<float> cache(1024);\n"
        "std::vector<float>* keep() { return &cache; }\n",
        ENTRY + "static volatile int seen;\n__attribute__((destructor)) static void late() { seen = 2; }\n",
    ],
    ids=["constructor", "global-object", "destructor"],
)
def test_load_time_code_is_refused(tmp_path: Path, code: str) -> None:
    assert rules_of(tmp_path, code) == ["load-time-code"]


def test_ifunc_is_refused(tmp_path: Path) -> None:
    code = (
        ENTRY + 'extern "C" { static int impl(void) { return 1; }\n'
        "static void* resolve(void) { return (void*)impl; }\n"
        'int picked(void) __attribute__((ifunc("resolve"))); }\n'
    )
    assert "load-time-code" in rules_of(tmp_path, code)


@pytest.mark.parametrize(
    ("code", "mnemonic"),
    [
        ('#include <x86intrin.h>\nextern "C" int kernel_run(const void*) { return __rdtsc() & 1; }\n', "rdtsc"),
        (
            'extern "C" int kernel_run(const void*) { unsigned a; asm volatile("rdtscp" : "=a"(a) :: "rcx", "rdx");'
            " return a & 1; }\n",
            "rdtscp",
        ),
        (
            'extern "C" int kernel_run(const void*) { long r; asm volatile("syscall" : "=a"(r) : "a"(39) : "rcx",'
            ' "r11"); return r < 0; }\n',
            "syscall",
        ),
        ('extern "C" int kernel_run(const void*) { asm volatile("int $0x80"); return 0; }\n', "int"),
        # raw bytes placed in the executable section: no import, no asm mnemonic in the source
        (
            '__attribute__((section(".text"))) static const unsigned char tick[] = {0x0f, 0x31, 0xc3};\n'
            'extern "C" int kernel_run(const void*) { return ((int (*)())(void*)tick)() & 1; }\n',
            "rdtsc",
        ),
    ],
    ids=["rdtsc-intrinsic", "rdtscp-asm", "syscall-asm", "int80", "rdtsc-raw-bytes"],
)
def test_forbidden_instruction_is_found_in_machine_code(tmp_path: Path, code: str, mnemonic: str) -> None:
    found = [f for f in check_library(Backend.CPU, build(tmp_path, code)) if f.rule == "forbidden-instruction"]
    assert found and f"`{mnemonic}" in found[0].message


def test_syscall_hidden_inside_another_instruction_is_found(tmp_path: Path) -> None:
    # `jmp` lands one byte into `mov $0x9090050f, %eax`: a linear disassembly shows no syscall.
    code = 'extern "C" int kernel_run(const void*) { asm volatile("jmp 2f+1\\n2: .byte 0xb8, 0x0f, 0x05, 0x90, 0x90");'
    code += " return 0; }\n"
    found = check_library(Backend.CPU, build(tmp_path, code))
    assert any(f.rule == "forbidden-instruction" and "hidden" in f.message for f in found), found


def test_something_that_is_not_a_library(tmp_path: Path) -> None:
    path = tmp_path / "k.so"
    path.write_bytes(b"not an elf")
    assert [f.rule for f in check_library(Backend.CPU, path)] == ["library-format"]


@pytest.mark.parametrize("name", ["omp_get_wtime", "omp_get_wtick", "omp_get_wtime_", "omp_get_wtick_"])
def test_openmps_clocks_are_not_openmp_calls_a_kernel_may_import(name: str) -> None:
    """The OpenMP import rule lets the API through, but not its clocks, nor their Fortran names."""
    from judge.policy import rules_for

    rules = rules_for(Backend.CPU)
    assert not rules.import_allowed(name)
    assert rules.import_allowed("omp_get_thread_num") and rules.import_allowed("omp_get_max_threads")


# Red team, build stage: each passed both policy layers and ran in the strict sandbox before.
def test_an_executable_stack_is_refused(tmp_path: Path) -> None:
    """A GNU C nested function makes the stack executable; a kernel then ran rdtsc built at run time."""
    src = tmp_path / "k.c"
    src.write_text(
        "static int apply(int (*f)(int), int v) { return f(v); }\n"
        "int kernel_run(const void* a) { int base = a == 0; int add(int v) { return v + base; }\n"
        "  return apply(add, 0); }\n"
    )
    out = tmp_path / "k.so"
    subprocess.run(["gcc", "-std=gnu17", "-O3", "-fPIC", "-shared", str(src), "-o", str(out)], check=True,
                   capture_output=True)
    assert "executable-stack" in [f.rule for f in check_library(Backend.CPU, out)]


def test_a_local_ifunc_made_by_token_pasting_is_refused(tmp_path: Path) -> None:
    """A static ifunc never reaches .dynsym: only its IRELATIVE relocation shows it."""
    code = (
        ENTRY + "#define CAT(a, b) a##b\nstatic int impl(int v) { return v; }\n"
        'extern "C" { static void* pick(void) { return (void*)impl; }\n'
        'static int chosen(int) __attribute__((CAT(if, unc)("pick"))); }\n'
        'extern "C" int use(int v) { return chosen(v); }\n'
    )
    assert "load-time-code" in rules_of(tmp_path, code)


@pytest.mark.skipif(__import__("platform").machine() != "x86_64", reason="the .init size check is x86-64's")
def test_code_added_to_init_by_top_level_asm_is_refused(tmp_path: Path) -> None:
    code = (
        ENTRY + "#define CAT(a, b) a##b\n"
        'extern "C" __attribute__((visibility("hidden"), used)) void on_load(void) {}\n'
        'CAT(__as, m__)(".pushsection .init,\\"ax\\",@progbits\\n call on_load\\n .popsection");\n'
    )
    assert "load-time-code" in rules_of(tmp_path, code)


def test_unordered_map_is_allowed(tmp_path: Path) -> None:
    # std::unordered_map imports std::__detail::_Prime_rehash_policy's members from libstdc++; the
    # pattern once spelt the mangled name's length 15 instead of 20 and refused every such kernel.
    code = (
        "#include <unordered_map>\n"
        'extern "C" int kernel_run(const int* a) {\n'
        "  std::unordered_map<int, int> m;\n  for (int i = 0; i < 64; ++i) m[a[i]] += i;\n"
        "  return m.size() > 64;\n}\n"
    )
    out = build(tmp_path, code)
    imports = subprocess.run(["nm", "-D", "--undefined-only", str(out)], capture_output=True, text=True).stdout
    assert "_ZNKSt8__detail20_Prime_rehash_policy14_M_need_rehashEmmm" in imports
    assert rules_of(tmp_path, code) == []
