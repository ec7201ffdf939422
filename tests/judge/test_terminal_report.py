"""`opjudge judge`'s terminal report: whole case names off a terminal, and no error
figure for an output that held NaN or Inf (its errors cover the finite elements only)."""

from __future__ import annotations

import io

from rich.console import Console

from judge.backends import Backend, CaseSet
from judge.checking import nonfinite_reason
from judge.results import CaseResult, JudgeResult, OutputCheck
from judge.terminal_report import print_report
from judge.verdict import Verdict


def _check(*, passed: bool, err: float, reason: str = "") -> OutputCheck:
    return OutputCheck(passed=passed, max_abs_err=err, mere=0.0, mare=0.0, within_mixed_tol=1.0,
                       allowed_abs_err=1e-3, allowed_mere=1e-3, reason=reason)


def _printed(result: JudgeResult) -> str:
    out = io.StringIO()
    print_report(result, Console(file=out, width=80, force_terminal=False, color_system=None))
    return out.getvalue()


def test_case_names_are_whole_and_a_nan_output_shows_no_error_figure() -> None:
    nan = f"dq: {nonfinite_reason(12, 0, first=3, count=4096)}"
    result = JudgeResult(verdict=Verdict.WA, problem="sparse_flash_attention_grad", backend=Backend.CPU,
                         message="case t02_odd_fused_sizes_long_name: output dq is wrong", cases=[
        CaseResult("t01_small_dense_float32_case", CaseSet.TESTS, True, {"dq": _check(passed=True, err=5e-4)}),
        CaseResult("t02_odd_fused_sizes_long_name", CaseSet.TESTS, False,
                   {"dq": _check(passed=False, err=0.0, reason=nan)}, verdict=Verdict.WA, message=nan),
    ])
    text = _printed(result)
    assert "t01_small_dense_float32_case" in text and "t02_odd_fused_sizes_long_name" in text
    assert "…" not in text
    rows = [line for line in text.splitlines() if line.count("│") > 2]  # the table's rows, not the message
    nan_row = next(line for line in rows if "t02_odd_fused_sizes_long_name" in line)
    assert " NaN │" in nan_row and "0.000" not in nan_row
    ok_row = next(line for line in text.splitlines() if "t01_small_dense_float32_case" in line and "│" in line)
    assert "0.500" in ok_row  # a finite output keeps its figure: 5e-4 of 1e-3
