"""The leaderboard JSON: the same `Leaderboard` the pages render.

Figures are rounded in the JSON: scores to 4 decimals, ratios to 6 significant
digits (a timing is not more precise than that); ranks are decided at full
precision before. A 500-team board is half the size for it, compressed.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AliasChoices, Field, PlainSerializer

from api.store.ranking import BoardColumn, Leaderboard, LeaderboardRow
from api.store.standings import CaseCell
from api.web.schemas.base import from_view


def _score(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _ratio(value: float | None) -> float | None:
    return None if value is None else float(f"{value:.6g}")


Score = Annotated[float, PlainSerializer(_score)]
OptionalScore = Annotated[float | None, PlainSerializer(_score)]
Ratio = Annotated[float | None, PlainSerializer(_ratio)]


class CaseCellPublic(from_view(CaseCell, exclude=("case",))):
    """One case of a row; which case is said once, in `LeaderboardPublic.columns`."""

    score: OptionalScore
    ratio: Ratio


class ColumnPublic(from_view(BoardColumn)):
    pass


# The JSON names a submission by its public id; the flags the rows default are always sent.
_ROW_FIELDS = from_view(LeaderboardRow, exclude=("public_ids",),
                        required=("disqualified", "reviewers", "is_viewer", "live", "is_baseline"))  # fmt: skip


class LeaderboardRowPublic(_ROW_FIELDS):
    online_score: Score
    cells: list[CaseCellPublic | None]  # aligned with `columns`
    problem_scores: dict[str, Score]
    # problem -> the public id of the submission that ranks (docs/security.md, "Submission ids")
    submission_ids: dict[str, str] = Field(validation_alias=AliasChoices("public_ids", "submission_ids"))
    reviewer_score: OptionalScore
    final_score: OptionalScore


# `competition_id` and the frozen board's scoring `reference` stay in the store.
class LeaderboardPublic(from_view(Leaderboard, exclude=("competition_id", "reference"))):
    problems: list[str]
    columns: list[ColumnPublic]
    rows: list[LeaderboardRowPublic]
    baseline: LeaderboardRowPublic | None
