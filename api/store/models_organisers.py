"""Tables of the organisers' tools (docs/organisers.md): the final ranking's snapshots, the teams' chosen
finals, organiser jobs (machine review, re-audit) and the pairs machine review found.

Imported at the end of models.py so that `Base.metadata` (and so the migrations' check) has them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from api.store.models import Base


class FinalRanking(Base):
    """A snapshot of the final ranking, taken when it is published or recomputed (docs/rules.md)."""

    __tablename__ = "final_rankings"

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id"), index=True)
    taken_at: Mapped[datetime]
    actor: Mapped[str] = mapped_column(String(120))
    reason: Mapped[str] = mapped_column(Text, default="")
    override: Mapped[bool] = mapped_column(Boolean, default=False)  # taken while the window was open
    current: Mapped[bool] = mapped_column(Boolean, default=True)  # the one shown; older ones are history
    board: Mapped[dict[str, Any]]  # the Leaderboard as the JSON API serves it


class FinalChoice(Base):
    """A submission a team marked as one of its finals (ranked_by `chosen`)."""

    __tablename__ = "final_choices"

    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id"), primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id"), primary_key=True)
    problem_id: Mapped[int] = mapped_column(ForeignKey("problems.id"))
    chosen_at: Mapped[datetime]


class OrganiserJob(Base):
    """A background job an organiser started (machine review, re-audit), with its outcome."""

    __tablename__ = "organiser_jobs"

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id"), index=True)
    kind: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(16))
    params: Mapped[dict[str, Any]] = mapped_column(default=dict)
    result: Mapped[dict[str, Any]] = mapped_column(default=dict)
    error: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime]
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]


class SimilarPair(Base):
    """Two teams' submissions that machine review found alike, and the organisers' decision."""

    __tablename__ = "similar_pairs"
    __table_args__ = (
        UniqueConstraint("submission_a", "submission_b", name="uq_similar_pairs_submission_a"),
        Index("ix_similar_pairs_competition_similarity", "competition_id", "similarity"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id"))
    problem_id: Mapped[int] = mapped_column(ForeignKey("problems.id"))
    job_id: Mapped[int] = mapped_column(Integer)
    submission_a: Mapped[int] = mapped_column(ForeignKey("submissions.id"))
    submission_b: Mapped[int] = mapped_column(ForeignKey("submissions.id"))
    similarity: Mapped[float] = mapped_column(Float)  # the larger of the two sides' matched share, 0-1
    regions: Mapped[dict[str, Any]] = mapped_column(default=dict)  # file -> matched line ranges, per side
    decision: Mapped[str | None] = mapped_column(String(16))  # None: not decided; cleared / flagged
    decided_by: Mapped[str | None] = mapped_column(String(120))
    decided_at: Mapped[datetime | None]
    note: Mapped[str] = mapped_column(Text, default="")
