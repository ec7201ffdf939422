"""Reviewer marks."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from api.schemas.base import Create, Public
from api.schemas.bounds import Number, PlainText
from api.schemas.submissions import SubmissionPublic

COMMENT_MAX_CHARS = 10_000  # the review page's form takes the same


class ReviewCreate(Create):
    marks: dict[PlainText, Number]  # criterion -> mark, covering the competition's rubric exactly
    comment: PlainText = Field(default="", max_length=COMMENT_MAX_CHARS)


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


class FinalistSubmissionPublic(Public):
    submission: SubmissionPublic
    ranked: bool  # what the final ranking scores for its problem (the review pages show only these)
