"""When a timing phase is marked disturbed (docs/rules.md, "Disturbed hosts"): the load, the steal or a
score whose own interval is too wide; the baseline's spread is recorded but decides nothing."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from judge import hostload
from judge.hostload import CpuTimes, describe
from judge.modes import RunMode
from judge.scoring import score_half_width_percent
from judge.verdict import Verdict
from tests.judge.conftest import judge_add_mul_relu_quickly


def test_a_scores_interval_follows_its_cases_intervals_and_slopes() -> None:
    one = 100 / math.log(1.5) * 0.02  # at r = 1 a 2 % wide ratio moves the case's 100 points by this much
    assert score_half_width_percent([(1.0, 0.02)]) == pytest.approx(one)
    assert score_half_width_percent([(1.0, 0.02)] * 4) == pytest.approx(one / 2)  # independent: sqrt(4) / 4
    slow = score_half_width_percent([(1.5, 0.02)])  # the score is 50 there and its slope a quarter
    assert slow == pytest.approx(100 * (100 / math.log(1.5) / 4 * 0.02) / 50)
    assert score_half_width_percent([(1.0, 0.02), (1.0, math.inf)]) == math.inf
    assert score_half_width_percent([]) == 0.0


def _describe(load: str = "0.50 0.40 0.30", steal: int = 0, spreads: tuple[float, ...] = (45.0,),
              widths: dict[str, float] | None = None) -> tuple[dict[str, str], str | None]:
    before, after = CpuTimes(busy=0, total=1000, steal=0), CpuTimes(busy=500, total=2000, steal=steal)
    return describe(load_before=load, before=before, after=after, baseline_spreads=list(spreads),
                    score_half_widths=widths)


def test_a_noisy_baseline_with_a_precise_score_is_not_disturbed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hostload, "load_average", lambda: "0.90 0.50 0.30")
    figures, disturbed = _describe(widths={"benchmarks": 2.1, "private": 3.9})
    assert disturbed is None
    assert figures["baseline_spread_percent"] == "median 45.00, worst 45.00"  # kept as a figure
    assert figures["score_half_width_percent"] == "benchmarks 2.10, private 3.90"


def test_a_score_known_too_roughly_marks_the_phase(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hostload, "load_average", lambda: "0.90 0.50 0.30")
    _, disturbed = _describe(widths={"benchmarks": 2.0, "private": 4.6})
    assert disturbed == "the private score is known to +-4.6 % only (95 %)"


def test_load_and_steal_still_mark_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hostload, "load_average", lambda: "7.00 5.00 3.00")
    monkeypatch.setattr(hostload.os, "sched_getaffinity", lambda pid: {0, 1})
    _, disturbed = _describe(load="5.82 4.00 3.00", steal=100, widths={"benchmarks": 1.0})
    assert disturbed == "load average 7.00 on 2 CPUs; 10.0 % CPU steal"


def test_each_sets_interval_reads_back_and_a_later_phase_keeps_the_others() -> None:
    text = hostload.format_widths({"benchmarks": 2.104, "private": math.inf})
    assert text == "benchmarks 2.10, private inf"
    assert hostload.parse_widths(text) == {"benchmarks": 2.1, "private": math.inf}
    assert hostload.parse_widths("benchmarks x, , private 3.5") == {"private": 3.5}


@pytest.mark.slow
def test_a_ranked_run_records_both_sets_intervals(tmp_path: Path, no_forged_timer_check: None) -> None:
    """The public and the private cases are timed by two children, one phase each: both figures stay."""
    result: Any = judge_add_mul_relu_quickly(tmp_path, RunMode.RANKED)
    assert result.verdict is Verdict.AC, result.message
    widths = hostload.parse_widths(result.host[hostload.SCORE_WIDTH_KEY])
    assert set(widths) == {"benchmarks", "private"} and all(width > 0 for width in widths.values())
