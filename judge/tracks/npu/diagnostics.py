"""Reading the NPU build's output: compiler diagnostics, linker and CMake errors.

bisheng (CANN's Ascend C compiler) is clang-based and reports
`path:line:col: error: message`; ld.lld and GNU ld report undefined symbols;
CMake reports `CMake Error at file:line (command):`. The report shows teams the
diagnostics against their own file names, with the judge's build folders and
the CANN root shortened, followed by the cleaned log.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_COMPILER = re.compile(
    r"^(?P<file>[^\s:][^:\n]*?):(?P<line>\d+):(?:(?P<col>\d+):)?\s*"
    r"(?P<severity>fatal error|error|warning|note):\s*(?P<message>.*)$"
)
# GNU ld puts these after "file.o:(.text+0x1a):", ld.lld after "ld.lld: error:"; the symbol is what matters.
_LINKER = re.compile(
    r"(?P<message>(?:undefined reference to|undefined symbol:|multiple definition of|duplicate symbol:|"
    r"cannot find -l)\s*.*)$"
)
_CMAKE = re.compile(r"^CMake (?P<severity>Error|Warning)(?: \(dev\))? at (?P<file>[^:]+):(?P<line>\d+)")


@dataclass(frozen=True)
class Diagnostic:
    severity: str  # "error", "warning" or "note" ("fatal error" counts as error)
    message: str
    file: str | None = None  # as the team named it when the file is theirs
    line: int | None = None
    column: int | None = None
    source: str = "compiler"  # compiler | linker | cmake

    def format(self) -> str:
        where = self.file or f"<{self.source}>"
        if self.line is not None:
            where += f":{self.line}" + (f":{self.column}" if self.column is not None else "")
        return f"{where}: {self.severity}: {self.message}"


class PathCleaner:
    """Shortens judge-side paths in the log: the team sees its file names and `$CANN/...`."""

    def __init__(self, workdir: Path, cann_root: Path | None, team_files: list[str]) -> None:
        self.workdir = str(workdir).rstrip("/") + "/"
        self.cann_root = str(cann_root).rstrip("/") + "/" if cann_root else None
        self.team_files = set(team_files)

    def path(self, raw: str) -> str:
        """A file path as the report shows it."""
        name = raw.strip()
        if name.startswith(self.workdir):
            name = name[len(self.workdir):]
        base = name.rsplit("/", 1)[-1]
        if base in self.team_files and "/" in name:
            # ascendc_library compiles copies of the sources from its own folders; same file to the team.
            return base
        if self.cann_root and name.startswith(self.cann_root):
            return "$CANN/" + name[len(self.cann_root):]
        return name

    def text(self, log: str) -> str:
        """The whole log with the work folder dropped and the CANN root shortened."""
        # A work-folder path glued to another path (CMake's object names) keeps one separator.
        cleaned = re.sub(r"(?<=[^\s'\"=(:\[])" + re.escape(self.workdir), "/", log)
        cleaned = cleaned.replace(self.workdir, "")
        if self.cann_root:
            cleaned = cleaned.replace(self.cann_root, "$CANN/")
        return cleaned


def parse_diagnostics(log: str, cleaner: PathCleaner) -> list[Diagnostic]:
    """Every diagnostic in the build log, in order, duplicates (same place and text) dropped."""
    found: list[Diagnostic] = []
    seen: set[tuple[object, ...]] = set()
    for raw_line in log.splitlines():
        line = _strip_noise(raw_line)
        diagnostic = _parse_line(line, cleaner)
        if diagnostic is None:
            continue
        key = (diagnostic.file, diagnostic.line, diagnostic.column, diagnostic.severity, diagnostic.message)
        if key not in seen:
            seen.add(key)
            found.append(diagnostic)
    return found


# Errors in CANN's generated files whose cause is in the team's code, with what to do: an
# error in a file the team never wrote names no line of theirs, so the compile log's summary starts with the cause.
KNOWN_CAUSES: tuple[tuple[str, str], ...] = (
    ("ascendc_set_exception_dump_info",
     "the host stub CANN generated for your kernels does not compile: a kernel uses the device assert "
     "dump (ASSERT_MSG / ENABLE_ASSERT) and the judge builds with ASCENDC_DUMP=0; remove it (plain assert() "
     "is compiled out)"),
)


def known_cause(log: str) -> str | None:
    """What the team should change when the log shows a generated file's error their code caused."""
    for needle, cause in KNOWN_CAUSES:
        if needle in log:
            return cause
    return None


def summarize(diagnostics: list[Diagnostic], *, limit: int = 20, log: str = "") -> str:
    """A short block for the top of the compile log: a known cause, the errors, then a count of the rest."""
    errors = [d for d in diagnostics if d.severity == "error"]
    warnings = [d for d in diagnostics if d.severity == "warning"]
    cause = known_cause(log) if log else None
    if not errors and not warnings:
        return f"{cause}\n" if cause else ""
    lines = ([cause] if cause else []) + [f"{len(errors)} error(s), {len(warnings)} warning(s):"]
    lines += [f"  {d.format()}" for d in errors[:limit]]
    if len(errors) > limit:
        lines.append(f"  ... and {len(errors) - limit} more errors")
    return "\n".join(lines) + "\n"


def _parse_line(line: str, cleaner: PathCleaner) -> Diagnostic | None:
    match = _COMPILER.match(line)
    if match and not match.group("file").startswith(("In file included", "CMake")):
        severity = "error" if match.group("severity") == "fatal error" else match.group("severity")
        return Diagnostic(
            severity=severity, message=match.group("message").strip(), file=cleaner.path(match.group("file")),
            line=int(match.group("line")), column=int(match.group("col")) if match.group("col") else None,
        )
    match = _CMAKE.match(line)
    if match:
        return Diagnostic(severity=match.group("severity").lower(), message="see the CMake output below",
                          file=cleaner.path(match.group("file")), line=int(match.group("line")), source="cmake")
    match = _LINKER.search(line)
    if match:
        return Diagnostic(severity="error", message=cleaner.text(match.group("message").strip()), source="linker")
    return None


def _strip_noise(line: str) -> str:
    # make and ninja prefix lines with progress markers; colour codes come from -fcolor-diagnostics.
    line = re.sub(r"\x1b\[[0-9;]*m", "", line)
    line = re.sub(r"^\[\s*\d+%\]\s*", "", line)
    return line.rstrip()
