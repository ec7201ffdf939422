"""The policy check of sources, before anything is compiled (docs/rules.md, stage 1).

The text is first brought to what the compiler's own first phases see: a lone
CR read as a line break, trigraphs read as C17 reads them, line continuations
joined (a backslash, blanks, then a line break is one too, as for gcc),
comments and string/char literals blanked (their line breaks kept, so line
numbers stay right), digraph `%:` read as `#`, \f and \v as blanks. Rules are
then regexes over that text: a banned name hidden in a comment or a string is
not a finding, and one split over a line continuation still is. A red team hid
code from a plainer reading with each of those (tests/judge/policy).
What a regex cannot see (a name built by token pasting, `#define`d away)
shows up after the build, in the preprocessed units (expanded.py) and in the
library check: the layers back each other.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection
from glob import glob
from pathlib import PurePosixPath

from judge.limits import Limits
from judge.policy.rules import BackendRules
from judge.results import PolicyFinding
from judge.toolchains.base import SourceFile

_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")
_DIRECTIVE_RE = re.compile(r"^[ \t\f\v]*(?:#|%:)[ \t\f\v]*(\w+)(.*)$", re.MULTILINE)
_SYSTEM_HEADER_RE = re.compile(r"GCC\s+system_header\b")
_CONTINUATION_RE = re.compile(r"\\[ \t\f\v]*\n")
_TRIGRAPHS = {"=": "#", "/": "\\", "'": "^", "(": "[", ")": "]", "!": "|", "<": "{", ">": "}", "-": "~"}
_TRIGRAPH_RE = re.compile(r"\?\?([=/'()!<>\-])")
_RAW_STRING_RE = re.compile(r'(?:u8|u|U|L)?R"([^ ()\\\t\n]{0,16})\(')
_INCLUDE_DIRECTIVES = {"include", "include_next", "import", "embed"}
_SYSTEM_INCLUDE_GLOBS = ("/usr/include", "/usr/include/*-linux-gnu", "/usr/include/c++/*", "/usr/lib/gcc/*/*/include")


def _join_continuations(text: str) -> tuple[str, list[int]]:
    """Remove backslash-newlines; return the text and each character's 1-based original line."""
    out: list[str] = []
    lines: list[int] = []
    line = 1
    i = 0
    while i < len(text):
        continued = _CONTINUATION_RE.match(text, i) if text[i] == "\\" else None
        if continued:
            line += 1
            i = continued.end()
            continue
        out.append(text[i])
        lines.append(line)
        if text[i] == "\n":
            line += 1
        i += 1
    return "".join(out), lines


def blank_literals(text: str) -> str:
    """Comments and literals replaced by spaces (newlines kept)."""
    out = list(text)
    i, n = 0, len(text)

    def blank(a: int, b: int) -> None:
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            blank(i, end)
            i = end
        elif c in "uULR" and (i == 0 or not _is_word(text[i - 1])) and (raw := _RAW_STRING_RE.match(text, i)):
            close = ")" + raw.group(1) + '"'
            end = text.find(close, raw.end())
            end = n if end < 0 else end + len(close)
            blank(raw.end() - len(raw.group(1)) - 2, end)
            i = end
        elif c == "'" and _in_number(text, i):
            i += 1  # a digit separator (1'000'000), not a character literal
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            end = min(j + 1, n)
            blank(i + 1, end - 1)
            i = end
        else:
            i += 1
    return "".join(out)


def _is_word(c: str) -> bool:
    """An identifier character to gcc: `$` and any non-ASCII character included (red team: `$R"(`)."""
    return c.isalnum() or c in "_$" or not c.isascii()


def _in_number(text: str, i: int) -> bool:
    """Whether the quote at `i` separates digits: the token before it is a number (`case'a'` is not)."""
    start = i
    while start > 0 and (_is_word(text[start - 1]) or text[start - 1] in "'."):
        start -= 1
    return start < i and text[start].isdigit() and text[i + 1 : i + 2].isalnum()


def _read_trigraphs(text: str) -> str:
    return _TRIGRAPH_RE.sub(lambda m: _TRIGRAPHS[m.group(1)], text)


def _is_system_header(name: str) -> bool:
    """Whether a quoted include would fall through to a system header of this host."""
    return any(os.path.isfile(os.path.join(d, name)) for pattern in _SYSTEM_INCLUDE_GLOBS for d in glob(pattern))


def _line(lines: list[int], offset: int) -> int:
    return lines[min(offset, len(lines) - 1)] if lines else 1


def _check_names(sources: list[SourceFile], rules: BackendRules, limits: Limits) -> list[PolicyFinding]:
    findings: list[PolicyFinding] = []
    if len(sources) > limits.max_source_files:
        findings.append(
            PolicyFinding(
                "too-many-files",
                f"a submission may have at most {limits.max_source_files} files; this one has {len(sources)}",
            )
        )
    seen: set[str] = set()
    for source in sources:
        name = source.name
        suffix = PurePosixPath(name).suffix
        if not _NAME_RE.fullmatch(name) or name in {".", ".."}:
            findings.append(
                PolicyFinding(
                    "file-name",
                    f"file name {name!r} is not allowed: use letters, digits, "
                    "'_', '-' and '.', at most 64 characters, no folders",
                    name,
                )
            )
        elif suffix not in rules.source_suffixes:
            allowed = ", ".join(sorted(rules.source_suffixes))
            findings.append(PolicyFinding("file-type", f"{name}: only {allowed} files are accepted", name))
        if name.lower() in seen:
            findings.append(PolicyFinding("file-name", f"two files are named {name!r}", name))
        seen.add(name.lower())
        if len(source.content) > limits.source_limit_bytes:
            findings.append(
                PolicyFinding(
                    "file-size",
                    f"{name} is {len(source.content)} bytes; the limit is {limits.source_limit_bytes} bytes per file",
                    name,
                )
            )
        if b"\0" in source.content:
            findings.append(PolicyFinding("binary-file", f"{name} is not a text file", name))
    return findings


