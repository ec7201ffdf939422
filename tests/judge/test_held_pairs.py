"""A timed pair's two calls run back to back: the first child holds its after-call checks and its
report until the second call has run (docs/rules.md, "Timing"), in real runner children."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from judge.modes import RunMode
from judge.runner.framing import ChannelTimeout
from judge.runner.session import RunnerSession
from judge.verdict import Verdict
from tests.judge.conftest import judge_add_mul_relu_quickly

SILENCE_CHECKS = 3  # held calls whose child is watched for silence (0.2 s each)


def test_a_pairs_first_child_reports_only_after_the_second_call_ran(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   no_forged_timer_check: None) -> None:
    events: list[tuple[Any, ...]] = []
    silent: list[bool] = []
    run, report = RunnerSession.run, RunnerSession.report

    def spied_run(self: RunnerSession, timeout_s: float, at_armed: Any = None) -> None:
        pending = self._pending
        if pending is None or pending.ran_ns:  # `report` runs a call only when nothing ran it
            return run(self, timeout_s, at_armed)
        held = pending.hold_report
        run(self, timeout_s, at_armed)
        events.append(("run", id(self), held))
        if held and len(silent) < SILENCE_CHECKS:
            try:  # the child has said "ran" and nothing more: it waits for "report"
                self._reader.wait(0.2)
                silent.append(False)
            except ChannelTimeout:
                silent.append(True)

    def spied_report(self: RunnerSession, timeout_s: float) -> Any:
        events.append(("report", id(self)))
        return report(self, timeout_s)

    monkeypatch.setattr(RunnerSession, "run", spied_run)
    monkeypatch.setattr(RunnerSession, "report", spied_report)
    result: Any = judge_add_mul_relu_quickly(tmp_path, RunMode.BENCHMARK)
    assert result.verdict is Verdict.AC, result.message
    assert silent == [True] * SILENCE_CHECKS
    held = [index for index, event in enumerate(events) if event[0] == "run" and event[2]]
    assert len(held) >= 10
    for index in held:
        first = events[index][1]
        second_run, first_report, second_report = events[index + 1 : index + 4]
        assert second_run[0] == "run" and second_run[1] != first and not second_run[2]
        assert first_report == ("report", first) and second_report == ("report", second_run[1])
