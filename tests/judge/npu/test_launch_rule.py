"""The one-launch rule of device timing: the team's kernel is capped, the vendor baseline never is."""

from __future__ import annotations

import pytest

from judge.backends import Backend, CaseSet
from judge.results import CaseResult, JudgeResult, result_from_dict
from judge.runner.child.kernel import KernelFault, check_launches
from judge.runner.protocol import CallReport, ProtocolViolation
from judge.verdict import Verdict


def test_the_cap_holds_the_submission_only() -> None:
    check_launches("submission", 1, 1, 0)
    with pytest.raises(KernelFault, match="ran 3 device tasks in one call.*allows 1 launch per call"):
        check_launches("submission", 3, 1, 0)
    # The vendor operator launches several kernels (tiling, the kernel, memsets): recorded, not capped.
    check_launches("baseline", 3, 1, 0)
    check_launches("submission", 3, 0, 0)  # no cap set: any number


def test_a_call_the_profiler_saw_no_task_of_is_never_timed_as_zero() -> None:
    with pytest.raises(RuntimeError, match="no device task"):
        check_launches("baseline", 0, 0, 0)
    check_launches("submission", 0, 1, 3)  # a failed call is RE for its return code, not for this


HEADER = {"op": "call", "rc": 0, "elapsed_ns": 10, "digest_before": {}, "digest_after": {}, "new_threads": 0,
          "late_writes": [], "outputs": {}}


def test_the_call_report_carries_launches_and_checks_them() -> None:
    assert CallReport.from_wire({**HEADER, "launches": 2}, frozenset()).launches == 2
    assert CallReport.from_wire(HEADER, frozenset()).launches == -1  # not counted (events, CPU, CUDA)
    for forged in (-5, "2", 1.5, True):
        with pytest.raises(ProtocolViolation):
            CallReport.from_wire({**HEADER, "launches": forged}, frozenset())


def test_launches_survive_the_results_json() -> None:
    result = JudgeResult(verdict=Verdict.AC, problem="p", backend=Backend.NPU, message="", cases=[
        CaseResult(name="b1", case_set=CaseSet.BENCHMARKS, passed=True, launches=1, baseline_launches=4)])
    back = result_from_dict(result.to_dict())
    assert (back.cases[0].launches, back.cases[0].baseline_launches) == (1, 4)
