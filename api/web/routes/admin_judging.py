"""Organisers act on results: rejudge, disqualify, reproduce, export, and watch runs and workers."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse

from api.dispatch import DispatchReport, dispatch_pending, dispatch_runs, queue_for
from api.store.audit import list_audit, record_audit
from api.store.competitions import get_competition
from api.store.disturbed import list_disturbed
from api.store.exports import ExportKind, csv_value, export_rows, log_export
from api.store.rejudge import rejudge, start_reproductions
from api.store.reproduction import list_reproductions
from api.store.submission_refs import submission_id_of
from api.store.submissions import disqualify_submission, list_submissions
from api.store.workers import list_workers, queue_load
from api.web.deps import AdminDep, DatabaseDep, DispatcherDep, NowDep, SessionDep, SettingsDep, WriteSessionDep
from api.web.schemas.bounds import IdFilter, SubmissionRef
from api.web.schemas.judging import (
    AuditPublic,
    DisqualifyCreate,
    DisturbedRunPublic,
    QueueLoadPublic,
    RejudgeCreate,
    ReproductionCreate,
    ReproductionPublic,
    RunsAccepted,
    WorkerPublic,
)
from api.web.schemas.submissions import SubmissionAdminPublic

router = APIRouter(prefix="/api/v1/admin", tags=["organisers"])


def _accepted(run_ids: list[int], report: DispatchReport) -> RunsAccepted:
    message = f"{len(report.queued)} run(s) queued"
    if report.pending:
        message += f"; {len(report.pending)} stay pending until the queue is back ({report.reason})"
    return RunsAccepted(run_ids=run_ids, queued=report.queued, pending=report.pending, message=message)


@router.post("/competitions/{slug}/rejudge", status_code=202, response_model=RunsAccepted)
def rejudge_runs(
    slug: str,
    body: RejudgeCreate,
    admin: AdminDep,
    session: SessionDep,
    settings: SettingsDep,
    dispatcher: DispatcherDep,
    now: NowDep,
) -> RunsAccepted:
    """Rejudge a submission, a team's submissions or a problem's; earlier results count until then."""
    submission_id = submission_id_of(session, body.submission_id) if body.submission_id is not None else None
    runs = rejudge(session, competition=slug, actor=admin, now=now, queue_of=lambda b: queue_for(b, settings),
                   submission_id=submission_id, team_id=body.team_id, problem=body.problem)  # fmt: skip
    return _accepted([r.run_id for r in runs], dispatch_runs(session, dispatcher, runs, now=now))


@router.post("/submissions/{submission_id}/disqualify", response_model=SubmissionAdminPublic)
def disqualify(
    submission_id: SubmissionRef, body: DisqualifyCreate, admin: AdminDep, session: SessionDep, now: NowDep
) -> SubmissionAdminPublic:
    """Disqualify a submission (by its database or public id): kept and shown, never ranked; the reason is
    recorded."""
    found = disqualify_submission(session, submission_id=submission_id_of(session, submission_id),
                                  reason=body.reason, actor=admin, now=now)  # fmt: skip
    return SubmissionAdminPublic.model_validate(found)


@router.delete("/submissions/{submission_id}/disqualify", response_model=SubmissionAdminPublic)
def reinstate(submission_id: SubmissionRef, admin: AdminDep, session: SessionDep, now: NowDep) -> SubmissionAdminPublic:
    """Undo a disqualification."""
    found = disqualify_submission(session, submission_id=submission_id_of(session, submission_id), reason=None,
                                  actor=admin, now=now)  # fmt: skip
    return SubmissionAdminPublic.model_validate(found)


@router.post("/competitions/{slug}/reproductions", status_code=202, response_model=RunsAccepted)
def reproduce(
    slug: str,
    body: ReproductionCreate,
    admin: AdminDep,
    session: SessionDep,
    settings: SettingsDep,
    dispatcher: DispatcherDep,
    now: NowDep,
) -> RunsAccepted:
    """Re-run the ranked entries of the top N teams (private set); far-off results get flagged."""
    runs = start_reproductions(session, competition=slug, top_n=body.top_n, actor=admin, now=now,
                               queue_of=lambda b: queue_for(b, settings))  # fmt: skip
    return _accepted([r.run_id for r in runs], dispatch_runs(session, dispatcher, runs, now=now))


@router.get("/competitions/{slug}/reproductions", response_model=list[ReproductionPublic])
def reproductions(slug: str, _admin: AdminDep, session: SessionDep) -> list[ReproductionPublic]:
    competition = get_competition(session, slug=slug)
    return [ReproductionPublic.model_validate(r) for r in list_reproductions(session, competition_id=competition.id)]


@router.get("/competitions/{slug}/disturbed", response_model=list[DisturbedRunPublic])
def disturbed_runs(slug: str, _admin: AdminDep, session: SessionDep) -> list[DisturbedRunPublic]:
    """Runs timed on a host that stayed disturbed through re-timing, the ones that count first: rejudge their
    submissions (POST .../rejudge) to re-time them; until then a ranked one stays out of the final ranking."""
    competition = get_competition(session, slug=slug)
    return [DisturbedRunPublic.model_validate(r) for r in list_disturbed(session, competition_id=competition.id)]


@router.get("/competitions/{slug}/submissions", response_model=list[SubmissionAdminPublic])
def all_submissions(
    slug: str,
    _admin: AdminDep,
    session: SessionDep,
    problem: str | None = None,
    team_id: IdFilter | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    before_id: IdFilter | None = None,
) -> list[SubmissionAdminPublic]:
    """Every team's submissions, newest first."""
    competition = get_competition(session, slug=slug)
    found = list_submissions(session, competition_id=competition.id, team_id=team_id, problem=problem, limit=limit,
                             before_id=before_id)  # fmt: skip
    return [SubmissionAdminPublic.model_validate(s) for s in found]


