"""A readable terminal report of a `JudgeResult` (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from judge.profiling.render import profile_table
from judge.results import CaseResult, JudgeResult
from judge.verdict import Verdict

_COLOURS = {Verdict.AC: "bold green", Verdict.WA: "bold red", Verdict.CE: "bold yellow", Verdict.IE: "bold magenta"}


OFF_TERMINAL_WIDTH = 160


def _ms(ns: float | None) -> str:
    return "-" if ns is None else f"{ns / 1e6:.3f} ms"


def _worst(case: CaseResult) -> str:
    """The largest max error over its bound; "NaN" (or "Inf") where an output held them, whose errors
    were taken over the finite elements only (a 0.000 there would read as a near miss)."""
    if bad := [c for c in case.outputs.values() if c.nonfinite]:
        return "NaN" if any(" NaN value" in c.reason for c in bad) else "Inf"
    worst = max((c.max_abs_err / c.allowed_abs_err for c in case.outputs.values() if c.allowed_abs_err > 0),
                default=None)
    return "-" if worst is None else f"{worst:.3f}"


def case_table(result: JudgeResult) -> Table:
    table = Table(title="cases", show_lines=False)
    # The case column is as wide as its longest name: on a narrow terminal the other columns give
    # way (their figures wrap) rather than cut names to "t02_odd_f…".
    longest = max((len(case.name) for case in result.cases), default=4)
    for column in ("case", "set", "pass", "worst err/allowed", "median", "ratio", "baseline", "GFLOP/s"):
        table.add_column(column, justify="left" if column in ("case", "set", "baseline") else "right",
                         **({"min_width": longest, "no_wrap": True} if column == "case" else {"overflow": "fold"}))
    for case in result.cases:
        table.add_row(
            case.name,
            case.case_set.value,
            Text("yes", style="green") if case.passed else Text(case.verdict.value, style="red"),
            _worst(case),
            _ms(case.timing.median_ns if case.timing else None),
            "-" if case.ratio is None else f"{case.ratio:.3f}",
            case.baseline or "-",
            "-" if case.gflops is None else f"{case.gflops:.2f}",
        )
    return table


def print_report(result: JudgeResult, console: Console | None = None) -> None:
    console = console or Console()
    style = _COLOURS.get(result.verdict, "bold red")
    console.print(Text(f"{result.verdict.value}", style=style), Text(f" {result.verdict.description}"))
    if result.message:
        console.print(result.message)
    for finding in result.findings:
        where = f"{finding.file}:{finding.line}" if finding.line else finding.file or ""
        console.print(f"  [{finding.rule}] {where} {finding.message}")
    if result.compile_log and result.verdict in (Verdict.CE, Verdict.TLE) and not result.cases:
        console.print(Text(result.compile_log[-8000:]))
    if result.cases:
        # Off a terminal (a pipe, a CI log) rich would lay the table out in 80 columns; no line limit there.
        width = console.width
        if not console.is_terminal:
            console.width = max(width, OFF_TERMINAL_WIDTH)
        try:
            console.print(case_table(result))
        finally:
            console.width = width
    if profiled := profile_table(result.profiles):
        console.print(profiled)
    if result.score is not None:
        scores = ", ".join(f"{k} {v:.2f}" for k, v in result.set_scores.items())
        console.print(f"score against the baseline: {result.score:.2f}" + (f" ({scores})" if scores else ""))
    times = ", ".join(f"{k} {v:.1f} s" for k, v in result.stage_times_s.items())
    if times:
        console.print(f"stages: {times}; isolation: {result.isolation.value}")
