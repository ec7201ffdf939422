"""The policy check of what the preprocessor made of the sources (docs/rules.md, stage 1, after the build).

The source check reads text; macros and token pasting build what it cannot see
(`CAT(__as, m__)`, an attribute behind a macro, `_Pragma`), and an `#include`
hidden by some reading of the text it does not know reaches a header it never
saw. The compiler keeps the translation units it compiled (gcc `-save-temps`,
nvcc `--keep`); their line markers say which file and line each piece of text
came from. Text from the team's own files is checked with the source rules
whatever flags its markers carry (`_Pragma("GCC system_header")` marks a team's
header as a system one), and every header entered from one of them must come
from an `#include` line the source check read. The file names in the markers
can be trusted because the source check refuses `#line` and line markers.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from judge.policy.rules import BackendRules
from judge.policy.sources import blank_literals, find_banned, include_lines
from judge.results import PolicyFinding
from judge.toolchains.base import SourceFile

# `# 12 "file" 1 3`: flag 1 enters an included file, 2 returns to the includer (gcc's cpp manual).
_MARKER_RE = re.compile(r'^#\s*(?:line\s+)?(\d+)\s+"((?:[^"\\]|\\.)*)"((?:\s+\d+)*)\s*$')
_BUILT = " (built by the preprocessor: a macro, token pasting or _Pragma)"


@dataclass
class _OwnText:
    """What one translation unit holds from the team's files: their expanded lines, and the includes."""

    lines: dict[str, dict[int, list[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    entered: list[tuple[str, int, str]] = field(default_factory=list)  # (own file, its line, header entered)
    renamed: list[tuple[str, int, str]] = field(default_factory=list)  # (own file, its line, name it took)


def _own_name(marker_name: str, build_dir: Path, own: Collection[str]) -> str | None:
    """The team's file a line marker names, or None for anything else (system and problem headers).

    Team file names have no quotes or backslashes, so a name the marker escapes is never one.
    """
    path = os.path.normpath(os.path.join(build_dir, marker_name))
    folder, name = os.path.split(path)
    return name if folder == os.path.normpath(build_dir) and name in own else None


def read_unit(text: str, *, build_dir: Path, own: Collection[str]) -> _OwnText:
    """Split one preprocessed translation unit by the files its line markers name."""
    found = _OwnText()
    current: str | None = None
    started = False  # past the compiler's preamble (<built-in>, <command-line>, forced includes)
    line = 1
    for raw in text.splitlines():
        marker = _MARKER_RE.match(raw)
        if marker is None:
            if current is not None and raw.strip():
                found.lines[current][line].append(raw)
            line += 1
            continue
        flags = marker.group(3).split()
        name = marker.group(2)
        target = _own_name(name, build_dir, own)
        if "1" in flags and current is not None:
            found.entered.append((current, line, name))
        elif started and current is not None and target is None:
            # Leaving a team's file other than by an #include is a hidden `#line` or line marker: what
            # follows would pass for a system header's text.
            found.renamed.append((current, line, name))
        current = target
        started = started or (target is not None and int(marker.group(1)) > 0)
        line = int(marker.group(1))
    return found


def check_preprocessed(units: Iterable[Path], sources: list[SourceFile], rules: BackendRules,
                       build_dir: Path) -> list[PolicyFinding]:
    """Findings in the preprocessed translation units `units` for the team's `sources`."""
    own = {s.name for s in sources}
    directive_lines = {s.name: include_lines(s) for s in sources}
    findings: dict[tuple[str, str | None, int | None], PolicyFinding] = {}
    for unit in units:
        text = unit.read_text(encoding="utf-8", errors="replace")
        found = read_unit(text, build_dir=build_dir, own=own)
        for name, line, header in found.entered:
            if line not in directive_lines.get(name, set()):
                finding = PolicyFinding(
                    "banned-include",
                    f"line {line} includes {os.path.basename(header)!r}, but the source check read no "
                    "#include there: write includes plainly, one per line",
                    name, line,
                )
                findings.setdefault((finding.rule, name, line), finding)
        for name, line, other in found.renamed:
            finding = PolicyFinding(
                "line-directive", f"line {line} makes the compiler say the code after it is in {other!r}: "
                "#line and line markers are not allowed", name, line)
            findings.setdefault((finding.rule, name, line), finding)
        for name, by_line in found.lines.items():
            for finding in _banned_in(name, by_line, rules):
                findings.setdefault((finding.rule, finding.file, finding.line), finding)
    return sorted(findings.values(), key=lambda f: (f.file or "", f.line or 0))


def _banned_in(name: str, by_line: dict[int, list[str]], rules: BackendRules) -> list[PolicyFinding]:
    texts: list[str] = []
    lines: list[int] = []
    for number in sorted(by_line):
        text = " ".join(by_line[number])
        texts.append(text)
        lines.extend([number] * (len(text) + 1))
    code = blank_literals("\n".join(texts))
    found = find_banned(name, code, lines, rules)
    return [PolicyFinding(f.rule, f.message + _BUILT, f.file, f.line) for f in found]
