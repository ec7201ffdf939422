"""Leaderboard rows rendered once per board version, so a big board costs little per request.

A row's HTML depends only on its data, the board's columns and whether it is
the viewer's own (marked, or live on a frozen board). Rows that are nobody's in
particular are kept per (competition, board version); the viewer's own row is
rendered fresh. Polling browsers and the hall's projector then get a board
assembled from strings.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from markupsafe import Markup

from api.pages.web import render_fragment
from api.store import Leaderboard, LeaderboardRow


class RowCache:
    """Rendered rows per (competition id, board version key); the oldest versions are dropped first."""

    def __init__(self, max_versions: int = 16) -> None:
        self._versions: OrderedDict[tuple[int, str], dict[str, Markup]] = OrderedDict()
        self._lock = threading.Lock()
        self.max_versions = max_versions

    def rows(self, board: Leaderboard, rows: Sequence[LeaderboardRow], groups: Sequence[Any],
             version_key: str) -> list[Markup]:
        """The HTML of each row, in order."""
        key = (board.competition_id, version_key)
        with self._lock:
            cached = self._versions.setdefault(key, {})
            self._versions.move_to_end(key)
            while len(self._versions) > self.max_versions:
                self._versions.popitem(last=False)
        rendered = []
        for row in rows:
            name = row_key(row)
            personal = row.is_viewer or row.live
            html = None if personal else cached.get(name)
            if html is None:
                html = Markup(render_fragment("_board_row.html", row=row, key=name, signature=signature(row),
                                              board=board, groups=groups))  # fmt: skip
                if not personal:
                    cached[name] = html  # a dict item set is atomic: two threads at worst render it twice
            rendered.append(html)
        return rendered


def row_key(row: LeaderboardRow) -> str:
    return "baseline" if row.is_baseline else f"team-{row.team_id}"


def signature(row: LeaderboardRow) -> str:
    """A short digest of what a row shows; the page's script flashes rows whose digest changed."""
    cells = ",".join("-" if c is None else f"{c.score}" for c in row.cells)
    shown = (f"{row.rank}|{row.online_score:.6f}|{row.latest_verdict}|{row.last_submission_at}|"
             f"{row.reviewer_score}|{row.final_score}|{row.live}|{cells}")  # fmt: skip
    return hashlib.blake2b(shown.encode(), digest_size=6).hexdigest()
