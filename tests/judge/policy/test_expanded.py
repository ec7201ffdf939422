"""The check of the preprocessed units: what macros build is refused with the line that built it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from judge.backends import Backend
from judge.limits import CPU_LIMITS
from judge.policy import check_preprocessed, check_sources
from judge.policy.expanded import read_unit
from judge.results import PolicyFinding
from judge.sandbox.rlimit import OffSandbox
from judge.toolchains.base import SourceFile
from judge.tracks.cpu.toolchain import GccToolchain

REPO = Path(__file__).resolve().parents[3]
needs_gcc = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
HEAD = '#include <cmath>\n#include <cassert>\n#include "add_mul_relu.h"\n'


def built_findings(tmp_path: Path, files: dict[str, str]) -> list[PolicyFinding]:
    """Build `files` with the CPU toolchain as the judge does, then check its preprocessed units."""
    include = tmp_path / "include"
    include.mkdir()
    shutil.copy2(REPO / "problems" / "add_mul_relu" / "add_mul_relu.h", include)
    sources = [SourceFile(name, text.encode()) for name, text in files.items()]
    assert check_sources(Backend.CPU, sources, CPU_LIMITS, problem_headers=["add_mul_relu.h"]) == []
    for source in sources:
        (tmp_path / source.name).write_bytes(source.content)
    build = GccToolchain().build(sources=sources, include_dirs=[include], workdir=tmp_path, limits=CPU_LIMITS,
                                 sandbox=OffSandbox())
    assert build.ok, build.log
    assert build.preprocessed and all(Path(p).is_file() for p in build.preprocessed)
    return check_preprocessed(Backend.CPU, [Path(p) for p in build.preprocessed], sources, tmp_path)


@needs_gcc
@pytest.mark.parametrize(
    ("code", "rule", "line"),
    [
        ('#define CAT(a, b) a##b\nvoid f() {\n  CAT(__as, m__)("nop");\n}\n', "inline-assembly", 6),
        ("#define ATTR(x) __attribute__((x))\n#define CAT(a, b) a##b\n\n"
         "ATTR(CAT(constr, uctor)) static void early() {}\n", "load-time-code", 7),
        ('#define CAT(a, b) a##b\nextern "C" int CAT(for, k)();\n', "process-creation", 5),
    ],
    ids=["pasted-asm", "attribute-behind-macros", "pasted-call"],
)
def test_what_macros_build_is_found_at_the_line_that_uses_them(tmp_path: Path, code: str, rule: str,
                                                               line: int) -> None:
    found = built_findings(tmp_path, {"kernel.cpp": HEAD + code})
    assert [(f.rule, f.file, f.line) for f in found] == [(rule, "kernel.cpp", line)], found
    assert "preprocessor" in found[0].message


@needs_gcc
def test_macros_from_system_headers_and_strings_are_not_findings(tmp_path: Path) -> None:
    code = HEAD + (
        '#define MESSAGE "fork() and syscall(1) are refused"\n'  # a string a macro puts in: not a call
        "const char* text = MESSAGE;\n"
        "float g(float x) {\n  assert(x == x);\n  return std::isnan(x) ? NAN : x;\n}\n"
    )
    assert built_findings(tmp_path, {"kernel.cpp": code}) == []


@needs_gcc
def test_a_team_header_made_a_system_header_is_still_checked(tmp_path: Path) -> None:
    # `_Pragma` is a string to the source check; gcc then marks util.h's lines as a system header's.
    files = {"kernel.cpp": HEAD + '#include "util.h"\nint h() { return util(); }\n',
             "util.h": '_Pragma("GCC system_header")\n#define CAT(a, b) a##b\n'
                       'static int util() { CAT(__as, m__)("nop"); return 1; }\n'}
    found = built_findings(tmp_path, files)
    assert [(f.rule, f.file, f.line) for f in found] == [("inline-assembly", "util.h", 3)], found


@needs_gcc
@pytest.mark.parametrize("path", sorted(REPO.glob("reference_kernels/*/cpu/*.cpp")), ids=lambda p: p.parent.parent.name)
def test_baseline_kernels_pass(tmp_path: Path, path: Path) -> None:
    problem = path.parent.parent.name
    include = tmp_path / "include"
    include.mkdir()
    shutil.copy2(REPO / "problems" / problem / f"{problem}.h", include)
    shutil.copy2(path, tmp_path)
    sources = [SourceFile(path.name, path.read_bytes())]
    build = GccToolchain().build(sources=sources, include_dirs=[include], workdir=tmp_path, limits=CPU_LIMITS,
                                 sandbox=OffSandbox())
    assert build.ok, build.log
    assert check_preprocessed(Backend.CPU, [Path(p) for p in build.preprocessed], sources, tmp_path) == []


# A unit as gcc writes it, for what no reading of the text known here can produce: an #include
# the source check did not see (hidden by a trick it does not know yet).
UNIT = """# 0 "kernel.cpp"
# 0 "<built-in>"
# 0 "<command-line>"
# 1 "/usr/include/stdc-predef.h" 1 3 4
# 0 "<command-line>" 2
# 1 "kernel.cpp"
# 1 "/usr/include/c++/12/cmath" 1 3
double sqrt(double);
# 2 "kernel.cpp" 2
int a;
# 1 "/usr/include/unistd.h" 1 3 4
extern int fork(void);
# 4 "kernel.cpp" 2
int b;
# 1 "/work/build/util.h" 1
static int u;
# 6 "kernel.cpp" 2
"""


def test_a_header_entered_where_the_source_check_saw_no_include_is_refused(tmp_path: Path) -> None:
    unit = tmp_path / "kernel.0.ii"
    unit.write_text(UNIT)
    sources = [SourceFile("kernel.cpp", b"#include <cmath>\nint a;\n/* hidden */\nint b;\n#include \"util.h\"\n"),
               SourceFile("util.h", b"static int u;\n")]
    found = check_preprocessed(Backend.CPU, [unit], sources, Path("/work/build"))
    assert [(f.rule, f.file, f.line) for f in found] == [("banned-include", "kernel.cpp", 3)], found
    assert "unistd.h" in found[0].message
    own = read_unit(UNIT, build_dir=Path("/work/build"), own={"kernel.cpp", "util.h"})
    assert own.lines["util.h"] == {1: ["static int u;"]}  # the team's header, named by its full path
    assert own.lines["kernel.cpp"] == {2: ["int a;"], 4: ["int b;"]}


def test_leaving_a_team_file_other_than_by_an_include_is_refused(tmp_path: Path) -> None:
    # `# /*` newline `*/ line 1 "..."` is a #line the text reading did not see (red team); gcc obeys it.
    unit = tmp_path / "kernel.0.ii"
    unit.write_text('# 0 "kernel.cpp"\n# 0 "<built-in>"\n# 0 "<command-line>"\n# 1 "kernel.cpp"\nint a;\n\n'
                    '# 1 "/usr/include/math.h"\nint hidden;\n')
    sources = [SourceFile("kernel.cpp", b"int a;\n# /*\n*/ line 1 \"/usr/include/math.h\"\nint hidden;\n")]
    found = check_preprocessed(Backend.CPU, [unit], sources, tmp_path)
    assert [(f.rule, f.file, f.line) for f in found] == [("line-directive", "kernel.cpp", 3)], found


@needs_gcc
def test_red_team_hidden_include_is_refused_after_the_build(tmp_path: Path) -> None:
    code = '#include "add_mul_relu.h"\n# /*\n*/ include <unistd.h>\nint pid() { return (int)(getpid)(); }\n'
    found = built_findings(tmp_path, {"kernel.cpp": code})
    assert [(f.rule, f.file) for f in found] == [("banned-include", "kernel.cpp")], found
    assert "unistd.h" in found[0].message
