"""A problem as teams read it in the service: statement, header, public cases, pass rule, timing.

Built from the problem package on the server's disk (judge.problem), never from
anything outside the repository. Private cases are only counted: their names
and sizes stay hidden, as on the report. The baseline's source is shown only
where the competition allows it (`Competition.baseline_public`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

from judge.backends import Backend, CaseSet
from judge.limits import Limits
from judge.problem import Problem
from judge.tracks import get_track

MAX_BASELINE_FILE_BYTES = 256 * 1024
_BASELINE_SUFFIXES = {".c", ".cc", ".cpp", ".cxx", ".cu", ".cuh", ".h", ".hh", ".hpp", ".py", ".txt", ".cmake"}


@dataclass(frozen=True)
class PublicCase:
    name: str
    case_set: CaseSet
    dtype: str
    sizes: dict[str, Any]
    flags: tuple[str, ...]


@dataclass(frozen=True)
class SourceText:
    name: str
    content: str


@dataclass(frozen=True)
class TimingRules:
    warmup_calls: int
    warmup_ms: float
    min_calls: int
    max_calls: int
    target_sem_percent: float
    case_budget_s: float
    call_time_limit_s: float
    checked_share: float  # at least this share of timed calls is checked against the oracle


@dataclass(frozen=True)
class BackendInfo:
    backend: Backend
    statement_markdown: str
    statement_html: str
    cases: tuple[PublicCase, ...]  # tests and benchmarks only
    private_cases: int  # counted, never listed
    timing: TimingRules
    baseline: tuple[SourceText, ...] | None  # None: not shown in this competition (or none)


@dataclass(frozen=True)
class ProblemInfo:
    slug: str
    title: str
    version: int
    header_name: str
    header: str
    tolerance: dict[str, dict[str, Any]]  # per dtype, the pass rule's figures
    backends: dict[Backend, BackendInfo] = field(default_factory=dict)


@cache
def markdown() -> MarkdownIt:
    """CommonMark with tables; raw HTML in a statement is shown as text, never run. Headings get
    ids from their text ("Run modes" -> `run-modes`), so pages can link to a section."""
    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")
    md.core.ruler.push("heading_ids", _heading_ids)
    return md


def _heading_ids(state: Any) -> None:
    seen: set[str] = set()
    for opening, inline in zip(state.tokens, state.tokens[1:], strict=False):
        if opening.type == "heading_open" and inline.type == "inline":
            base = re.sub(r"[^a-z0-9]+", "-", inline.content.lower()).strip("-") or "section"
            anchor, n = base, 2
            while anchor in seen:
                anchor, n = f"{base}-{n}", n + 1
            seen.add(anchor)
            opening.attrSet("id", anchor)


def render_markdown(text: str) -> str:
    return markdown().render(text)


def problem_info(problem: Problem, backends: tuple[Backend, ...], *, baseline_public: bool) -> ProblemInfo:
    """What teams may read of `problem` for the competition's `backends`."""
    chosen = [b for b in problem.backends if b in backends] or list(problem.backends)
    return ProblemInfo(
        slug=problem.slug, title=problem.title, version=problem.version, header_name=problem.header.name,
        header=problem.header.read_text(encoding="utf-8", errors="replace"),
        tolerance={dtype: dict(values) for dtype, values in problem.tolerance.items() if isinstance(values, dict)},
        backends={b: _backend_info(problem, b, baseline_public) for b in chosen},
    )  # fmt: skip


def statement_for(problem: Problem, backend: Backend) -> str:
    """The package's statement.md, followed by statement_<backend>.md where the package has one."""
    parts = [problem.root / "statement.md", problem.root / f"statement_{backend.value}.md"]
    return "\n\n".join(p.read_text(encoding="utf-8", errors="replace") for p in parts if p.is_file())


def timing_rules(limits: Limits) -> TimingRules:
    return TimingRules(
        warmup_calls=limits.min_warmup_calls, warmup_ms=limits.min_warmup_s * 1000, min_calls=limits.min_timed_calls,
        max_calls=limits.max_timed_calls, target_sem_percent=limits.target_sem_ratio * 100,
        case_budget_s=limits.case_time_budget_s, call_time_limit_s=limits.call_time_limit_s,
        checked_share=limits.check_fraction,
    )  # fmt: skip


def _backend_info(problem: Problem, backend: Backend, baseline_public: bool) -> BackendInfo:
    cases = problem.cases_for(backend)
    statement = statement_for(problem, backend)
    return BackendInfo(
        backend=backend,
        statement_markdown=statement,
        statement_html=render_markdown(statement),
        cases=tuple(PublicCase(c.name, c.case_set, c.dtype, dict(c.params), c.flags)
                    for c in cases if c.case_set is not CaseSet.PRIVATE),  # fmt: skip
        private_cases=sum(1 for c in cases if c.case_set is CaseSet.PRIVATE),
        timing=timing_rules(get_track(backend).limits),
        baseline=_baseline_sources(problem.baselines.get(backend)) if baseline_public else None,
    )


def _baseline_sources(path: Path | None) -> tuple[SourceText, ...] | None:
    """The baseline's text files (a file, or a folder such as the NPU starter kernel)."""
    if path is None or not path.exists():
        return None
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    shown = []
    for file in files:
        if file.suffix not in _BASELINE_SUFFIXES or "__pycache__" in file.parts:
            continue
        if file.stat().st_size > MAX_BASELINE_FILE_BYTES:
            continue
        name = file.name if path.is_file() else str(file.relative_to(path))
        shown.append(SourceText(name, file.read_text(encoding="utf-8", errors="replace")))
    return tuple(shown) or None
