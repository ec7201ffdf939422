"""A team's chosen finals (ranked_by `chosen`)."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from api.schemas.base import Create, Public
from api.schemas.submissions import SubmissionPublic
from api.store import RankedBy


class FinalsPublic(Public):
    ranked_by: RankedBy
    limit: int  # finals per problem
    chosen: list[int]  # the submissions the team marked
    counting: dict[str, int]  # problem -> the submission the final ranking scores now
    choosable: list[SubmissionPublic]  # judged, not disqualified, newest first
    open_until: datetime


class FinalsChoose(Create):
    submission_ids: list[int] = Field(max_length=500)  # empty: the latest counts again
