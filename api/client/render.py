"""Terminal views of the API's JSON: the run's steps, the verdict and per-case table, the leaderboard."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from api.client.stages import FINISHED, Step, run_steps
from judge.profiling.render import profile_table

VERDICT_STYLE = {"AC": "bold green", "WA": "bold red", "RE": "bold red", "CE": "bold yellow", "SV": "bold white on red",
                 "TLE": "bold magenta", "MLE": "bold magenta", "IE": "bold bright_black"}  # fmt: skip
VERDICT_WORDS = {
    "AC": "accepted: every case passed",
    "WA": "wrong answer: a case's output is outside the allowed error",
    "CE": "compile error: the sources did not build",
    "SV": "security violation: the policy check or the sandbox refused the submission",
    "TLE": "time limit exceeded",
    "MLE": "memory limit exceeded",
    "RE": "runtime error: the kernel crashed or returned an error",
    "IE": "internal error: the judge failed, not your submission; it is retried and not charged",
}
_MARKS = {"done": ("✓", "green"), "failed": ("✗", "red"), "skipped": ("–", "bright_black"),
          "waiting": ("·", "bright_black")}  # fmt: skip


def live_run(detail: dict[str, Any]) -> dict[str, Any] | None:
    """The newest judge or rejudge run (the one a team follows)."""
    return next((r for r in detail.get("runs", []) if r.get("kind") != "reproduction"), None)


def shown_run(detail: dict[str, Any]) -> dict[str, Any] | None:
    """The run whose results count: the scored one, else the newest."""
    scored = next((r for r in detail.get("runs", []) if r.get("id") == detail.get("scored_run_id")), None)
    return scored or live_run(detail)


def is_finished(run: dict[str, Any] | None) -> bool:
    return run is not None and run.get("status") in FINISHED


def steps_of(run: dict[str, Any] | None) -> list[Step]:
    if run is None:
        return run_steps(status="pending", stage=None, stage_times={}, verdict=None, queued_at=None)
    queued = run.get("queued_at") or run.get("created_at")
    return run_steps(status=run["status"], stage=run.get("stage"), stage_times=run.get("stage_times") or {},
                     verdict=run.get("verdict"),
                     queued_at=datetime.fromisoformat(queued) if queued else None)  # fmt: skip


def progress(detail: dict[str, Any]) -> RenderableType:
    """The run's steps, the current one with a spinner (for rich's Live display)."""
    submission = detail["submission"]
    head = Text.assemble((str(submission["id"]), "bold"), f" {submission['problem']} on {submission['backend']}")
    table = Table.grid(padding=(0, 2))
    for step in steps_of(live_run(detail)):
        when = step.at.astimezone().strftime("%H:%M:%S") if step.at and step.state != "skipped" else ""
        if step.state == "current":
            table.add_row(Spinner("dots", style="cyan"), Text(step.label, style="bold cyan"), when)
        else:
            mark, style = _MARKS[step.state]
            table.add_row(Text(mark, style=style), Text(step.label, style=style if step.state != "done" else ""), when)
    return Group(head, table)


def queue_line(place: dict[str, Any]) -> str:
    """Where a waiting run stands, and the estimate of its wait."""
    line = f"queue {place['queue']}: number {place['position']} ({place['ahead']} ahead, "
    line += f"{place['running']} being judged)"
    wait = place.get("estimated_wait_s")
    if wait is not None:
        line += f", about {wait / 60:.1f} min" if wait >= 90 else f", about {wait:.0f} s"
        line += " from recent judge times"
    return line


def step_line(step: Step) -> str:
    """One line per step reached, for output that is not a terminal (logs, CI)."""
    return f"  {step.label.lower()}" + (f" at {step.at.astimezone():%H:%M:%S}" if step.at else "")


def verdict_view(detail: dict[str, Any], *, width: int = 120) -> RenderableType:
    """The verdict in words, the reason, the policy findings, the compiler log when it failed, the cases."""
    run = shown_run(detail)
    if run is None or not run.get("verdict"):
        return Text("no result yet", style="bright_black")
    verdict = run["verdict"]
    parts: list[RenderableType] = [
        Text.assemble((f" {verdict} ", VERDICT_STYLE.get(verdict, "bold")), " ", VERDICT_WORDS.get(verdict, ""))
    ]
    if run.get("message"):
        parts.append(Text(run["message"]))
    for finding in run.get("findings") or []:
        where = finding.get("file") or "submission"
        if finding.get("line"):
            where += f":{finding['line']}"
        rule, message = finding.get("rule", ""), finding.get("message", "")
        parts.append(Text.assemble((f"  {where}", "bold red"), f" [{rule}] {message}"))
    if run.get("compile_log") and verdict in ("CE", "SV", "TLE") and not run.get("cases"):
        parts += [Text("compiler log:", style="bold"), Text(run["compile_log"][-8000:])]
    if run.get("cases"):
        parts.append(case_table(run["cases"], width=width))
    if profiled := profile_table(run.get("profiles") or []):
        parts.append(profiled)
    if run.get("score") is not None:
        parts.append(Text.assemble("score against the baseline: ", (f"{run['score']:.2f}", "bold")))
    return Group(*parts)


def compact_table(title: str | None = None) -> Table:
    """A table that fits 80 columns: rules under the header only, one space between columns."""
    return Table(title=title, title_justify="left", header_style="bold", box=box.SIMPLE_HEAD, padding=(0, 1),
                 pad_edge=False)  # fmt: skip


_SET_SHORT = {"tests": "test", "benchmarks": "bench", "private": "priv"}


def case_table(cases: list[dict[str, Any]], *, width: int = 120) -> RenderableType:
    """Per case: set, pass, each output's max error (and MERE, when `width` allows) against the
    allowance, time, ratio, GFLOP/s; failing cases' messages under the table, so columns stay narrow."""
    wide = width >= 110
    table = compact_table("cases")
    columns = ["case", "set", "pass", "max err/allowed", *(["MERE/allowed"] if wide else []), "median", "vs base",
               *(["GFLOP/s"] if wide else [])]  # fmt: skip
    for column in columns:
        table.add_column(column, justify="left" if column in ("case", "set", "pass") else "right",
                         no_wrap=column != "case", overflow="fold")  # fmt: skip
    notes: list[RenderableType] = []
    for case in cases:
        passed = Text("pass", style="green") if case["passed"] else Text(case["verdict"], style="bold red")
        short = _SET_SHORT.get(case["case_set"], case["case_set"])
        if case.get("redacted"):
            table.add_row(case["name"], short, passed, "private: pass/fail only", *([""] * (len(columns) - 4)))
            continue
        errors = case.get("errors") or {}
        if not case["passed"] and case.get("message"):
            notes.append(Text.assemble((f"{case['name']}: ", "bold red"), case["message"]))
        cells: list[RenderableType] = [case["name"], short, passed, _errors(errors, "max_abs_err", "allowed_abs_err")]
        if wide:
            cells.append(_errors(errors, "mere", "allowed_mere"))
        cells += [_ms(case.get("median_ns")), "-" if case.get("ratio") is None else f"{case['ratio']:.3f}x"]
        if wide:
            cells.append("-" if case.get("gflops") is None else f"{case['gflops']:.3g}")
        table.add_row(*cells)
    return Group(table, *notes) if notes else table


