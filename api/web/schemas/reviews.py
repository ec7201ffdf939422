"""Reviewer marks."""

from __future__ import annotations

from pydantic import Field

from api.store.finalist_reads import FinalistSubmission
from api.store.views import FinalistView, ReviewView
from api.web.schemas.base import Create, from_view
from api.web.schemas.bounds import Number, PlainText
from api.web.schemas.submissions import SubmissionPublic

COMMENT_MAX_CHARS = 10_000  # the review page's form takes the same


class ReviewCreate(Create):
    marks: dict[PlainText, Number]  # criterion -> mark, covering the competition's rubric exactly
    comment: PlainText = Field(default="", max_length=COMMENT_MAX_CHARS)


class ReviewPublic(from_view(ReviewView)):
    pass


class FinalistPublic(from_view(FinalistView)):
    pass


class FinalistSubmissionPublic(from_view(FinalistSubmission)):
    submission: SubmissionPublic
