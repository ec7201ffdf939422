"""Before a contest: run every timed case's baseline once on this worker, and say which baseline times it.

Every ranked or benchmark judging times the problem's baseline beside the submission, case by case:
the vendor operator where the worker has one and the case is inside its contract for this worker's
vendor release (reference_kernels/<problem>/<backend>/vendor_baseline.py), else the baseline kernel. A
baseline that fails on a case it is given makes that judging IE, the judge's fault. So the organisers
find such a case before the contest, not a team: `opjudge doctor --baselines PROBLEM --backend B`
judges the baseline kernel's own sources as a submission over the timed sets, which runs every
timed case's baseline once beside it, and reports per case which baseline timed it and whether the
run went through (docs/operations.md, "Attach a new worker host to a queue").
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path

from judge.backends import Backend, CaseSet
from judge.baseline_trust import BASELINE_KERNEL, BaselineNames
from judge.builds import baseline_source_files
from judge.engine import JudgeRequest, judge_submission
from judge.host_config import HostConfig
from judge.modes import RunMode
from judge.problem import Problem
from judge.toolchains.base import SourceFile
from judge.tracks import get_track
from judge.verdict import Verdict

TIMED_SETS = (CaseSet.BENCHMARKS, CaseSet.PRIVATE)


class BaselineSourcesMissing(ValueError):
    """The problem has no baseline sources for this backend; the message says where they were looked for."""


@dataclass(frozen=True)
class PlannedCase:
    name: str
    case_set: str
    baseline: str  # the vendor operator's name, or BASELINE_KERNEL
    why_not_vendor: str | None  # the contract's reason when the baseline kernel times it


@dataclass
class BaselineCheckReport:
    problem: str
    backend: str
    vendor_release: str | None  # the worker's, as its track names it ("CANN 8.5.0"); None: the track has none
    planned: list[PlannedCase] = field(default_factory=list)
    verdict: str = ""  # of the judging of the baseline's own sources
    message: str = ""
    case_verdicts: dict[str, str] = field(default_factory=dict)
    timed_by: dict[str, str] = field(default_factory=dict)  # what the run's report says timed each case

    @property
    def ok(self) -> bool:
        return self.verdict == Verdict.AC.value and all(v == Verdict.AC.value for v in self.case_verdicts.values())

    def render(self) -> str:
        lines = [f"baselines of {self.problem} on {self.backend}"
                 + (f" ({self.vendor_release})" if self.vendor_release else "")]
        for case in self.planned:
            verdict = self.case_verdicts.get(case.name, "not run")
            timed = self.timed_by.get(case.name, case.baseline)
            why = f"  ({case.why_not_vendor})" if case.why_not_vendor and timed == BASELINE_KERNEL else ""
            lines.append(f"  {case.case_set:10} {case.name:28} {verdict:4} timed by {timed}{why}")
        lines.append(f"run: {self.verdict} {self.message}".rstrip())
        lines.append("baselines ready: yes" if self.ok else "baselines ready: NO (the judge's fault, not a team's: "
                     "fix the baseline or its contract before the contest)")
        return "\n".join(lines)


def baseline_sources(problem: Problem, backend: Backend) -> list[SourceFile]:
    """The baseline kernel's sources, as a team would submit them."""
    path = problem.baselines.get(backend)
    if path is None or not path.exists():
        raise BaselineSourcesMissing(f"problem {problem.slug} has no {backend.value} baseline (looked at {path})")
    return baseline_source_files(path)


def plan(problem: Problem, backend: Backend, host: HostConfig, *, vendor_name: str = "") -> list[PlannedCase]:
    """Which baseline would time each timed case here. `vendor_name` is the vendor operator the worker's
    runner reports ("" where it has none); the contract is the adapter's, for this worker's vendor release
    (its track's `vendor_release`)."""
    track = get_track(backend)
    release = track.vendor_release(track.runtime_options(host))
    reference_dir = host.reference_dir or Path(__file__).resolve().parent.parent / "reference_kernels"
    names = BaselineNames(vendor_name, reference_dir / problem.slug / backend.value, vendor_release=release)
    return [PlannedCase(c.name, c.case_set.value, names(c), names.reason(c))
            for c in problem.cases_for(backend, list(TIMED_SETS))]


def check_baselines(problem: Problem, backend: Backend, host: HostConfig, *,
                    secret: bytes = b"") -> BaselineCheckReport:
    """Judge the baseline's own sources over the timed sets: every timed case's baseline runs once."""
    track = get_track(backend)
    release = track.vendor_release(track.runtime_options(host))
    report = BaselineCheckReport(problem=problem.slug, backend=backend.value,
                                 vendor_release=" ".join(release) if release else None)
    request = JudgeRequest(problem=problem, backend=backend, sources=baseline_sources(problem, backend),
                           case_sets=TIMED_SETS, mode=RunMode.RANKED, secret=secret or secrets.token_bytes(32))
    result = judge_submission(request, host=host)
    report.planned = plan(problem, backend, host, vendor_name=result.conditions.python_baseline or "")
    report.verdict, report.message = result.verdict.value, result.message or ""
    for case in result.cases:
        report.case_verdicts[case.name] = case.verdict.value
        if case.baseline:
            report.timed_by[case.name] = case.baseline
    return report
