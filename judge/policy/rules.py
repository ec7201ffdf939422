"""Policy rules as data: one `BackendRules` per backend, its track's `policy_rules`.

`judge.policy.rules_for` finds them through the track (judge/tracks/__init__.py);
`register_rules` puts others in their place at run time (tests). The checks in
sources.py and library.py read only this data, so adding a backend never touches them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from judge.backends import Backend


@dataclass(frozen=True)
class BannedName:
    """A construct refused in sources: a regex over code with comments and strings blanked out."""

    pattern: str  # e.g. r"\bfork\s*\(" ; matched per line after joining continued lines
    rule: str  # stable rule name shown in the report, e.g. "process-creation"
    message: str  # a sentence a student understands; "{name}" is replaced by the matched text


@dataclass(frozen=True)
class BackendRules:
    """What one backend allows, before the build (sources) and after it (the library)."""

    # --- sources ---
    source_suffixes: frozenset[str]  # file suffixes a submission may contain (.cpp, .h, ...)
    allowed_system_headers: frozenset[str]  # names allowed in #include <...>
    banned: tuple[BannedName, ...]  # constructs refused anywhere in the code
    header_hints: dict[str, str] = field(default_factory=dict)  # refused header -> what to use instead
    # regexes (fullmatch) of headers the build itself writes, included with quotes (e.g. the NPU's
    # aclrtlaunch_<kernel>.h): the team cannot send them, and the build makes only its own
    generated_headers: tuple[str, ...] = ()
    # --- library ---
    allowed_imports: frozenset[str] = frozenset()  # undefined dynamic symbols allowed (no version)
    allowed_import_patterns: tuple[str, ...] = ()  # regexes (fullmatch) for families: GOMP_*, libmvec
    # what the allowed imports are, in words, for the message about one that is not
    allowed_imports_in_words: str = "math, memory and C++ runtime functions"
    allowed_exports: frozenset[str] = frozenset({"kernel_run", "kernel_workspace_bytes"})
    compiler_exports: frozenset[str] = frozenset({"_init", "_fini", "_edata", "_end", "__bss_start"})
    # mangled C++ names whose strong definition would replace the runtime's (operator new, std::)
    forbidden_export_patterns: tuple[str, ...] = ()
    allowed_needed: tuple[str, ...] = ()  # regexes (fullmatch) for DT_NEEDED entries
    forbidden_instructions: frozenset[str] = frozenset()  # mnemonics refused in executable code
    forbidden_byte_sequences: dict[str, bytes] = field(default_factory=dict)  # mnemonic -> encoding
    init_array_entries: int = 1  # .init_array slots the compiler itself adds (frame_dummy)
    fini_array_entries: int = 1  # .fini_array slots the compiler itself adds

    def import_allowed(self, name: str) -> bool:
        """Whether an undefined dynamic symbol (without @version) may be imported."""
        return name in self.allowed_imports or any(re.fullmatch(p, name) for p in self.allowed_import_patterns)


_REGISTRY: dict[Backend, BackendRules] = {}  # rules put in place of a track's own


def register_rules(backend: Backend, rules: BackendRules) -> None:
    """Use `rules` for `backend` instead of its track's."""
    _REGISTRY[backend] = rules


def registered_rules(backend: Backend) -> BackendRules | None:
    """The rules `register_rules` put in place for `backend`, if any."""
    return _REGISTRY.get(backend)
