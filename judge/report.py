"""A readable terminal report of a `JudgeResult` (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from judge.profiling.render import profile_table
from judge.results import JudgeResult
from judge.verdict import Verdict

_COLOURS = {Verdict.AC: "bold green", Verdict.WA: "bold red", Verdict.CE: "bold yellow", Verdict.IE: "bold magenta"}


def _ms(ns: float | None) -> str:
    return "-" if ns is None else f"{ns / 1e6:.3f} ms"


def case_table(result: JudgeResult) -> Table:
    table = Table(title="cases", show_lines=False)
    for column in ("case", "set", "pass", "worst err/allowed", "median", "ratio", "baseline", "GFLOP/s"):
        table.add_column(column, justify="left" if column in ("case", "set", "baseline") else "right")
    for case in result.cases:
        worst = max(
            (c.max_abs_err / c.allowed_abs_err for c in case.outputs.values() if c.allowed_abs_err > 0),
            default=None,
        )
        table.add_row(
            case.name,
            case.case_set.value,
            Text("yes", style="green") if case.passed else Text(case.verdict.value, style="red"),
            "-" if worst is None else f"{worst:.3f}",
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
        console.print(case_table(result))
    if profiled := profile_table(result.profiles):
        console.print(profiled)
    if result.score is not None:
        scores = ", ".join(f"{k} {v:.2f}" for k, v in result.set_scores.items())
        console.print(f"score against the baseline: {result.score:.2f}" + (f" ({scores})" if scores else ""))
    times = ", ".join(f"{k} {v:.1f} s" for k, v in result.stage_times_s.items())
    if times:
        console.print(f"stages: {times}; isolation: {result.isolation.value}")
