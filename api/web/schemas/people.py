"""Teams, reviewers and their tokens (a token's secret appears in exactly one response)."""

from __future__ import annotations

from pydantic import Field

from api.store.views import IssuedToken, ReviewerView, TeamView, TokenInfo
from api.web.schemas.base import Create, Public, from_view
from api.web.schemas.bounds import IdFilter, PlainText


class TeamCreate(Create):
    name: PlainText = Field(min_length=1, max_length=100)


class TeamPublic(from_view(TeamView)):
    pass


class TokenCreated(from_view(IssuedToken)):
    pass


class TeamCreated(Public):
    team: TeamPublic
    token: TokenCreated


class TokenPublic(from_view(TokenInfo)):
    pass


class AdminTokenCreate(Create):
    label: PlainText = Field(min_length=1, max_length=100)


class ReviewerCreate(Create):
    name: PlainText = Field(min_length=1, max_length=100)


class ReviewerPublic(from_view(ReviewerView)):
    pass


class ReviewerCreated(Public):
    reviewer: ReviewerPublic
    token: TokenCreated


class FinalistsUpdate(Create):
    team_ids: list[IdFilter]
