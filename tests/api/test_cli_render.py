"""The CLI's and the report's small views: 80-column tables, the queue line, chart labels."""

from __future__ import annotations

import re

from rich.console import Console

from api.client.render import board_table, case_table, queue_line
from api.web.pages.chart_labels import text_box
from api.web.pages.charts import LABEL_FONT, RooflinePoint, roofline_svg

CASES = [
    {"name": "t04_ragged_tokens_cut_short", "case_set": "benchmarks", "passed": True, "verdict": "AC",
     "errors": {"dq": {"max_abs_err": 1.2e-4, "allowed_abs_err": 2e-3, "mere": 1e-5, "allowed_mere": 1e-3,
                       "passed": True}},
     "median_ns": 12_345_678.0, "ratio": 0.987, "gflops": 123.4},
    {"name": "t01_one", "case_set": "tests", "passed": False, "verdict": "WA",
     "message": "y: 1 NaN value (the first at element 0 of 1)",
     "errors": {"y": {"max_abs_err": 0.0, "allowed_abs_err": 1e-3, "passed": False}}},
    {"name": "private 1", "case_set": "private", "passed": True, "verdict": "AC", "redacted": True},
]  # fmt: skip


def rendered(thing: object, width: int) -> str:
    console = Console(width=width, record=True, color_system="truecolor")
    console.print(thing)
    return console.export_text(styles=False)


def test_the_case_table_fits_80_columns_with_whole_numbers_and_the_reason_below() -> None:
    text = rendered(case_table(CASES, width=80), 80)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "12.346 ms" in text and "0.987x" in text and "1.2e-04 / 2.0e-03" in text
    assert "t01_one: y: 1 NaN value (the first at element 0 of 1)" in text  # under the table, not folded
    assert "MERE" not in text  # a wide-screen column
    assert "MERE/allowed" in rendered(case_table(CASES, width=140), 140)


def test_a_failed_outputs_error_is_red_even_when_zero() -> None:
    console = Console(width=80, record=True, color_system="truecolor", force_terminal=True)
    console.print(case_table(CASES, width=80))
    styled = console.export_text(styles=True)
    zero = re.search(r"y (\x1b\[[0-9;]*m)0(\x1b\[0m)? ", styled)
    assert zero is not None and "31" in zero.group(1)  # red (ANSI 31 family), not green


def test_the_board_fits_80_columns() -> None:
    board = {"title": "A contest with a long title", "final": False, "columns": [], "rows": [
        {"rank": i, "team_name": f"team-with-a-long-name-{i}", "online_score": 100.0 - i, "latest_verdict": "AC",
         "last_submission_at": "2026-12-01T09:00:00+00:00"} for i in range(1, 4)]}  # fmt: skip
    text = rendered(board_table(board), 80)
    assert max(len(line) for line in text.splitlines()) <= 80 and "team-with-a-long-name-3" in text


def test_the_board_keeps_the_disqualified_and_tie_markers() -> None:
    """`opjudge board` had dropped what the page shows."""
    rows = [{"rank": 1, "team_name": "alpha", "online_score": 90.0, "latest_verdict": "AC"},
            {"rank": 2, "team_name": "bravo", "online_score": 90.0, "latest_verdict": "AC"},
            {"rank": None, "team_name": "cheat", "online_score": 0.0, "disqualified": True}]  # fmt: skip
    text = rendered(board_table({"title": "Cup", "final": False, "columns": [], "rows": rows}), 140)
    assert text.count("tie: earlier first") == 2 and "cheat DISQUALIFIED" in text


def test_the_queue_line_says_place_and_wait() -> None:
    place = {"queue": "judge.cpu", "position": 3, "ahead": 2, "running": 1, "estimated_wait_s": 130.0}
    assert queue_line(place) == ("queue judge.cpu: number 3 (2 ahead, 1 being judged), about 2.2 min "
                                 "from recent judge times")  # fmt: skip
    assert queue_line({**place, "estimated_wait_s": None}).endswith("being judged)")


def test_chart_labels_keep_apart_and_the_roofs_stay_in_the_plot() -> None:
    svg = str(roofline_svg([RooflinePoint("b01", 0.25, 5.0), RooflinePoint("b02", 0.26, 5.1)],
                           peak_gflops=2000.0, peak_gbps=50.0, measured_gbps=None))  # fmt: skip
    xs = [float(v) for v in re.findall(r'<line class="roof" x1="([\d.]+)"[^>]* x2="([\d.]+)"', svg)[0]]
    xs += [float(v) for v in re.findall(r'<line class="roof" x1="([\d.]+)"[^>]* x2="([\d.]+)"', svg)[1]]
    assert all(62 <= x <= 640 - 18 for x in xs), xs  # inside LEFT .. WIDTH - RIGHT
    labels = re.findall(r'<text class="lbl" x="([\d.]+)" y="([\d.]+)">([^<]+)<', svg)
    first, second = (text_box(float(x), float(y), text, LABEL_FONT) for x, y, text in labels)
    assert not first.cuts(second)
