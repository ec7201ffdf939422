"""Reviewer marks."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from api.schemas.base import Create, Public


class ReviewCreate(Create):
    marks: dict[str, float]  # criterion -> mark, covering the competition's rubric exactly
    comment: str = Field(default="", max_length=10_000)


class ReviewPublic(Public):
    id: int
    reviewer_id: int
    reviewer_name: str
    team_id: int
    team_name: str
    marks: dict[str, float]
    total: float
    comment: str
    created_at: datetime
    is_current: bool


class FinalistPublic(Public):
    team_id: int
    team_name: str
    submission_ids: dict[str, int]
    online_score: float | None
