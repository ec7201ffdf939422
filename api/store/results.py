"""Run results: case rows written from a `JudgeResult`, and the views read back.

Teams see their private cases as pass/fail only (docs/rules.md: sizes are shown
except for private cases), so the run's message too when a private case decided
the verdict, and never see reproduction runs or flags.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from api.store.enums import RunKind
from api.store.models import CaseResultRow, Competition, Run, Submission
from api.store.views import CaseView, RunView
from judge.backends import CaseSet
from judge.conditions import stored_conditions
from judge.results import JudgeResult
from judge.verdict import Verdict


def write_cases(session: Session, *, run_id: int, result: JudgeResult) -> None:
    """Replace the run's case rows with those of `result` (a re-delivered result writes the same)."""
    session.execute(delete(CaseResultRow).where(CaseResultRow.run_id == run_id))
    for position, case in enumerate(result.cases):
        timing, base = case.timing, case.baseline_timing
        session.add(
            CaseResultRow(
                run_id=run_id,
                position=position,
                name=case.name,
                case_set=case.case_set,
                passed=case.passed,
                verdict=case.verdict,
                message=case.message,
                errors={k: dataclasses.asdict(v) for k, v in case.outputs.items()},
                sizes=dict(case.sizes),
                median_ns=timing.median_ns if timing else None,
                mean_ns=timing.mean_ns if timing else None,
                min_ns=timing.min_ns if timing else None,
                std_ns=timing.std_ns if timing else None,
                count=timing.count if timing else None,
                baseline_median_ns=base.median_ns if base else None,
                ratio=case.ratio,
                gflops=case.gflops,
                gbytes_per_s=case.gbytes_per_s,
                flops=case.flops,
                checked_calls=case.checked_calls,
                baseline=case.baseline,
                baseline_note=case.baseline_note,
                launches=case.launches,
                baseline_launches=case.baseline_launches,
            )
        )


def case_rows(session: Session, run_ids: Iterable[int]) -> dict[int, list[CaseResultRow]]:
    """Case rows of several runs, in report order."""
    ids = list(run_ids)
    found: dict[int, list[CaseResultRow]] = {i: [] for i in ids}
    if ids:
        query = select(CaseResultRow).where(CaseResultRow.run_id.in_(ids)).order_by(CaseResultRow.position)
        for row in session.scalars(query):
            found[row.run_id].append(row)
    return found


def run_views(session: Session, runs: list[Run], *, team_view: bool) -> list[RunView]:
    """Views of `runs` with their cases; `team_view` hides what a team must not see."""
    if team_view:
        runs = [r for r in runs if r.kind is not RunKind.REPRODUCTION]
    cases = case_rows(session, [r.id for r in runs])
    published = _published(session, runs) if team_view else set()
    return [_run_view(run, cases[run.id], team_view=team_view, per_private_case=run.submission_id in published)
            for run in runs]


def _published(session: Session, runs: list[Run]) -> set[int]:
    """The submissions among `runs`' whose competition has published its final ranking."""
    ids = {r.submission_id for r in runs}
    if not ids:
        return set()
    query = (select(Submission.id).join(Competition, Competition.id == Submission.competition_id)
             .where(Submission.id.in_(ids), Competition.final_published.is_(True)))
    return set(session.scalars(query))


def _run_view(run: Run, cases: list[CaseResultRow], *, team_view: bool, per_private_case: bool = True) -> RunView:
    return RunView(
        id=run.id, submission_id=run.submission_id, kind=run.kind, status=run.status, queue=run.queue,
        attempt=run.attempt, created_at=run.created_at, queued_at=run.queued_at, started_at=run.started_at,
        finished_at=run.finished_at, stage=run.stage, stage_times=dict(run.stage_times), verdict=run.verdict,
        message=_team_message(run, cases) if team_view else run.message, compile_log=run.compile_log,
        kernel_output=run.kernel_output, findings=list(run.findings), score=run.score,
        worker_host=None if team_view else run.worker_host, device=run.device, toolchain=run.toolchain,
        driver=run.driver, isolation=run.isolation, reproduction_of=None if team_view else run.reproduction_of,
        flagged=False if team_view else run.flagged, flag_reason="" if team_view else run.flag_reason,
        cases=_case_views(cases, team_view=team_view, per_private_case=per_private_case),
        timing=run_timing(run.worker_info or {}), profiles=public_profiles(run, cases),
        disturbed=run.disturbed or "", timing_attempts=stored_conditions(run.worker_info).timing_attempts,
    )  # fmt: skip


