"""A team's chosen finals (ranked_by `chosen`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from api.store.finals import TeamFinals
from api.web.schemas.base import Create, from_view
from api.web.schemas.submissions import SubmissionPublic


class FinalsPublic(from_view(TeamFinals)):
    """Submissions are named by their public ids, as everywhere a team looks (docs/security.md)."""

    chosen: list[str]  # the submissions the team marked
    counting: dict[str, str]  # problem -> the submission the final ranking scores now
    choosable: list[SubmissionPublic]

    @classmethod
    def of(cls, finals: TeamFinals, public_ids: dict[int, str]) -> FinalsPublic:
        """`finals` with each database id replaced by its public id from `public_ids`."""
        return cls(ranked_by=finals.ranked_by, limit=finals.limit, chosen=[public_ids[i] for i in finals.chosen],
                   counting={p: public_ids[i] for p, i in finals.counting.items()},
                   choosable=[SubmissionPublic.model_validate(s) for s in finals.choosable],
                   open_until=finals.open_until)  # fmt: skip


class FinalsChoose(Create):
    # The public ids of the team's submissions; empty: the latest counts again.
    submission_ids: list[Annotated[str, Field(min_length=1, max_length=64)]] = Field(max_length=500)
