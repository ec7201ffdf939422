"""A fresh pair of runner children every few timed cases (judge/timing_children.py, docs/rules.md
"Timing"): the old submission child has ended before the new one loads the team's code, the new
baseline child is ready first, a private group's fresh children are new processes, second-pass
rounds stay in the current pair, and every child is ended."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from judge.backends import CaseSet
from judge.limits import CPU_LIMITS
from judge.problem import Case
from judge.runner.session import RunnerSession
from judge.timing_children import TimingChildren
from judge.verdict import Verdict
from tests.judge.test_early_children import _judge, events  # noqa: F401  (a fixture, used by name)


class FakeChild:
    def __init__(self, name: str, log: list[str]) -> None:
        self.name, self.log, self.vendor_failures = name, log, {"b9": "why"} if name == "base0" else {}

    def start(self) -> None:
        self.log.append(f"start {self.name}")

    def __enter__(self) -> FakeChild:
        self.log.append(f"enter {self.name}")
        return self

    def ready(self) -> dict[str, str]:
        self.log.append(f"ready {self.name}")
        return {}

    def __exit__(self, *exc: object) -> None:
        self.log.append(f"exit {self.name}")

    def output_text(self) -> str:
        return f"<{self.name}>"


def _case(name: str) -> Case:
    return Case(name=name, case_set=CaseSet.BENCHMARKS, params={}, dtype="float32", seed=0)


def _children(every: int, log: list[str]) -> TimingChildren:
    made: Any = {"sub": 0, "base": 0}

    def new(kind: str) -> Any:
        made[kind] += 1
        return FakeChild(f"{kind}{made[kind]}", log)

    return TimingChildren(FakeChild("sub0", log), FakeChild("base0", log), every=every, public=True,  # type: ignore[arg-type]
                          new_child=lambda n: new("sub"), new_baseline=lambda n: new("base"))


def test_a_fresh_pair_every_other_case_in_the_first_pass_only() -> None:
    log: list[str] = []
    children = _children(2, log)
    children.begin_attempt()
    fresh = [children.before(_case(n)) for n in ("b1", "b2", "b3", "b4", "b5")]
    assert fresh == [False, False, True, False, True]
    assert children.pairs == 3
    assert children.before(_case("b2")) is False  # a second-pass round: the current pair
    assert log[:6] == ["exit sub0", "exit base0", "enter base1", "start sub1", "ready base1", "enter sub1"]
    assert children.baseline.vendor_failures == {"b9": "why"}  # carried to the new baseline
    assert children.output_text() == "<sub0><sub1><sub2>"
    children.begin_attempt()  # a retimed phase starts in the current pair, then renews as the first did
    assert [children.before(_case(n)) for n in ("b1", "b2", "b3")] == [False, False, True]


def test_none_renewed_when_off() -> None:
    log: list[str] = []
    children = _children(0, log)
    children.begin_attempt()
    assert not any(children.before(_case(n)) for n in ("b1", "b2", "b3"))
    assert log == [] and children.pairs == 1


def test_each_timed_case_in_a_pair_of_its_own(
        tmp_path: Path, events: tuple[list[tuple[str, str]], list[RunnerSession]],  # noqa: F811
        no_forged_timer_check: None, monkeypatch: Any) -> None:
    seen, sessions = events
    monkeypatch.setattr("tests.judge.test_early_children.CPU_LIMITS",
                        dataclasses.replace(CPU_LIMITS, cases_per_timing_pair=1))
    result: Any = _judge(tmp_path, Path(__file__).resolve().parents[2]
                         / "reference_kernels" / "add_mul_relu" / "cpu" / "baseline.cpp")
    assert result.verdict is Verdict.AC, result.message
    timed = [c for c in result.cases if c.case_set.timed]
    assert len(timed) == 4 and all(c.ratio for c in timed)
    # The public group's second case: the old submission child ends before the new one's hello,
    # and the new baseline child is launched first.
    assert seen.index(("exit", "run")) < seen.index(("start", "run-1"))
    assert seen.index(("hello", "baseline-run-1")) < seen.index(("hello", "run-1"))
    # The private group: its first child gets its hello only after every public child has ended,
    # and its second case runs in processes started after that.
    assert seen.index(("exit", "run-1")) < seen.index(("hello", "private-run"))
    assert seen.index(("exit", "private-run")) < seen.index(("start", "private-run-1"))
    assert seen.index(("hello", "baseline-run-2")) < seen.index(("hello", "private-run-1"))
    names = [s.spec.workdir.name for s in sessions]
    assert sorted(names) == sorted(["baseline-run", "run", "private-run", "baseline-run-1", "run-1",
                                    "baseline-run-2", "private-run-1"])
    assert all(s._closed for s in sessions)
    assert result.timing_profile_s["child_starts"] > 0
    # The profile covers both groups' timing, not only the private group's.
    assert result.timing_profile_s["timed_pairs"] == sum(c.timing.count for c in timed)
    assert {c.case_set.value for c in timed} == {"benchmarks", "private"}
