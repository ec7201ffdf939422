"""CSV exports for organisers: submissions, results, every run, reviews and the final ranking.

Each export is a generator of rows (the header first) over its own session, so
a large export streams instead of being built in memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, lazyload

from api.store.audit import record_audit
from api.store.competitions import competition_row
from api.store.db import Database
from api.store.models import CaseResultRow, Problem, Run, Submission, Team
from api.store.ranking import leaderboard
from api.store.reviews import list_reviews
from api.store.views import Principal


class ExportKind(StrEnum):
    SUBMISSIONS = "submissions"
    RESULTS = "results"  # per case, of the run that counts for each submission
    RUNS = "runs"  # every run: superseded, failed (IE) and reproduction runs too
    REVIEWS = "reviews"
    RANKING = "ranking"


def export_rows(database: Database, *, competition_id: int, competition: str, kind: ExportKind) -> Iterator[list[Any]]:
    """The rows of one export, header first, read on a session of its own."""
    with database.session(write=False) as session:
        if kind is ExportKind.SUBMISSIONS:
            yield ["submission_id", "team", "problem", "backend", "mode", "created_at", "status", "verdict", "score",
                   "sha256", "files", "bytes", "disqualified_at", "disqualify_reason"]  # fmt: skip
            rows = session.execute(
                select(Submission, Team.name, Problem.slug)
                .join(Team, Team.id == Submission.team_id).join(Problem, Problem.id == Submission.problem_id)
                .where(Submission.competition_id == competition_id).order_by(Submission.id)
                .execution_options(yield_per=500)
            )  # fmt: skip
            for s, team, problem in rows:
                yield [s.id, team, problem, s.backend, s.mode, s.created_at, s.status, s.verdict, s.score, s.sha256,
                       s.file_count, s.total_bytes, s.disqualified_at, s.disqualify_reason or ""]  # fmt: skip
        elif kind is ExportKind.RESULTS:
            yield ["submission_id", "run_id", "team", "problem", "backend", "mode", "verdict", "case", "set", "passed",
                   "median_ns", "baseline_median_ns", "ratio", "gflops", "count", "message", "baseline", "clock",
                   "launches", "baseline_launches", "disturbed"]  # fmt: skip
            rows = session.execute(
                select(Submission.id, Run.id, Team.name, Problem.slug, Submission.backend, Submission.mode, Run.verdict,
                       CaseResultRow, Run.worker_info, Run.disturbed)
                .join(Run, Run.id == Submission.scored_run_id).join(Team, Team.id == Submission.team_id)
                .join(Problem, Problem.id == Submission.problem_id)
                .join(CaseResultRow, CaseResultRow.run_id == Run.id)
                .where(Submission.competition_id == competition_id)
                .order_by(Submission.id, CaseResultRow.position).execution_options(yield_per=1000)
            )  # fmt: skip
            for sid, rid, team, problem, backend, mode, verdict, c, info, disturbed in rows:
                # Which baseline timed the case and (NPU device timing) the most launches one timed call
                # made, with the case; the clock as the worker recorded it with the run.
                yield [sid, rid, team, problem, backend, mode, verdict, c.name, c.case_set, c.passed, c.median_ns,
                       c.baseline_median_ns, c.ratio, c.gflops, c.count, c.message, c.baseline,
                       (info or {}).get("timing", ""), c.launches, c.baseline_launches, disturbed or ""]  # fmt: skip
        elif kind is ExportKind.RUNS:
            yield from _runs(session, competition_id)
        elif kind is ExportKind.REVIEWS:
            yield ["review_id", "reviewer", "team", "marks", "total", "comment", "created_at", "current"]
            for r in list_reviews(session, competition_id=competition_id, history=True):
                marks = "; ".join(f"{k}={v:g}" for k, v in r.marks.items())
                yield [r.id, r.reviewer_name, r.team_name, marks, r.total, r.comment, r.created_at, r.is_current]
        else:
            board = leaderboard(session, competition=competition, final=True)
            yield ["rank", "team", "online_score", "reviewer_score", "reviewers", "final_score", "submissions",
                   "disqualified"]  # fmt: skip
            for row in board.rows:
                subs = "; ".join(f"{p}={i}" for p, i in row.submission_ids.items())
                yield [row.rank or "", row.team_name, row.online_score, row.reviewer_score, row.reviewers,
                       row.final_score, subs, row.disqualified]  # fmt: skip


RUN_COLUMNS = ["submission_id", "team", "problem", "backend", "mode", "run_id", "kind", "counts", "status", "attempt",
               "verdict", "score", "created_at", "started_at", "finished_at", "worker", "host", "device", "toolchain",
               "reproduction_of", "flagged", "flag_reason", "message", "clock", "disturbed"]  # fmt: skip


def _runs(session: Session, competition_id: int) -> Iterator[list[Any]]:
    """Every run of the competition, oldest first; `counts` marks the run whose result ranks."""
    yield RUN_COLUMNS
    rows = session.execute(
        select(Submission.id, Submission.scored_run_id, Team.name, Problem.slug, Submission.backend, Submission.mode,
               Run)
        .join(Submission, Submission.id == Run.submission_id).join(Team, Team.id == Submission.team_id)
        .join(Problem, Problem.id == Submission.problem_id)
        .where(Submission.competition_id == competition_id)
        .options(lazyload(Run.submission))  # joined above already; the eager join would repeat it
        .order_by(Submission.id, Run.id).execution_options(yield_per=1000)
    )  # fmt: skip
    for sid, scored_run_id, team, problem, backend, mode, r in rows:
        yield [sid, team, problem, backend, mode, r.id, r.kind, r.id == scored_run_id, r.status, r.attempt, r.verdict,
               r.score, r.created_at, r.started_at, r.finished_at, r.claimed_by, r.worker_host, r.device,
               r.toolchain, r.reproduction_of, r.flagged, r.flag_reason, r.message,
               (r.worker_info or {}).get("timing_detail", ""), r.disturbed or ""]  # fmt: skip


def log_export(session: Session, *, competition: str, kind: ExportKind, actor: Principal | None, now: datetime) -> int:
    """Audit an export before it streams (commits); returns the competition's id."""
    comp = competition_row(session, competition)
    record_audit(session, actor=actor, action="export", now=now, competition_id=comp.id, target=kind.value)
    session.commit()
    return comp.id


def csv_value(value: Any) -> Any:
    """How a cell is written: ISO times, enum values, empty for None, formulas defused."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, StrEnum):
        return value.value
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value  # a team name like "=cmd|..." must not run as a spreadsheet formula
    return value
