"""Organiser jobs: background work an organiser starts, run by a worker
(workers/organiser_jobs.py), its outcome stored with it. Starting one is audited.

Kinds: `reaudit` (rescan every submission under today's policy, optionally rebuilding)
and `similarity` (machine review across teams). A job is claimed once (pending ->
running); a worker that finds it taken does nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from api.store.audit import record_audit
from api.store.competitions import competition_row
from api.store.errors import ConflictError, NotFoundError
from api.store.models import Problem, Submission, SubmissionFile, Team
from api.store.models_organisers import OrganiserJob
from api.store.views import Principal
from judge.backends import Backend
from judge.verdict import Verdict

_MAX_ERROR = 4000
LOST_AFTER_S = 7 * 3600  # longer than the Celery task's time limit (workers/celery_app.py, 6 h)


class JobKind(StrEnum):
    REAUDIT = "reaudit"
    SIMILARITY = "similarity"


class JobStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True)
class JobView:
    id: int
    competition_id: int
    kind: JobKind
    status: JobStatus
    params: dict[str, Any]
    result: dict[str, Any]
    error: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


@dataclass(frozen=True)
class StoredSubmission:
    """A submission as a job reads it: who, what, and its files."""

    id: int
    team_id: int
    team_name: str
    problem: str
    backend: Backend
    verdict: Verdict | None
    disqualified: bool
    files: list[tuple[str, bytes]]


def start_job(session: Session, *, competition: str, kind: JobKind, params: dict[str, Any],
              actor: Principal | None, now: datetime) -> JobView:  # fmt: skip
    """A pending job (audited; commits); refused while one of the same kind is pending or running."""
    comp = competition_row(session, competition, for_update=True)
    # A job running longer than any worker lets it (its worker died) would block every later one.
    session.execute(
        update(OrganiserJob).where(OrganiserJob.competition_id == comp.id,
                                   OrganiserJob.status == JobStatus.RUNNING.value,
                                   OrganiserJob.started_at < now - timedelta(seconds=LOST_AFTER_S))
        .values(status=JobStatus.FAILED.value, finished_at=now, error="lost: its worker gave no result in time")
    )  # fmt: skip
    busy = session.scalar(select(OrganiserJob.id).where(
        OrganiserJob.competition_id == comp.id, OrganiserJob.kind == kind.value,
        OrganiserJob.status.in_([JobStatus.PENDING.value, JobStatus.RUNNING.value])))  # fmt: skip
    if busy is not None:
        raise ConflictError(f"{kind.value} job {busy} of this competition has not finished yet; wait for it")
    job = OrganiserJob(competition_id=comp.id, kind=kind.value, status=JobStatus.PENDING.value, params=params,
                       result={}, error="", created_at=now)  # fmt: skip
    session.add(job)
    session.flush()
    record_audit(session, actor=actor, action=f"job.{kind.value}", now=now, competition_id=comp.id,
                 target=f"job {job.id}", details=params)  # fmt: skip
    view = _view(job)
    session.commit()
    return view


def claim_job(session: Session, *, job_id: int, now: datetime) -> JobView | None:
    """pending -> running; None when it was claimed already (commits)."""
    claimed = session.execute(
        update(OrganiserJob).where(OrganiserJob.id == job_id, OrganiserJob.status == JobStatus.PENDING.value)
        .values(status=JobStatus.RUNNING.value, started_at=now)
    ).rowcount  # fmt: skip
    session.commit()
    return get_job(session, job_id=job_id) if claimed else None


def finish_job(session: Session, *, job_id: int, result: dict[str, Any], now: datetime,
               error: str = "") -> None:  # fmt: skip
    """Store the outcome: done, or failed with `error` (commits)."""
    job = session.get_one(OrganiserJob, job_id)
    job.status = (JobStatus.FAILED if error else JobStatus.DONE).value
    job.result, job.error, job.finished_at = result, error[:_MAX_ERROR], now
    session.commit()


def get_job(session: Session, *, job_id: int) -> JobView:
    job = session.get(OrganiserJob, job_id)
    if job is None:
        raise NotFoundError(f"no job {job_id}")
    return _view(job)


def list_jobs(session: Session, *, competition: str, kind: JobKind | None = None, limit: int = 20) -> list[JobView]:
    """The competition's jobs, newest first."""
    comp = competition_row(session, competition)
    query = select(OrganiserJob).where(OrganiserJob.competition_id == comp.id).order_by(OrganiserJob.id.desc())
    if kind is not None:
        query = query.where(OrganiserJob.kind == kind.value)
    return [_view(j) for j in session.scalars(query.limit(limit))]


def stored_submissions(session: Session, *, competition_id: int, batch: int = 200) -> Iterator[StoredSubmission]:
    """Every submission of the competition with its files, oldest first, read `batch` at a time."""
    after = 0
    while True:
        rows = session.execute(
            select(Submission, Team.name, Problem.slug).join(Team, Team.id == Submission.team_id)
            .join(Problem, Problem.id == Submission.problem_id)
            .where(Submission.competition_id == competition_id, Submission.id > after)
            .order_by(Submission.id).limit(batch)
        ).all()  # fmt: skip
        if not rows:
            return
        files: dict[int, list[tuple[str, bytes]]] = {}
        for sid, name, content in session.execute(
            select(SubmissionFile.submission_id, SubmissionFile.name, SubmissionFile.content)
            .where(SubmissionFile.submission_id.in_([s.id for s, _t, _p in rows]))
            .order_by(SubmissionFile.submission_id, SubmissionFile.position)
        ):  # fmt: skip
            files.setdefault(sid, []).append((name, bytes(content)))
        batch_read = [StoredSubmission(s.id, s.team_id, team, problem, s.backend, s.verdict,
                                       s.disqualified_at is not None, files.get(s.id, []))
                      for s, team, problem in rows]  # fmt: skip
        after = rows[-1][0].id
        # The read ends before the caller sees the batch: what it does with each submission (a build
        # of minutes) holds no snapshot and, in a write session on SQLite, no lock.
        session.rollback()
        yield from batch_read


def _view(job: OrganiserJob) -> JobView:
    return JobView(job.id, job.competition_id, JobKind(job.kind), JobStatus(job.status), dict(job.params),
                   dict(job.result), job.error, job.created_at, job.started_at, job.finished_at)  # fmt: skip
