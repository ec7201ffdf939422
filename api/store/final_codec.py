"""A final-ranking `Leaderboard` to JSON and back, for the stored snapshot (final_rankings.board)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from api.store.enums import RankedBy, RelativeTo
from api.store.ranking import BoardColumn, Leaderboard, LeaderboardRow
from api.store.standings import CaseCell
from judge.backends import CaseSet
from judge.verdict import Verdict


def board_to_json(board: Leaderboard) -> dict[str, Any]:
    """What a snapshot stores: everything the final view renders (no viewer marks)."""
    return {
        "competition": board.competition, "competition_id": board.competition_id, "title": board.title,
        "relative_to": board.relative_to.value, "ranked_by": board.ranked_by.value,
        "online_weight": board.online_weight, "reviewer_weight": board.reviewer_weight,
        "generated_at": board.generated_at.isoformat(), "problems": list(board.problems),
        "columns": [[c.problem, c.case] for c in board.columns],
        "rows": [_row_to_json(r) for r in board.rows],
        "baseline": _row_to_json(board.baseline) if board.baseline else None,
    }  # fmt: skip


def board_from_json(data: dict[str, Any], *, version: int) -> Leaderboard:
    return Leaderboard(
        competition=data["competition"], competition_id=data["competition_id"], title=data["title"],
        case_set=CaseSet.PRIVATE, final=True, frozen=False, frozen_at=None, as_of=None,
        relative_to=RelativeTo(data["relative_to"]), ranked_by=RankedBy(data["ranked_by"]),
        online_weight=data["online_weight"], reviewer_weight=data["reviewer_weight"], version=version,
        generated_at=datetime.fromisoformat(data["generated_at"]),
        columns=tuple(BoardColumn(p, c) for p, c in data["columns"]),
        rows=tuple(_row_from_json(r) for r in data["rows"]),
        baseline=_row_from_json(data["baseline"]) if data.get("baseline") else None,
        problems=tuple(data["problems"]),
    )  # fmt: skip


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _row_to_json(r: LeaderboardRow) -> dict[str, Any]:
    return {
        "rank": r.rank, "team_id": r.team_id, "team_name": r.team_name, "online_score": r.online_score,
        "cells": [None if c is None else [c.case, c.score, c.ratio, c.passed] for c in r.cells],
        "problem_scores": r.problem_scores, "submission_ids": r.submission_ids,
        "submitted_at": _time(r.submitted_at), "last_submission_at": _time(r.last_submission_at),
        "latest_verdict": r.latest_verdict.value if r.latest_verdict else None, "disqualified": r.disqualified,
        "reviewer_score": r.reviewer_score, "reviewers": r.reviewers, "final_score": r.final_score,
        "is_baseline": r.is_baseline, "disturbed": r.disturbed, "public_ids": r.public_ids,
    }  # fmt: skip


def _row_from_json(d: dict[str, Any]) -> LeaderboardRow:
    def when(key: str) -> datetime | None:
        return datetime.fromisoformat(d[key]) if d.get(key) else None

    return LeaderboardRow(
        rank=d["rank"], team_id=d["team_id"], team_name=d["team_name"], online_score=d["online_score"],
        cells=tuple(None if c is None else CaseCell(c[0], c[1], c[2], c[3]) for c in d["cells"]),
        problem_scores=dict(d["problem_scores"]), submission_ids={k: int(v) for k, v in d["submission_ids"].items()},
        submitted_at=when("submitted_at"), last_submission_at=when("last_submission_at"),
        latest_verdict=Verdict(d["latest_verdict"]) if d.get("latest_verdict") else None,
        disqualified=d["disqualified"], reviewer_score=d["reviewer_score"], reviewers=d["reviewers"],
        final_score=d["final_score"], is_baseline=d.get("is_baseline", False), disturbed=d.get("disturbed", ""),
        public_ids=dict(d.get("public_ids", {})),
    )  # fmt: skip
