"""Results of each stage: nested dataclasses, one per stage, every field explained.

They are plain data: the CLI prints them, workers store them, `to_dict` gives
the JSON shape that `opjudge judge --json` prints and the API serves.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from judge.backends import Backend, CaseSet, Isolation
from judge.conditions import RunConditions, conditions_from_dict, conditions_from_host, is_legacy_key
from judge.modes import RunMode
from judge.verdict import Verdict


@dataclass
class PolicyFinding:
    rule: str  # the rule's stable name, e.g. "banned-include"
    message: str  # a sentence a student understands
    file: str | None = None  # source file or "<library>" for post-build checks
    line: int | None = None  # 1-based line in `file`, when known


@dataclass
class BuildResult:
    ok: bool  # the library was built
    verdict: Verdict | None  # CE, TLE, SV or IE when not ok
    library_path: str | None  # the shared object to load, when ok
    log: str  # compiler output, cut to the limit
    duration_s: float  # wall time of the build
    toolchain: str  # e.g. "g++ 12.2.0"
    command: list[str] = field(default_factory=list)  # the compiler command line, for the report
    findings: list[PolicyFinding] = field(default_factory=list)  # policy refusals
    # the preprocessed translation units the compiler compiled (for judge/policy/expanded.py);
    # empty where a toolchain cannot keep them (the NPU's CANN build)
    preprocessed: list[str] = field(default_factory=list)


@dataclass
class OutputCheck:
    passed: bool  # this output met the pass rule
    max_abs_err: float  # max |X - G|
    mere: float  # mean relative error over |G| above the dtype's floor
    mare: float  # max relative error over the same elements
    within_mixed_tol: float  # share of elements within CANN's rtol/atol, for information
    allowed_abs_err: float  # the bound max_abs_err had to meet
    allowed_mere: float  # the bound MERE had to meet
    reason: str = ""  # why it failed, in words (NaN, Inf, too large, ...)
    mere_floor: float = 0.0  # MERE and MARE were taken over |G| >= this (0: not recorded, older runs)

    @property
    def nonfinite(self) -> bool:
        """X held NaN or Inf (judge/checking.py `nonfinite_reason` words the reason): its errors were
        taken over the finite elements only, so they say nothing of the failure."""
        return " NaN value" in self.reason or " Inf value" in self.reason


@dataclass
class TimingStats:
    median_ns: float  # the scored figure
    mean_ns: float
    min_ns: float
    std_ns: float
    count: int  # timed calls


@dataclass
class CaseResult:
    name: str
    case_set: CaseSet
    passed: bool  # every output passed on every checked call
    outputs: dict[str, OutputCheck] = field(default_factory=dict)  # worst check per output
    verdict: Verdict = Verdict.AC  # this case's own verdict (WA, RE, TLE, ...)
    message: str = ""  # why it failed, naming the output or input
    timing: TimingStats | None = None  # the submission's times (timed sets only)
    baseline_timing: TimingStats | None = None  # the baseline's, interleaved in the same run
    baseline: str = ""  # what timed the baseline's side: a vendor operator's name or "baseline kernel"
    baseline_note: str = ""  # why the baseline kernel timed it in the vendor operator's place (the organisers')
    # The most kernel launches one timed call made, where the clock counts them (the NPU's device
    # timing); None elsewhere. The submission's are held to the competition's cap, the baseline's never.
    launches: int | None = None
    baseline_launches: int | None = None
    ratio: float | None = None  # t_sub / t_base of medians; None when not timed
    gflops: float | None = None  # achieved GFLOP/s at the median
    gbytes_per_s: float | None = None  # least traffic / median
    flops: float = 0.0  # the case's work, for the roofline chart
    min_bytes: float = 0.0  # least traffic: every input read once, every output written once
    checked_calls: int = 0  # outputs compared against the oracle on this case
    sizes: dict[str, Any] = field(default_factory=dict)  # shown to teams except for private cases


@dataclass
class JudgeResult:
    verdict: Verdict
    problem: str
    backend: Backend
    message: str  # the reason in plain words
    compile_log: str = ""
    score: float | None = None  # online score against the baseline (relative_to: baseline)
    set_scores: dict[str, float] = field(default_factory=dict)  # the same per timed set: benchmarks, private
    cases: list[CaseResult] = field(default_factory=list)
    findings: list[PolicyFinding] = field(default_factory=list)
    isolation: Isolation = Isolation.OFF
    stage_times_s: dict[str, float] = field(default_factory=dict)  # build, oracle, correctness, timing
    # The host, device and driver in the runtime's words and the timing phase's load figures, for people
    # to read; what code reads back is in `conditions` (judge/conditions.py)
    host: dict[str, str] = field(default_factory=dict)
    conditions: RunConditions = field(default_factory=RunConditions)
    kernel_output: str = ""  # the kernel's own stdout/stderr, capped, never parsed
    mode: RunMode = RunMode.RANKED  # which sets were judged (judge/modes.py)
    timing_profile_s: dict[str, float] = field(default_factory=dict)  # where the timing phase's time went
    # One judge.profiling.CaseProfile per public timed case, as JSON (judge/profiling/passes.py)
    profiles: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of `opjudge judge --json` and of the API's run results."""
        data = dataclasses.asdict(self)
        for case, raw in zip(self.cases, data["cases"], strict=True):
            raw["set"] = raw.pop("case_set")
            raw["median_ns"] = case.timing.median_ns if case.timing else None
        data["conditions"] = self.conditions.to_dict()
        return data


def result_from_dict(data: dict[str, Any]) -> JudgeResult:
    """Inverse of `JudgeResult.to_dict`, for workers and the store. A result written before the
    conditions had fields of their own (flat strings in `host`) reads with them converted."""
    cases = []
    for raw in data.get("cases", []):
        raw = dict(raw)
        raw.pop("median_ns", None)
        raw["case_set"] = CaseSet(raw.pop("set"))
        raw["verdict"] = Verdict(raw["verdict"])
        raw["outputs"] = {k: OutputCheck(**v) for k, v in raw.get("outputs", {}).items()}
        for key in ("timing", "baseline_timing"):
            if raw.get(key):
                raw[key] = TimingStats(**raw[key])
        cases.append(CaseResult(**raw))
    host, legacy = dict(data.get("host", {})), not isinstance(data.get("conditions"), dict)
    return JudgeResult(
        verdict=Verdict(data["verdict"]),
        problem=data["problem"],
        backend=Backend(data["backend"]),
        message=data.get("message", ""),
        compile_log=data.get("compile_log", ""),
        score=data.get("score"),
        set_scores=data.get("set_scores", {}),
        cases=cases,
        findings=[PolicyFinding(**f) for f in data.get("findings", [])],
        isolation=Isolation(data.get("isolation", "off")),
        stage_times_s=data.get("stage_times_s", {}),
        host={k: v for k, v in host.items() if not is_legacy_key(k)} if legacy else host,
        conditions=conditions_from_host(host) if legacy else conditions_from_dict(data["conditions"]),
        kernel_output=data.get("kernel_output", ""),
        mode=RunMode(data.get("mode", RunMode.RANKED.value)),
        timing_profile_s=data.get("timing_profile_s", {}),
        profiles=list(data.get("profiles", [])),
    )
