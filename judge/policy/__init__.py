"""The policy check: refuse what a kernel may not do, and say where (docs/rules.md, stage 1;
docs/security.md, layers 1 to 2).

`check_sources` runs before compiling; `check_preprocessed` on what the compiler
compiled (its preprocessed units), `check_library` on the built library.
Each returns findings (empty: nothing refused); the engine turns any finding
into verdict SV and shows the rule, the file, the line and the message.
Rules are data per backend, its track's `policy_rules` (`register_rules` replaces them).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from judge.backends import Backend
from judge.limits import Limits
from judge.policy.expanded import check_preprocessed as check_preprocessed_units
from judge.policy.library import check_library_file
from judge.policy.rules import BackendRules, BannedName, register_rules, registered_rules
from judge.policy.sources import check_source_files
from judge.results import PolicyFinding
from judge.toolchains.base import SourceFile

__all__ = ["BackendRules", "BannedName", "check_library", "check_preprocessed", "check_sources", "register_rules",
           "rules_for"]


def rules_for(backend: Backend) -> BackendRules:
    """The rules of `backend`: its track's, unless `register_rules` replaced them."""
    from judge.tracks import get_track  # the track imports the rules' types from here: on use

    return registered_rules(backend) or get_track(backend).policy_rules


def check_sources(
    backend: Backend, sources: list[SourceFile], limits: Limits, *, problem_headers: Collection[str] = ()
) -> list[PolicyFinding]:
    """Findings for the submission's files before they are compiled.

    `problem_headers`: the header names the judge provides (e.g. "add_mul_relu.h");
    with them a quoted include of anything else is refused, without them only
    quoted includes that would reach a system header are.
    """
    return check_source_files(sources, rules_for(backend), limits, problem_headers)


def check_preprocessed(backend: Backend, units: list[Path], sources: list[SourceFile],
                       build_dir: Path) -> list[PolicyFinding]:
    """Findings in what the preprocessor made of the team's files (macros, token pasting, hidden includes)."""
    return check_preprocessed_units(units, sources, rules_for(backend), build_dir)


def check_library(backend: Backend, library: Path) -> list[PolicyFinding]:
    """Findings for the built shared library: imports, exports, load-time code, machine code."""
    return check_library_file(library, rules_for(backend))
