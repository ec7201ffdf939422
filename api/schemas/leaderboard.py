"""The leaderboard JSON: the same `Leaderboard` the pages render.

Figures are rounded in the JSON: scores to 4 decimals, ratios to 6 significant
digits (a timing is not more precise than that); ranks are decided at full
precision before. A 500-team board is half the size for it, compressed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import AliasChoices, Field, PlainSerializer

from api.schemas.base import Public
from api.store import RankedBy, RelativeTo
from judge.backends import CaseSet
from judge.verdict import Verdict


def _score(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _ratio(value: float | None) -> float | None:
    return None if value is None else float(f"{value:.6g}")


Score = Annotated[float, PlainSerializer(_score)]
OptionalScore = Annotated[float | None, PlainSerializer(_score)]
Ratio = Annotated[float | None, PlainSerializer(_ratio)]


class CaseCellPublic(Public):
    """One case of a row; which case is said once, in `LeaderboardPublic.columns`."""

    score: OptionalScore
    ratio: Ratio
    passed: bool


class ColumnPublic(Public):
    problem: str
    case: str


class LeaderboardRowPublic(Public):
    rank: int | None
    team_id: int
    team_name: str
    online_score: Score
    cells: list[CaseCellPublic | None]  # aligned with `columns`
    problem_scores: dict[str, Score]
    # problem -> the public id of the submission that ranks (docs/security.md, "Submission ids")
    submission_ids: dict[str, str] = Field(validation_alias=AliasChoices("public_ids", "submission_ids"))
    submitted_at: datetime | None
    last_submission_at: datetime | None
    latest_verdict: Verdict | None
    disqualified: bool
    reviewer_score: OptionalScore
    reviewers: int
    final_score: OptionalScore
    is_viewer: bool
    live: bool
    is_baseline: bool
    # Non-empty: a ranked entry's run was timed on a host that stayed disturbed through re-timing (why).
    disturbed: str = ""


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
