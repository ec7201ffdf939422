"""Machine review across teams (docs/organisers.md), the store's side: which submissions are
compared, the pairs found alike (table `similar_pairs`), and the organisers' decision per pair.

The comparing itself is a worker job (workers/similarity_job.py). Per problem, each team's
latest and best judged, not disqualified submissions are compared with every other team's,
not every version with every version: 600 teams give 1,200 documents per problem, whatever
the number of submissions.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, aliased

from api.store.audit import record_audit
from api.store.competitions import competition_row
from api.store.errors import InvalidInputError, NotFoundError
from api.store.models import Problem, Submission, SubmissionFile, Team
from api.store.models_organisers import SimilarPair
from api.store.views import Principal
from judge.backends import Backend
from judge.modes import RunMode
from judge.verdict import Verdict


class Decision(StrEnum):
    CLEARED = "cleared"  # alike for a good reason (the same public idea, a shared starter)
    FLAGGED = "flagged"  # to be looked into: possibly copied


@dataclass(frozen=True)
class ReviewDocument:
    """A submission as machine review reads it."""

    submission_id: int
    team_id: int
    problem: str
    backend: Backend
    files: list[tuple[str, str]]  # name, text


@dataclass(frozen=True)
class FoundPair:
    """What the job found for two submissions of different teams."""

    problem: str
    submission_a: int  # the lower id
    submission_b: int
    similarity: float
    regions: dict[str, Any]  # {"a": [[file, start, end], ...], "b": [...], "share_a": x, "share_b": y}


@dataclass(frozen=True)
class PairView:
    id: int
    problem: str
    similarity: float
    submission_a: int
    team_a: str
    submission_b: int
    team_b: str
    regions: dict[str, Any]  # {"a": [[file, start, end], ...], "b": [...], "share_a": x, "share_b": y}
    decision: Decision | None
    decided_by: str | None
    decided_at: datetime | None
    note: str
    job_id: int


def review_documents(session: Session, *, competition_id: int) -> list[ReviewDocument]:
    """Per problem and team: the latest and the best (highest score, AC) judged, not disqualified submission."""
    rows = session.execute(
        select(Submission.id, Submission.team_id, Problem.slug, Submission.backend, Submission.verdict,
               Submission.score, Submission.created_at)
        .join(Problem, Problem.id == Submission.problem_id)
        .where(Submission.competition_id == competition_id, Submission.disqualified_at.is_(None),
               Submission.verdict.is_not(None), Submission.mode == RunMode.RANKED)
    ).all()  # fmt: skip
    latest: dict[tuple[int, str], Any] = {}
    best: dict[tuple[int, str], Any] = {}
    for row in rows:
        key = (row.team_id, row.slug)
        if key not in latest or (row.created_at, row.id) > (latest[key].created_at, latest[key].id):
            latest[key] = row
        if row.verdict is Verdict.AC and row.score is not None and (
            key not in best or (row.score, -row.id) > (best[key].score, -best[key].id)
        ):
            best[key] = row
    chosen = {r.id: r for r in [*latest.values(), *best.values()]}
    files: dict[int, list[tuple[str, str]]] = {}
    for sid, name, content in session.execute(
        select(SubmissionFile.submission_id, SubmissionFile.name, SubmissionFile.content)
        .where(SubmissionFile.submission_id.in_(list(chosen))).order_by(SubmissionFile.submission_id,
                                                                      SubmissionFile.position)
    ):  # fmt: skip
        files.setdefault(sid, []).append((name, bytes(content).decode("utf-8", "replace")))
    return [ReviewDocument(r.id, r.team_id, r.slug, Backend(r.backend), files.get(r.id, []))
            for r in sorted(chosen.values(), key=lambda r: r.id)]  # fmt: skip


def store_pairs(session: Session, *, competition_id: int, job_id: int, pairs: list[FoundPair]) -> int:
    """Insert or refresh the pairs found; a pair keeps its decision across jobs (commits)."""
    problem_of = dict(session.execute(select(Submission.id, Submission.problem_id).where(
        Submission.id.in_({p.submission_a for p in pairs}))).all())  # fmt: skip
    existing = {(p.submission_a, p.submission_b): p for p in session.scalars(
        select(SimilarPair).where(SimilarPair.competition_id == competition_id))}  # fmt: skip
    for found in pairs:
        row = existing.get((found.submission_a, found.submission_b))
        if row is None:
            row = SimilarPair(competition_id=competition_id, problem_id=problem_of[found.submission_a],
                              submission_a=found.submission_a, submission_b=found.submission_b, note="")  # fmt: skip
            session.add(row)
        row.job_id, row.similarity, row.regions = job_id, found.similarity, found.regions
    session.commit()
    return len(pairs)


def list_pairs(session: Session, *, competition: str, minimum: float = 0.0, limit: int = 500) -> list[PairView]:
    """The pairs at or above `minimum`, most similar first."""
    comp = competition_row(session, competition)
    query = _pair_query().where(SimilarPair.competition_id == comp.id, SimilarPair.similarity >= minimum)
    return [_view(*row) for row in session.execute(query.order_by(SimilarPair.similarity.desc(),
                                                                  SimilarPair.id).limit(limit))]  # fmt: skip


def get_pair(session: Session, *, pair_id: int) -> PairView:
    row = session.execute(_pair_query().where(SimilarPair.id == pair_id)).first()
    if row is None:
        raise NotFoundError(f"no similar pair {pair_id}")
    return _view(*row)


def pair_sources(session: Session, *, pair: PairView) -> dict[int, list[tuple[str, str]]]:
    """Both submissions' files as text, for the side by side view."""
    found: dict[int, list[tuple[str, str]]] = {pair.submission_a: [], pair.submission_b: []}
    for sid, name, content in session.execute(
        select(SubmissionFile.submission_id, SubmissionFile.name, SubmissionFile.content)
        .where(SubmissionFile.submission_id.in_(list(found))).order_by(SubmissionFile.position)
    ):  # fmt: skip
        found[sid].append((name, bytes(content).decode("utf-8", "replace")))
    return found