def _check_includes(
    name: str, code: str, lines: list[int], rules: BackendRules, own: set[str], problem_headers: Collection[str]
) -> list[PolicyFinding]:
    findings = []
    for match in _DIRECTIVE_RE.finditer(code):
        directive, rest = match.group(1), match.group(2).strip()
        line = _line(lines, match.start(1))
        if directive == "line" or directive.isdigit() or (directive == "pragma" and _SYSTEM_HEADER_RE.match(rest)):
            # They change which file and line the compiler says code comes from, or make a file
            # count as a system header: its code would then be reported, and read, as not the team's.
            findings.append(PolicyFinding(
                "line-directive", "#line, line markers and `#pragma GCC system_header` are not allowed", name, line))
            continue
        if directive not in _INCLUDE_DIRECTIVES:
            continue
        if directive != "include":
            findings.append(PolicyFinding("banned-include", f"#{directive} is not allowed; use #include", name, line))
            continue
        angle = re.fullmatch(r"<([^>]+)>.*", rest)
        quoted = re.fullmatch(r"\"([^\"]+)\".*", rest)
        if angle:
            header = angle.group(1).strip()
            if header not in rules.allowed_system_headers:
                hint = rules.header_hints.get(header, "only standard headers for computing are allowed")
                findings.append(
                    PolicyFinding("banned-include", f"#include <{header}> is not allowed: {hint}", name, line)
                )
        elif quoted:
            header = quoted.group(1).strip()
            if header in own or header in problem_headers:
                continue
            if any(re.fullmatch(pattern, header) for pattern in rules.generated_headers):
                continue
            if problem_headers or "/" in header or _is_system_header(header):
                findings.append(
                    PolicyFinding(
                        "banned-include",
                        f'#include "{header}": include only your own files and the problem\'s header',
                        name,
                        line,
                    )
                )
        else:
            # Blanked quotes leave `""`; anything else is a macro the judge cannot follow.
            findings.append(
                PolicyFinding(
                    "computed-include",
                    '#include must name a header directly ("x.h" or <x>), not through a macro',
                    name,
                    line,
                )
            )
    return findings


def find_banned(name: str, code: str, lines: list[int], rules: BackendRules) -> list[PolicyFinding]:
    findings = []
    for banned in rules.banned:
        for match in re.finditer(banned.pattern, code):
            text = " ".join(match.group(0).split()).rstrip("( ")
            findings.append(
                PolicyFinding(banned.rule, banned.message.replace("{name}", text), name, _line(lines, match.start()))
            )
    return findings


def check_source_files(
    sources: list[SourceFile], rules: BackendRules, limits: Limits, problem_headers: Collection[str] = ()
) -> list[PolicyFinding]:
    """Every finding for these sources, in file order then line order."""
    findings = _check_names(sources, rules, limits)
    if findings:
        return findings
    own = {s.name for s in sources}
    for source in sources:
        per_file: dict[tuple[str, int | None, str], PolicyFinding] = {}
        for reading in _readings(source):
            for finding in _check_text(source.name, reading, rules, own, problem_headers):
                per_file.setdefault((finding.rule, finding.line, finding.message), finding)
        findings += sorted(per_file.values(), key=lambda f: f.line or 0)
    return findings


def _readings(source: SourceFile) -> list[str]:
    """The file's text as the compiler reads it: with trigraphs read and without.

    Trigraphs (`??=` is `#`) are read in C17 and not in C++17; a header may be included by
    either, so a file that has any is checked as both readings.
    """
    # utf-8-sig: gcc skips a leading byte-order mark, which would hide a first-line directive
    text = source.content.decode("utf-8-sig", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    return list(dict.fromkeys([text, _read_trigraphs(text)]))


def _read_code(reading: str) -> tuple[str, list[int], str]:
    """The reading with continuations joined, each character's original line, and that text blanked."""
    joined, lines = _join_continuations(reading)
    return joined, lines, blank_literals(joined)


def include_lines(source: SourceFile) -> set[int]:
    """Every original line an `#include` directive of `source` spans, in any reading of it."""
    found: set[int] = set()
    for reading in _readings(source):
        _joined, lines, code = _read_code(reading)
        for match in _DIRECTIVE_RE.finditer(code):
            if match.group(1) in _INCLUDE_DIRECTIVES:
                found.update(range(_line(lines, match.start()), _line(lines, max(match.start(), match.end() - 1)) + 1))
    return found


def _check_text(name: str, text: str, rules: BackendRules, own: set[str],
                problem_headers: Collection[str]) -> list[PolicyFinding]:
    joined, lines, code = _read_code(text)
    # Quoted includes need the file name the blanking removed: read it from the joined text.
    code_for_includes = _restore_include_names(joined, code)
    return (_check_includes(name, code_for_includes, lines, rules, own, problem_headers)
            + find_banned(name, code, lines, rules))


def _restore_include_names(joined: str, code: str) -> str:
    """`code` with the quoted names of #include lines put back (blanking emptied them)."""
    out = list(code)
    for match in _DIRECTIVE_RE.finditer(code):
        if match.group(1) in _INCLUDE_DIRECTIVES:
            start, end = match.start(2), match.end(2)
            original = joined[start:end]
            quoted = re.match(r"\s*\"[^\"\n]*\"", original)
            if quoted:
                out[start : start + quoted.end()] = list(original[: quoted.end()])
    return "".join(out)
