"""Leaderboards cached per competition board version, as objects and as JSON bytes.

The store bumps a competition's board version whenever its standings change,
so a cached board is valid exactly as long as the version it was built from.
The version itself is read at most once per `ttl_s` per competition, so under
load most requests touch no database at all, and a board is at most `ttl_s`
late. Boards are cached without a viewer; a team's own view (marked row, live
row while frozen) is derived per request.
"""

from __future__ import annotations

import gzip
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime

from api.schemas.leaderboard import LeaderboardPublic
from api.store import BoardState, Leaderboard, Session, board_state, for_viewer, leaderboard


@dataclass(frozen=True)
class CachedBoard:
    board: Leaderboard
    json: bytes  # the board without a viewer, serialised once
    gzip: bytes  # the same, compressed once (a 500-team board is ~10x smaller)
    etag: str
    final_published: bool  # whether the final ranking may be shown to everyone


class BoardCache:
    def __init__(self, *, ttl_s: float = 1.0, max_boards: int = 64) -> None:
        self._boards: OrderedDict[tuple[object, ...], CachedBoard] = OrderedDict()
        self._states: dict[str, tuple[float, BoardState]] = {}
        self._lock = threading.Lock()
        self.ttl_s = ttl_s
        self.max_boards = max_boards

    def _state(self, session: Session, competition: str) -> BoardState:
        seen = self._states.get(competition)
        if seen is not None and time.monotonic() - seen[0] < self.ttl_s:
            return seen[1]
        state = board_state(session, competition=competition)
        session.rollback()  # end the read at once; the board may come from the cache
        self._states[competition] = (time.monotonic(), state)
        return state

    def peek(self, *, competition: str, now: datetime, final: bool = False, ignore_freeze: bool = False
             ) -> CachedBoard | None:  # fmt: skip
        """The cached board when it is known to be current, without touching the database; else None."""
        seen = self._states.get(competition)
        if seen is None or time.monotonic() - seen[0] >= self.ttl_s:
            return None
        with self._lock:
            return self._boards.get(self._key(seen[1], now, final, ignore_freeze))

    def get(
        self, session: Session, *, competition: str, now: datetime, final: bool = False, ignore_freeze: bool = False
    ) -> CachedBoard:
        """The board (no viewer) at `now`, from the cache when the competition's version has not moved."""
        state = self._state(session, competition)
        key = self._key(state, now, final, ignore_freeze)
        with self._lock:
            cached = self._boards.get(key)
            if cached is not None:
                self._boards.move_to_end(key)
                return cached
        board = leaderboard(session, competition=competition, final=final, ignore_freeze=ignore_freeze, now=now)
        etag = '"' + "-".join(str(part) for part in key) + '"'
        body = serialise(board)
        cached = CachedBoard(board, body, gzip.compress(body, compresslevel=6), etag, state.final_published)
        with self._lock:
            self._boards[key] = cached
            while len(self._boards) > self.max_boards:
                self._boards.popitem(last=False)
        return cached

    @staticmethod
    def _key(state: BoardState, now: datetime, final: bool, ignore_freeze: bool) -> tuple[object, ...]:
        frozen = not final and not ignore_freeze and state.freeze_at is not None and now >= state.freeze_at
        return (state.competition_id, state.version, int(final), int(frozen), int(ignore_freeze))

    def for_viewer(
        self, session: Session, cached: CachedBoard, *, viewer_team: int | None
    ) -> tuple[Leaderboard, bytes]:
        """The cached board as `viewer_team` sees it (the cached bytes when there is no viewer)."""
        if viewer_team is None:
            return cached.board, cached.json
        board = for_viewer(session, cached.board, viewer_team=viewer_team)
        return board, serialise(board)


def serialise(board: Leaderboard) -> bytes:
    return LeaderboardPublic.model_validate(board, from_attributes=True).model_dump_json().encode()