@router.get("/competitions/{slug}/export/{kind}.csv", response_class=StreamingResponse)
def export(
    slug: str, kind: ExportKind, admin: AdminDep, session: WriteSessionDep, database: DatabaseDep, now: NowDep
) -> StreamingResponse:
    """Submissions, results, runs, reviews or the final ranking as CSV.

    `results` has the cases of the run that counts per submission; `runs` every run
    (superseded, IE and reproduction runs too); `reviews` keeps the history.
    """
    competition_id = log_export(session, competition=slug, kind=kind, actor=admin, now=now)
    rows = export_rows(database, competition_id=competition_id, competition=slug, kind=kind)
    return StreamingResponse(
        _csv(rows), media_type="text/csv",
        headers={"Content-Disposition": f'attachment; filename="{slug}-{kind.value}.csv"'},
    )  # fmt: skip


@router.get("/audit", response_model=list[AuditPublic])
def audit(
    _admin: AdminDep,
    session: SessionDep,
    competition: str | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    before_id: IdFilter | None = None,
) -> list[AuditPublic]:
    """Organiser actions, newest first."""
    entries = list_audit(session, competition=competition, limit=limit, before_id=before_id)
    return [AuditPublic.model_validate(e) for e in entries]


@router.get("/workers", response_model=list[WorkerPublic])
def workers(_admin: AdminDep, session: SessionDep) -> list[WorkerPublic]:
    """Workers seen, with their host, device and toolchain versions."""
    return [WorkerPublic.model_validate(w) for w in list_workers(session)]


@router.get("/queues", response_model=list[QueueLoadPublic])
def queues(_admin: AdminDep, session: SessionDep) -> list[QueueLoadPublic]:
    """Runs waiting or running, per queue."""
    return [QueueLoadPublic.model_validate(q) for q in queue_load(session)]


@router.post("/dispatch", response_model=RunsAccepted)
def dispatch_now(admin: AdminDep, session: SessionDep, dispatcher: DispatcherDep, now: NowDep) -> RunsAccepted:
    """Hand the queue the runs left pending while it was down (the workers' reaper does this too; audited)."""
    report = dispatch_pending(session, dispatcher, min_age_s=0, now=now)
    # docs/rules.md: every organiser action is audited, this one with what it moved.
    record_audit(session, actor=admin, action="dispatch", now=now, target="pending runs",
                 details={"queued": report.queued, "pending": report.pending, "reason": report.reason})  # fmt: skip
    session.commit()
    return _accepted(report.queued + report.pending, report)


def _csv(rows: Iterator[list[Any]]) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    for row in rows:
        writer.writerow([csv_value(v) for v in row])
        if buffer.tell() > 64 * 1024:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()
