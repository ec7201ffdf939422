"""Re-audit under today's policy (docs/organisers.md, "Organiser jobs"): every stored submission's sources through
the current policy check (judge/policy), and on request rebuilt and its preprocessed units and
library checked again, as a judge run would. The outcome lists what the current policy refuses,
with the rule and the place; nothing is disqualified or rejudged here (organisers do that by hand).
"""

from __future__ import annotations

import logging
import shutil
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any

from api.store.db import Session
from api.store.jobs import JobView, StoredSubmission, stored_submissions
from judge.backends import Backend
from judge.engine import JudgeRequest, SilentReporter
from judge.errors import JudgeError
from judge.policy import check_sources
from judge.problem import Problem, load_problem
from judge.results import JudgeResult, PolicyFinding
from judge.toolchains.base import SourceFile
from judge.tracks import get_track
from judge.verdict import Verdict
from workers.context import WorkerContext

log = logging.getLogger("opjudge.worker")
MAX_FINDINGS = 5  # per submission: the first ones say enough to decide


@dataclass(frozen=True)
class Refusal:
    submission_id: int
    team_id: int
    team: str
    problem: str
    backend: str
    verdict: str | None  # the stored verdict, to tell new refusals from old SVs
    disqualified: bool
    stage: str  # "sources" or "build" (preprocessed units and library)
    rule: str
    file: str | None
    line: int | None
    message: str


@dataclass
class ReauditOutcome:
    scanned: int = 0
    rebuilt: int = 0
    refused: list[Refusal] = field(default_factory=list)
    not_rebuilt: list[dict[str, Any]] = field(default_factory=list)  # why a rebuild was not possible

    def as_json(self) -> dict[str, Any]:
        refused_ids = {r.submission_id for r in self.refused}
        return {"scanned": self.scanned, "rebuilt": self.rebuilt, "refused_submissions": len(refused_ids),
                "refused": [asdict(r) for r in self.refused], "not_rebuilt": self.not_rebuilt}  # fmt: skip


def reaudit(ctx: WorkerContext, session: Session, job: JobView) -> dict[str, Any]:
    """Rescan (and with `rebuild` in the job's params, rebuild and recheck) every submission."""
    rebuild = bool(job.params.get("rebuild"))
    outcome = ReauditOutcome()
    problems: dict[str, Problem] = {}
    for sub in stored_submissions(session, competition_id=job.competition_id):
        outcome.scanned += 1
        problem = problems.get(sub.problem)
        if problem is None:
            problem = problems[sub.problem] = load_problem(sub.problem, ctx.settings.problems_dir,
                                                           ctx.settings.reference_dir)  # fmt: skip
        sources = [SourceFile(name, content) for name, content in sub.files]
        findings = check_sources(sub.backend, sources, get_track(sub.backend).limits,
                                 problem_headers=[problem.header.name])  # fmt: skip
        if findings:
            outcome.refused += _refusals(sub, "sources", findings)
        elif rebuild:
            _rebuild(ctx, sub, problem, sources, outcome)
    log.info("reaudit job %s: %d scanned, %d refused", job.id, outcome.scanned, len(outcome.refused))
    return outcome.as_json()


def _rebuild(ctx: WorkerContext, sub: StoredSubmission, problem: Problem, sources: list[SourceFile],
             outcome: ReauditOutcome) -> None:  # fmt: skip
    from judge.builds import build_kernels
    from judge.sandbox.select import make_sandbox

    host = ctx.host_config(sub.backend)
    workdir = host.work_root / f"reaudit-{uuid.uuid4().hex[:12]}"
    workdir.mkdir(parents=True)
    result = JudgeResult(verdict=Verdict.AC, problem=sub.problem, backend=sub.backend, message="")
    try:
        build_kernels(JudgeRequest(problem, sub.backend, sources), host=host, track=get_track(sub.backend),
                      sandbox=make_sandbox(host.sandbox_mode), workdir=workdir, reporter=SilentReporter(),
                      result=result)  # fmt: skip
    except (JudgeError, OSError) as error:  # no toolchain for this backend here, a sandbox missing, ...
        outcome.not_rebuilt.append({"submission_id": sub.id, "reason": f"{type(error).__name__}: {error}"})
        return
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    outcome.rebuilt += 1
    if result.verdict is Verdict.SV:
        outcome.refused += _refusals(sub, "build", result.findings)
    elif result.verdict is not Verdict.AC:
        outcome.not_rebuilt.append({"submission_id": sub.id, "reason": f"{result.verdict}: {result.message}"})


def _refusals(sub: StoredSubmission, stage: str, findings: list[PolicyFinding]) -> list[Refusal]:
    return [
        Refusal(sub.id, sub.team_id, sub.team_name, sub.problem, Backend(sub.backend).value,
                sub.verdict.value if sub.verdict else None, sub.disqualified, stage, f.rule, f.file, f.line, f.message)
        for f in findings[:MAX_FINDINGS]
    ]  # fmt: skip
