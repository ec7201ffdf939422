"""The leaderboard JSON: the same `Leaderboard` the pages render."""

from __future__ import annotations

from datetime import datetime

from api.schemas.base import Public
from api.store import RankedBy, RelativeTo
from judge.backends import CaseSet
from judge.verdict import Verdict


class CaseCellPublic(Public):
    """One case of a row; which case is said once, in `LeaderboardPublic.columns`."""

    score: float | None
    ratio: float | None
    passed: bool


class ColumnPublic(Public):
    problem: str
    case: str


class LeaderboardRowPublic(Public):
    rank: int | None
    team_id: int
    team_name: str
    online_score: float
    cells: list[CaseCellPublic | None]  # aligned with `columns`
    problem_scores: dict[str, float]
    submission_ids: dict[str, int]
    submitted_at: datetime | None
    last_submission_at: datetime | None
    latest_verdict: Verdict | None
    disqualified: bool
    reviewer_score: float | None
    reviewers: int
    final_score: float | None
    is_viewer: bool
    live: bool
    is_baseline: bool


class LeaderboardPublic(Public):
    competition: str
    title: str
    case_set: CaseSet
    final: bool
    frozen: bool
    frozen_at: datetime | None
    as_of: datetime | None
    relative_to: RelativeTo
    ranked_by: RankedBy
    online_weight: float
    reviewer_weight: float
    version: int
    generated_at: datetime
    problems: list[str]
    columns: list[ColumnPublic]
    rows: list[LeaderboardRowPublic]
    baseline: LeaderboardRowPublic | None
