"""Teams, reviewers and their tokens (a token's secret appears in exactly one response)."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from api.schemas.base import Create, Public
from api.schemas.bounds import IdFilter, PlainText
from api.store import Role


class TeamCreate(Create):
    name: PlainText = Field(min_length=1, max_length=100)


class TeamPublic(Public):
    id: int
    name: str
    competition_id: int
    finalist: bool
    created_at: datetime


class TokenCreated(Public):
    token_id: int
    token: str  # shown once: store it now
    prefix: str
    role: Role
    team_id: int | None
    reviewer_id: int | None


class TeamCreated(Public):
    team: TeamPublic
    token: TokenCreated


class TokenPublic(Public):
    token_id: int
    prefix: str
    role: Role
    label: str
    team_id: int | None
    reviewer_id: int | None
    created_at: datetime
    revoked_at: datetime | None


class AdminTokenCreate(Create):
    label: PlainText = Field(min_length=1, max_length=100)


class ReviewerCreate(Create):
    name: PlainText = Field(min_length=1, max_length=100)


class ReviewerPublic(Public):
    id: int
    name: str
    competition_id: int
    active: bool
    created_at: datetime


class ReviewerCreated(Public):
    reviewer: ReviewerPublic
    token: TokenCreated


class FinalistsUpdate(Create):
    team_ids: list[IdFilter]
