"""Leaderboard rows rendered once per board version, so a big board costs little per request.

A row's HTML depends only on its data, the board's columns and whether it is
the viewer's own (marked, or live on a frozen board). Rows that are nobody's in
particular are kept with the cached board version (`BoardCache.rendered`); the
viewer's own row is rendered fresh. A personal board is then mostly assembled
from strings.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from markupsafe import Markup

from api.store.ranking import Leaderboard, LeaderboardRow
from api.web.boardcache import BoardCache, CachedBoard
from api.web.pages.web import render_fragment


def row_html(cached: CachedBoard, board: Leaderboard, rows: Sequence[LeaderboardRow],
             groups: Sequence[Any]) -> list[Markup]:  # fmt: skip
    """The HTML of each row, in order; `board` is `cached.board` or a viewer's view of it."""

    shown = [f"{r.online_score if not board.final else r.final_score or 0:.2f}" for r in rows if r.rank]
    tied_scores = {score for score in shown if shown.count(score) > 1}

    def render(row: LeaderboardRow, name: str) -> Markup:
        score = f"{row.online_score if not board.final else row.final_score or 0:.2f}"
        tied = bool(row.rank) and score in tied_scores  # equal as shown: the earlier ranked submission goes first
        return Markup(render_fragment("_board_row.html", row=row, key=name, signature=signature(row), board=board,
                                      groups=groups, tied=tied))  # fmt: skip

    rendered = []
    for row in rows:
        name = row_key(row)
        if row.is_viewer or row.live:
            rendered.append(render(row, name))
        else:
            rendered.append(BoardCache.rendered(cached, f"row:{name}", lambda row=row, name=name: render(row, name)))
    return rendered


def row_key(row: LeaderboardRow) -> str:
    return "baseline" if row.is_baseline else f"team-{row.team_id}"


def signature(row: LeaderboardRow) -> str:
    """A short digest of what a row shows; the page's script flashes rows whose digest changed."""
    cells = ",".join("-" if c is None else f"{c.score}" for c in row.cells)
    shown = (f"{row.rank}|{row.online_score:.6f}|{row.latest_verdict}|{row.last_submission_at}|"
             f"{row.reviewer_score}|{row.final_score}|{row.live}|{cells}|{row.disturbed}")  # fmt: skip
    return hashlib.blake2b(shown.encode(), digest_size=6).hexdigest()
