"""Submissions: stored (files and all) and committed before anything is queued; read back per team."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import replace
from datetime import datetime

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from api.store.audit import record_audit
from api.store.db import lock_row
from api.store.enums import RunKind, RunStatus
from api.store.errors import InvalidInputError, NotFoundError
from api.store.models import Competition, CompetitionProblem, Problem, Run, Submission, SubmissionFile, Team
from api.store.modes import QueuePriority
from api.store.queueinfo import queue_place
from api.store.results import run_views
from api.store.rules import check_quotas, check_window, quota_status
from api.store.standings_cache import recompute_standings
from api.store.types import utcnow
from api.store.views import (
    FileInfo,
    NewSubmission,
    Principal,
    QuotaStatus,
    RunView,
    SubmissionDetail,
    SubmissionSummary,
)
from judge.backends import Backend
from judge.modes import RunMode


def create_submission(
    session: Session,
    *,
    team_id: int,
    problem: str,
    backend: Backend,
    files: list[tuple[str, bytes]],
    queue: str,
    now: datetime,
    mode: RunMode = RunMode.RANKED,
) -> NewSubmission:
    """Check the contest rules, then store the submission, its files and a pending judge run (commits).

    The caller enqueues the run only after this returns: a broker that is down
    leaves a pending run that `runs_to_dispatch` hands out later, never a lost upload.
    """
    lock_row(session, Team, team_id)  # PostgreSQL: one upload per team at a time, so quotas hold
    team = session.get(Team, team_id)
    if team is None:
        raise NotFoundError(f"no team {team_id}")
    comp = session.get_one(Competition, team.competition_id)
    check_window(comp, now)
    problem_row = _accepting_problem(session, comp, problem, backend)
    if not files:
        raise InvalidInputError("a submission needs at least one source file")
    check_quotas(session, comp, team_id, now, mode)
    digest = hashlib.sha256()
    for name, content in files:
        digest.update(name.encode() + b"\0" + hashlib.sha256(content).digest())
    submission = Submission(
        competition_id=comp.id, team_id=team_id, problem_id=problem_row.id, backend=backend, mode=mode,
        sha256=digest.hexdigest(), status=RunStatus.PENDING, verdict=None, score=None, charged=True,
        file_count=len(files), total_bytes=sum(len(c) for _, c in files), created_at=now,
    )  # fmt: skip
    submission.files = [
        SubmissionFile(position=i, name=name, content=content, size=len(content),
                       sha256=hashlib.sha256(content).hexdigest())
        for i, (name, content) in enumerate(files)
    ]  # fmt: skip
    session.add(submission)
    session.flush()
    priority = QueuePriority.of(RunKind.JUDGE, mode)
    run = Run(submission_id=submission.id, kind=RunKind.JUDGE, status=RunStatus.PENDING, queue=queue,
              priority=int(priority), created_at=now, pending_since=now, seed_salt=new_seed_salt())  # fmt: skip
    session.add(run)
    session.commit()
    return NewSubmission(submission.id, run.id, queue, RunStatus.PENDING, mode=mode, priority=int(priority),
                         public_id=submission.public_id)  # fmt: skip


def new_seed_salt() -> str:
    """A fresh salt for a run's case seeds (docs/rules.md stage 3: seeds the submission cannot predict).

    Without it every run of a case would get the same inputs, which a team can read
    in one run (its kernel's output) and hard-code in the next. The salt is stored
    with the run, so organisers can still regenerate that run's inputs exactly.
    """
    return secrets.token_hex(16)


def list_submissions(
    session: Session,
    *,
    team_id: int | None = None,
    competition_id: int | None = None,
    problem: str | None = None,
    limit: int = 50,
    before_id: int | None = None,
) -> list[SubmissionSummary]:
    """Submissions newest first, filtered by team, competition and problem; `before_id` pages back."""
    query = _summary_query().order_by(Submission.id.desc()).limit(limit)
    if team_id is not None:
        query = query.where(Submission.team_id == team_id)
    if competition_id is not None:
        query = query.where(Submission.competition_id == competition_id)
    if problem is not None:
        query = query.where(Problem.slug == problem)
    if before_id is not None:
        query = query.where(Submission.id < before_id)
    return [_summary(*row) for row in session.execute(query)]


def submission_detail(session: Session, *, submission_id: int, team_id: int | None = None,
                      now: datetime | None = None) -> SubmissionDetail:
    """A submission with its files' names and every run's results.

    With `team_id` (a team asking) another team's submission is "not found", private
    cases are pass/fail only and reproduction runs are hidden.
    """
    row = session.execute(_summary_query().where(Submission.id == submission_id)).first()
    if row is None or (team_id is not None and row[0].team_id != team_id):
        raise NotFoundError(
            f"no submission {submission_id} among your team's submissions"
            if team_id is not None
            else f"no submission {submission_id}"
        )
    submission = row[0]
    files = session.execute(
        select(SubmissionFile.name, SubmissionFile.size, SubmissionFile.sha256)
        .where(SubmissionFile.submission_id == submission_id)
        .order_by(SubmissionFile.position)
    ).all()
    runs = list(session.scalars(select(Run).where(Run.submission_id == submission_id).order_by(Run.id.desc())))
    live = next((r for r in runs if r.kind is not RunKind.REPRODUCTION), None)
    return SubmissionDetail(
        submission=_summary(*row),
        files=[FileInfo(*f) for f in files],
        runs=_numbered(run_views(session, runs, team_view=team_id is not None)),
        scored_run_id=submission.scored_run_id,
        queue=queue_place(session, run=live, now=now or utcnow()) if live is not None else None,
    )


def _numbered(runs: list[RunView]) -> list[RunView]:
    """The runs (newest first) with their `number`: the oldest shown is 1."""
    return [replace(run, number=len(runs) - i) for i, run in enumerate(runs)]


def submission_sources(
    session: Session, *, submission_id: int, team_id: int | None = None, reviewer_competition_id: int | None = None
) -> list[tuple[str, bytes]]:
    """The uploaded files, in upload order.

    A team (`team_id`) gets only its own; a reviewer (`reviewer_competition_id`)
    only those of finalist teams of their competition; an organiser any.
    """
    row = session.execute(
        select(Submission.team_id, Team.competition_id, Team.finalist)
        .join(Team, Team.id == Submission.team_id)
        .where(Submission.id == submission_id)
    ).first()
    hidden = row is None or (team_id is not None and row.team_id != team_id)
    if reviewer_competition_id is not None and row is not None:
        hidden = hidden or row.competition_id != reviewer_competition_id or not row.finalist
    if hidden:
        raise NotFoundError(f"no submission {submission_id} you may read")
    rows = session.execute(
        select(SubmissionFile.name, SubmissionFile.content)
        .where(SubmissionFile.submission_id == submission_id)
        .order_by(SubmissionFile.position)
    )
    return [(name, bytes(content)) for name, content in rows]


def team_quota(session: Session, *, team_id: int, now: datetime, mode: RunMode = RunMode.RANKED) -> QuotaStatus:
    """`mode`'s quota left and when its next submission is allowed (for the team page and `GET /me`)."""
    team = session.get(Team, team_id)
    if team is None:
        raise NotFoundError(f"no team {team_id}")
    return quota_status(session, session.get_one(Competition, team.competition_id), team_id, now, mode)


def team_quotas(session: Session, *, team_id: int, now: datetime) -> dict[RunMode, QuotaStatus]:
    """Every run mode's quota status for the team."""
    return {mode: team_quota(session, team_id=team_id, now=now, mode=mode) for mode in RunMode}


def disqualify_submission(
    session: Session, *, submission_id: int, reason: str | None, actor: Principal | None, now: datetime
) -> SubmissionSummary:
    """Disqualify (kept, not ranked, reason recorded) or, with `reason=None`, reinstate (audited; commits)."""
    submission = session.get(Submission, submission_id)
    if submission is None:
        raise NotFoundError(f"no submission {submission_id}")
    if reason is not None and not reason.strip():
        raise InvalidInputError("say why the submission is disqualified")
    submission.disqualified_at = now if reason is not None else None
    submission.disqualify_reason = reason.strip() if reason is not None else None
    record_audit(session, actor=actor, action="submission.disqualify" if reason else "submission.reinstate",
                 now=now, competition_id=submission.competition_id, target=f"submission {submission_id}",
                 details={"reason": reason})  # fmt: skip
    session.flush()
    recompute_standings(session, competition_id=submission.competition_id)
    summary = _summary(*session.execute(_summary_query().where(Submission.id == submission_id)).one())
    session.commit()
    return summary


def _accepting_problem(session: Session, comp: Competition, slug: str, backend: Backend) -> Problem:
    links = session.scalars(select(CompetitionProblem).where(CompetitionProblem.competition_id == comp.id)).all()
    for link in links:
        if link.problem.slug == slug:
            if backend.value not in link.backends:
                raise InvalidInputError(
                    f"problem {slug!r} is not judged on backend {backend.value!r} in this competition; "
                    f"backends: {', '.join(link.backends)}"
                )
            return link.problem
    known = ", ".join(sorted(link.problem.slug for link in links)) or "none"
    raise InvalidInputError(f"problem {slug!r} is not part of competition {comp.slug!r}; its problems: {known}")


def _summary_query() -> Select[tuple[Submission, str, str]]:
    return (
        select(Submission, Team.name, Problem.slug)
        .join(Team, Team.id == Submission.team_id)
        .join(Problem, Problem.id == Submission.problem_id)
    )


def _summary(s: Submission, team_name: str, problem: str) -> SubmissionSummary:
    return SubmissionSummary(
        id=s.id, competition_id=s.competition_id, team_id=s.team_id, team_name=team_name, problem=problem,
        backend=s.backend, status=s.status, verdict=s.verdict,
        score=None if s.mode is RunMode.TEST else s.score,  # a test run has no score (rows stored before: 0.0)
        sha256=s.sha256, file_count=s.file_count, total_bytes=s.total_bytes, created_at=s.created_at,
        disqualified_at=s.disqualified_at, disqualify_reason=s.disqualify_reason, mode=s.mode,
        public_id=s.public_id,
    )  # fmt: skip