def board_table(board: dict[str, Any]) -> Table:
    """The leaderboard: rank, team, scores, latest verdict; the caller's row marked, the baseline dim."""
    final = board.get("final", False)
    title = f"{board['title']}: {'final ranking' if final else 'leaderboard'}"
    if board.get("frozen"):
        title += f" (frozen at {_hhmm(board.get('frozen_at'))}; your own row still updates)"
    table = compact_table(title)
    columns = ["#", "team", "online" if final else "score"] + (["reviewers", "final"] if final else [])
    for column in columns + ["latest", "submitted"]:
        table.add_column(column, justify="right" if column not in ("team", "latest") else "left")
    rows = list(board.get("rows", []))
    baseline = board.get("baseline")
    if baseline and board.get("columns"):
        at = next((i for i, r in enumerate(rows) if r["rank"] is None or r["online_score"] < baseline["online_score"]),
                  len(rows))  # fmt: skip
        rows.insert(len(rows) if final else at, baseline)
    def shown(row: dict[str, Any]) -> str:  # the score as the board shows it: a tie is equal as shown
        return f"{(row.get('final_score') or 0) if final else row['online_score']:.2f}"

    ranked = [shown(r) for r in rows if r.get("rank") and not r.get("is_baseline")]
    tied = {score for score in ranked if ranked.count(score) > 1}
    for row in rows:
        name = row["team_name"] + (" (you)" if row.get("is_viewer") else "") + (" [live]" if row.get("live") else "")
        name += " DISQUALIFIED" if row.get("disqualified") else ""
        name += " (tie: earlier first)" if row.get("rank") and shown(row) in tied else ""
        name += " [disturbed]" if row.get("disturbed") else ""
        if row.get("is_baseline"):
            name = "baseline (reference)"
        cells = [str(row["rank"] or "-"), name, f"{row['online_score']:.2f}"]
        if final:
            cells += [_score(row.get("reviewer_score")), _score(row.get("final_score"))]
        verdict = row.get("latest_verdict") or ""
        cells += [Text(verdict, style=VERDICT_STYLE.get(verdict, "")), _hhmm(row.get("last_submission_at"))]
        style = "bright_black italic" if row.get("is_baseline") else ("bold cyan" if row.get("is_viewer") else None)
        table.add_row(*cells, style=style)
    if not rows:
        table.caption = "no results yet: the first accepted submission will appear here"
    return table


def _errors(errors: dict[str, Any], value_key: str, allowed_key: str) -> Text:
    text = Text()
    for i, (output, check) in enumerate(errors.items()):
        value, allowed = check.get(value_key), check.get(allowed_key)
        nan = isinstance(value, float) and math.isnan(value)
        bad = value is None or nan or check.get("passed") is False or (allowed is not None and value > allowed)
        text.append(("\n" if i else "") + f"{output} ")
        text.append(_sci(value), style="bold red" if bad else "green")
        text.append(f" / {_sci(allowed)}")
    return text if errors else Text("-")


def _sci(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return str(value)
    if value == 0:
        return "0"
    return f"{value:.3g}" if 1e-2 <= abs(value) < 1e4 else f"{value:.1e}"


def _ms(ns: float | None) -> str:
    return "-" if ns is None else (f"{ns / 1e6:.3f} ms" if ns >= 1e5 else f"{ns / 1e3:.2f} us")


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _hhmm(value: str | None) -> str:
    return "-" if not value else datetime.fromisoformat(value).astimezone().strftime("%H:%M")
