"""A vendor baseline that fails on a case its contract takes: the baseline kernel times it.

Before, the failure surfaced in the baseline's child and the team's run ended IE. Now the child tries
the operator once per case, untimed, before its first use; on failure it times the baseline kernel
instead and says why in its call report, and the worker names the baseline kernel in the run's report
and logs the reason for the organisers.
"""

from __future__ import annotations

import logging
import types
from typing import Any

import pytest

from judge.backends import CaseSet
from judge.problem import Case
from judge.runner.baseline_session import BaselineRunner
from judge.runner.calls import CallOutcome
from judge.runner.child.main import Child
from judge.runner.protocol import CallReport

CASE = Case(name="b06_mla_absorb_bs16", case_set=CaseSet.BENCHMARKS, dtype="float16", seed=1, flags=(),
            params={"K": 1024})


class _Operator:
    def __init__(self, error: Exception | None) -> None:
        self.error, self.runs = error, 0

    def run(self, prepared: dict[str, Any]) -> int:
        self.runs += 1
        if self.error is not None:
            raise self.error
        return 0


def _child() -> Any:
    synced: list[int] = []
    runtime = types.SimpleNamespace(synchronize=lambda: synced.append(1))
    return types.SimpleNamespace(vendor_failed={}, vendor_tried=set(), runtime=runtime, synced=synced)


def test_the_operator_is_tried_once_per_case_untimed() -> None:
    child, operator = _child(), _Operator(None)
    assert Child._vendor_runs(child, CASE, operator, {}) is True
    assert Child._vendor_runs(child, CASE, operator, {}) is True
    assert operator.runs == 1 and child.synced == [1] and child.vendor_failed == {}


def test_an_operator_that_fails_hands_the_case_to_the_baseline_kernel(capsys: pytest.CaptureFixture[str]) -> None:
    child = _child()
    operator = _Operator(RuntimeError("tiling failed: only support selected_block_count=2048 now"))
    assert Child._vendor_runs(child, CASE, operator, {}) is False
    assert Child._vendor_runs(child, CASE, operator, {}) is False  # not tried again
    assert operator.runs == 1
    assert child.vendor_failed[CASE.name].startswith("RuntimeError: tiling failed")
    assert "vendor baseline failed on case b06_mla_absorb_bs16" in capsys.readouterr().err


def _report(**extra: Any) -> dict[str, Any]:
    return {"rc": 0, "elapsed_ns": 5, "digest_before": {}, "digest_after": {}, "new_threads": 0, "late_writes": [],
            "outputs": {}, **extra}


def test_the_call_report_carries_the_reason_bounded() -> None:
    assert CallReport.from_wire(_report(), frozenset()).vendor_failed == ""
    report = CallReport.from_wire(_report(vendor_failed="x" * 5000), frozenset())
    assert report.vendor_failed == "x" * 400


class _Session:
    def __init__(self, outcome: CallOutcome) -> None:
        self.outcome = outcome

    def set_case(self, case: Case, timeout_s: float) -> None:
        pass

    def begin(self, lib: str, seed: int, *, recheck_ms: int = 0, hold: bool = False,
              hold_report: bool = False) -> None:
        pass

    def report(self, timeout_s: float) -> CallOutcome:
        return self.outcome


def test_the_worker_records_the_failure_for_the_report_and_the_organisers(caplog: pytest.LogCaptureFixture) -> None:
    outcome = CallOutcome(rc=0, elapsed_ns=5, digest_before={}, digest_after={}, new_threads=0, late_writes=[],
                          vendor_failed="RuntimeError: tiling failed")
    runner = BaselineRunner(_Session(outcome))  # type: ignore[arg-type]
    runner.set_case(CASE, 1.0)
    with caplog.at_level(logging.ERROR, logger="opjudge.judge"):
        runner.call("baseline", 1, timeout_s=1.0)
        runner.call("baseline", 2, timeout_s=1.0)
    assert runner.vendor_failures == {CASE.name: "RuntimeError: tiling failed"}
    assert [r.message for r in caplog.records].count(next(r.message for r in caplog.records)) == 1
    assert "doctor --baselines" in caplog.records[0].message