TIMING_KEYS = ("timing", "timing_detail", "max_launches")  # judge/tracks/npu/runtime.py timing_record


def run_timing(info: dict[str, Any]) -> dict[str, str]:
    """Which clock timed the run, as the worker recorded it (the NPU track's; empty elsewhere)."""
    return {key: str(info[key]) for key in TIMING_KEYS if key in info}


def public_profiles(run: Run, cases: list[CaseResultRow]) -> list[dict[str, Any]]:
    """The run's case profiles (kept in `worker_info`), for public cases only: the judge never profiles
    a private one, and a profile naming one would not be shown to anyone either."""
    public = {c.name for c in cases if c.case_set is not CaseSet.PRIVATE}
    stored = (run.worker_info or {}).get("profiles") or []
    return [p for p in stored if isinstance(p, dict) and p.get("case") in public]


def _team_message(run: Run, cases: list[CaseResultRow]) -> str:
    """The run's message as its team may see it.

    The judge copies the deciding failure's message into the run's (judge/pipeline.py
    `_conclude`), and for a private case that names its sizes and errors: replace it.
    """
    if _deciding_failure_is_private(run.verdict, cases) or _quotes_a_private_case(run.message, cases):
        verdict = run.verdict.value if run.verdict else "failed"
        return f"{verdict} on a private case (private cases report pass or fail only)"
    return run.message


def _deciding_failure_is_private(verdict: Verdict | None, cases: list[CaseResultRow]) -> bool:
    """Whether the failure the run's verdict comes from, picked as `_conclude` does, is a private case."""
    failures = [c for c in cases if not c.passed]
    deciding = next((c for c in failures if c.verdict is verdict), failures[0] if failures else None)
    return deciding is not None and deciding.case_set is CaseSet.PRIVATE


def _quotes_a_private_case(message: str, cases: list[CaseResultRow]) -> bool:
    # Belt and braces: a message built elsewhere that repeats a private case's own message.
    return any(c.case_set is CaseSet.PRIVATE and c.message and c.message in message for c in cases)


def _case_views(rows: list[CaseResultRow], *, team_view: bool, per_private_case: bool = True) -> list[CaseView]:
    """A team sees a private case as "private <n>": the package's names say sizes (`p01_48m_f16`).
    Until its competition's final ranking is published (`per_private_case` False) it sees one row for
    the private set as a whole, "private cases", passed only when every one did: a pass or fail per
    case under a stable label is one bit per run per case, enough to find each size by binary search
    (docs/rules.md)."""
    views, hidden = [], 0
    private = [r for r in rows if r.case_set is CaseSet.PRIVATE]
    for row in rows:
        if team_view and row.case_set is CaseSet.PRIVATE and not per_private_case:
            if row is private[0]:
                failed = [r for r in private if not r.passed]
                whole = failed[0] if failed else row
                views.append(dataclasses.replace(_case_view(whole, redact=True, name="private cases"),
                                                 passed=not failed))
            continue
        if team_view and row.case_set is CaseSet.PRIVATE:
            hidden += 1
            views.append(_case_view(row, redact=True, name=f"private {hidden}"))
        else:
            views.append(_case_view(row, redact=False))
    return views


def _case_view(row: CaseResultRow, *, redact: bool, name: str = "") -> CaseView:
    if redact:
        return CaseView(
            name or row.name,
            row.case_set,
            row.passed,
            row.verdict,
            "",
            {},
            {},
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            0.0,
            redacted=True,
        )
    return CaseView(
        name=row.name, case_set=row.case_set, passed=row.passed, verdict=row.verdict, message=row.message,
        errors=dict(row.errors), sizes=dict(row.sizes), median_ns=row.median_ns, mean_ns=row.mean_ns,
        min_ns=row.min_ns, std_ns=row.std_ns, count=row.count, baseline_median_ns=row.baseline_median_ns,
        ratio=row.ratio, gflops=row.gflops, gbytes_per_s=row.gbytes_per_s, flops=row.flops, redacted=False,
        launches=row.launches, baseline_launches=row.baseline_launches,
    )  # fmt: skip
