"""The source policy: each rule fires with the right file and line; legitimate kernels pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.backends import Backend
from judge.limits import Limits
from judge.policy import BackendRules, check_sources, register_rules, rules_for
from judge.toolchains.base import SourceFile

REPO = Path(__file__).resolve().parents[3]
HEADER = '#include "add_mul_relu.h"\n'


def findings(code: str, name: str = "kernel.cpp", **kwargs):  # type: ignore[no-untyped-def]
    return check_sources(Backend.CPU, [SourceFile(name, code.encode())], Limits(), **kwargs)


def only(code: str, **kwargs):  # type: ignore[no-untyped-def]
    found = findings(code, **kwargs)
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize("path", sorted(REPO.glob("reference_kernels/*/cpu/*.cpp")), ids=lambda p: p.parent.parent.name)
def test_baseline_kernels_pass(path: Path) -> None:
    problem = path.parent.parent.name
    assert (
        check_sources(
            Backend.CPU, [SourceFile(path.name, path.read_bytes())], Limits(), problem_headers=[f"{problem}.h"]
        )
        == []
    )


@pytest.mark.parametrize("path", sorted(REPO.glob("tests/submissions/*/cpu/ok_*.cpp")), ids=lambda p: p.stem)
def test_legitimate_fixtures_pass(path: Path) -> None:
    assert check_sources(Backend.CPU, [SourceFile(path.name, path.read_bytes())], Limits()) == []


@pytest.mark.parametrize(
    ("line", "rule"),
    [
        ("pid_t p = fork();", "process-creation"),
        ('system("ls");', "process-creation"),
        ('FILE* f = std::fopen("/etc/passwd", "r");', "file-io"),
        ('std::ifstream in("x");', "file-io"),
        ("int s = socket(2, 1, 0);", "network"),
        ('void* h = dlopen("libc.so.6", 2);', "dynamic-loading"),
        ('void* f = dlsym(nullptr, "x");', "dynamic-loading"),
        ("pthread_create(&t, nullptr, work, nullptr);", "threads"),
        ("std::thread t(work);", "threads"),
        ("auto t0 = __rdtsc();", "timer-read"),
        ("auto t = std::chrono::steady_clock::now();", "timer-read"),
        ("clock_gettime(0, &ts);", "timer-read"),
        ('asm volatile("nop");', "inline-assembly"),
        ('__asm__("syscall");', "inline-assembly"),
        ("long r = syscall(2, path, 0);", "syscall"),
        ("__attribute__((constructor)) static void early() {}", "load-time-code"),
        ('[[gnu::section(".text")]] const unsigned char code[] = {0x0f, 0x31};', "load-time-code"),
        ("__attribute__ ( ( constructor ) ) static void early() {}", "load-time-code"),
        ("__attribute((destructor)) static void late() {}", "load-time-code"),
        ("[[using gnu: constructor]] static void early() {}", "load-time-code"),
        ('const char* s = getenv("OPJUDGE_SECRET");', "environment"),
        ("signal(15, SIG_IGN);", "signals"),
        ("void* p = mmap(0, 4096, 7, 34, -1, 0);", "memory-mapping"),
        ("cblas_sgemm(101, 111, 111, 4, 4, 4, 1.f, a, 4, b, 4, 0.f, c, 4);", "vendor-routine"),
    ],
)
def test_banned_construct_is_found_with_file_and_line(line: str, rule: str) -> None:
    code = HEADER + '#include <cstdint>\n\nextern "C" int kernel_run(const kernel_args* a) {\n' + line + "\n}\n"
    found = [f for f in findings(code) if f.rule == rule]
    assert found, findings(code)
    assert found[0].file == "kernel.cpp" and found[0].line == 5
    assert found[0].message and "`" in found[0].message


@pytest.mark.parametrize(
    "code",
    [
        "// fork() in a comment\nint x;\n",
        '/* system("rm -rf")\n fopen() */ int x;\n',
        'const char* s = "socket(2,1,0) and dlopen()";\n',
        'const char* r = R"x(asm volatile("rdtsc"))x";\n',
        "auto f = std::bind(g, 1);\n",
        "int n = 1'000'000;\n",
        "struct io { int read(int); } o; int k = o.read(3);\n",
        "#pragma omp parallel for\nfor (int i = 0; i < 4; ++i) {}\n",
        "__attribute__((global)) void k(float* x, int section) {}\n",  # nvcc's __global__, then a parameter
        "[[gnu::hot]] void f(int a); int section;\n",
    ],
)
def test_harmless_text_is_not_a_finding(code: str) -> None:
    assert findings(code) == []


def test_a_call_split_over_a_line_continuation_is_still_found() -> None:
    found = only("int x;\nint y = fo\\\nrk();\n")
    assert found.rule == "process-creation" and found.line == 2


def test_system_include_outside_the_allow_list() -> None:
    found = only("#include <cmath>\n#include <unistd.h>\n")
    assert (found.rule, found.line) == ("banned-include", 2)
    assert "<unistd.h>" in found.message


def test_iostream_is_refused_with_a_hint() -> None:
    assert "printf" in only("#include <iostream>\n").message


def test_digraph_include_is_read_as_include() -> None:
    assert only("%:include <sys/socket.h>\n").rule == "banned-include"


def test_computed_include_is_refused() -> None:
    assert only("#define H <unistd.h>\n#include H\n").rule == "computed-include"


def test_quoted_include_must_be_own_file_or_the_problems_header() -> None:
    assert findings(HEADER, problem_headers=["add_mul_relu.h"]) == []
    found = only('#include "unistd.h"\n')  # would fall through to the system header
    assert found.rule == "banned-include"
    found = only('#include "other.h"\n', problem_headers=["add_mul_relu.h"])
    assert found.rule == "banned-include"
    files = [SourceFile("kernel.cpp", b'#include "util.h"\n'), SourceFile("util.h", b"static int k;\n")]
    assert check_sources(Backend.CPU, files, Limits(), problem_headers=["add_mul_relu.h"]) == []


def test_include_next_is_refused() -> None:
    assert only("#include_next <stdio.h>\n").rule == "banned-include"


@pytest.mark.parametrize(
    ("name", "rule"), [("../evil.cpp", "file-name"), ("kernel.so", "file-type"), ("a b.cpp", "file-name")]
)
def test_file_name_rules(name: str, rule: str) -> None:
    assert only("int x;\n", name=name).rule == rule


def test_file_size_and_count_limits() -> None:
    limits = Limits(source_limit_bytes=10, max_source_files=1)
    files = [SourceFile("a.cpp", b"int x = 1234567;\n"), SourceFile("b.cpp", b"int y;\n")]
    rules = {f.rule for f in check_sources(Backend.CPU, files, limits)}
    assert rules == {"too-many-files", "file-size"}


def test_binary_file_is_refused() -> None:
    assert only("int x;\0\n").rule == "binary-file"


def test_a_backends_rules_are_its_tracks() -> None:
    from judge.tracks import get_track

    for backend in Backend:
        assert rules_for(backend) is get_track(backend).policy_rules


def test_rules_are_data_a_backend_can_register() -> None:
    cpu = rules_for(Backend.CPU)
    strict = BackendRules(source_suffixes=frozenset({".cpp"}), allowed_system_headers=frozenset(), banned=cpu.banned)
    saved = rules_for(Backend.CPU)
    register_rules(Backend.CPU, strict)
    try:
        assert only("#include <cmath>\n").rule == "banned-include"
    finally:
        register_rules(Backend.CPU, saved)


# Each of these compiles, and g++/gcc reads the hidden line as code (checked by hand with gcc 12):
# the source check must read the text as the compiler's early phases do, not as it looks.
@pytest.mark.parametrize(
    ("code", "name", "rule"),
    [
        ("int a;\r#include <unistd.h>\n", "kernel.cpp", "banned-include"),  # a lone CR ends a line
        ("int a;\n\f#include <unistd.h>\n", "kernel.cpp", "banned-include"),  # \f and \v are blanks
        ("int a;\n\v#include <unistd.h>\n", "kernel.cpp", "banned-include"),
        ("??=include <unistd.h>\n", "kernel.c", "banned-include"),  # C17 reads trigraphs
        ('const char* s = "??/"; const char* t = "; int p = fork(); //";\n', "kernel.c", "process-creation"),
        ('const char* s = "a\\ \n"; int p = fork();\n', "kernel.cpp", "process-creation"),  # \ blank newline
        ("int f(int c) { switch (c) { case'a': return fork(); } return 0; }\n", "kernel.cpp", "process-creation"),
        ('const char* s = u8R"x(";\n)x"; int p = fork();\n', "kernel.cpp", "process-creation"),
        ('const wchar_t* s = LR"(";\n)"; int p = fork();\n', "kernel.cpp", "process-creation"),
    ],
    ids=["lone-cr", "form-feed", "vertical-tab", "trigraph-include", "trigraph-escape", "backslash-blank-newline",
         "char-after-keyword", "u8-raw-string", "wide-raw-string"],
)
def test_text_hidden_from_a_naive_reading_is_still_checked(code: str, name: str, rule: str) -> None:
    assert rule in {f.rule for f in findings(code, name=name)}, findings(code, name=name)


@pytest.mark.parametrize(
    "line",
    ['#line 1 "/usr/include/math.h"', '# 1 "/usr/include/math.h" 1 3', "%:line 7", "#pragma GCC system_header"],
)
def test_directives_that_change_where_the_compiler_says_code_is_are_refused(line: str) -> None:
    assert only(f"int a;\n{line}\nint b;\n").rule == "line-directive"


def test_digit_separators_and_character_literals_still_read_right() -> None:
    assert findings("int n = 0x1'0000; char c = u8'a'; float f = 1'000.5f;\n") == []
    assert findings("const char* s = \"??=\";\n", name="kernel.cpp") == []  # C++17 has no trigraphs


def test_a_byte_order_mark_does_not_hide_the_first_line() -> None:
    assert check_sources(Backend.CPU, [SourceFile("kernel.cpp", b"\xef\xbb\xbf#include <unistd.h>\n")],
                         Limits())[0].rule == "banned-include"


def test_a_dollar_before_r_is_an_identifier_not_a_raw_string() -> None:
    code = '#define $R\nstatic const char* s = $R"(";\nint p = fork();\n// )";\n'
    assert "process-creation" in {f.rule for f in findings(code)}