def decide_pair(session: Session, *, pair_id: int, decision: Decision | None, note: str, actor: Principal | None,
                now: datetime) -> PairView:  # fmt: skip
    """Record the organisers' decision on a pair (None: undecided again; audited; commits)."""
    row = session.get(SimilarPair, pair_id)
    if row is None:
        raise NotFoundError(f"no similar pair {pair_id}")
    if decision is Decision.FLAGGED and not note.strip():
        raise InvalidInputError("say why the pair is flagged (the note is kept with the decision)")
    row.decision = decision.value if decision else None
    row.decided_by, row.decided_at, row.note = (actor.actor if actor else "system"), now, note.strip()
    record_audit(session, actor=actor, action="similarity.decide", now=now, competition_id=row.competition_id,
                 target=f"pair {pair_id}", details={"decision": row.decision, "note": row.note,
                 "submissions": [row.submission_a, row.submission_b], "similarity": row.similarity})  # fmt: skip
    session.commit()
    return get_pair(session, pair_id=pair_id)


def _pair_query():  # noqa: ANN202 - a select of a pair with both teams' names
    sub_a, sub_b = aliased(Submission), aliased(Submission)
    team_a, team_b = aliased(Team), aliased(Team)
    return (
        select(SimilarPair, Problem.slug, team_a.name, team_b.name)
        .join(Problem, Problem.id == SimilarPair.problem_id)
        .join(sub_a, sub_a.id == SimilarPair.submission_a).join(team_a, team_a.id == sub_a.team_id)
        .join(sub_b, sub_b.id == SimilarPair.submission_b).join(team_b, team_b.id == sub_b.team_id)
    )  # fmt: skip


def _view(row: SimilarPair, problem: str, team_a: str, team_b: str) -> PairView:
    return PairView(row.id, problem, row.similarity, row.submission_a, team_a, row.submission_b, team_b,
                    dict(row.regions), Decision(row.decision) if row.decision else None, row.decided_by,
                    row.decided_at, row.note, row.job_id)  # fmt: skip
