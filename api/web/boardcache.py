"""Leaderboards cached per competition board version, as objects and as JSON bytes.

The store bumps a competition's board version whenever its standings change,
so a cached board is valid exactly as long as the version it was built from.
The version itself is read at most once per `ttl_s` per competition, so under
load most requests touch no database at all, and a board is at most `ttl_s`
late. Boards are cached without a viewer; a team's own view (marked row, live
row while frozen) is derived per request.

What is made from a board version (the HTML board page, its live fragment, each
row's HTML) is kept with the cached board by `rendered`, so it is built once per
version and dropped with it: there is one cache, keyed one way.
"""

from __future__ import annotations

import gzip
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from api.store.db import Session
from api.store.ranking import BoardState, Leaderboard, board_state, for_viewer, leaderboard
from api.web.schemas.leaderboard import LeaderboardPublic

T = TypeVar("T")


@dataclass(frozen=True)
class Encoded:
    """A response body as sent and as gzip, compressed once, with its entity tag."""

    body: bytes
    gzip: bytes
    etag: str


def encode(body: bytes, etag: str) -> Encoded:
    """`body` with its gzip form (level 6: a 500-team board page shrinks ~10x in a few ms, once)."""
    return Encoded(body, gzip.compress(body, compresslevel=6), etag)


@dataclass(frozen=True)
class CachedBoard:
    board: Leaderboard
    json: bytes  # the board without a viewer, serialised once
    gzip: bytes  # the same, compressed once (a 500-team board is ~10x smaller)
    etag: str
    final_published: bool  # whether the final ranking may be shown to everyone
    # What `BoardCache.rendered` built from this version (pages, fragments, rows), by name.
    renders: dict[str, object] = field(default_factory=dict, compare=False, repr=False)
    # Held while building one of them, so a new version is rendered once, not once per waiting
    # client (re-entrant: a page's build renders its rows through `rendered` too).
    build_lock: threading.RLock = field(default_factory=threading.RLock, compare=False, repr=False)


class BoardCache:
    def __init__(self, *, ttl_s: float = 1.0, max_boards: int = 64) -> None:
        self._boards: OrderedDict[tuple[object, ...], CachedBoard] = OrderedDict()
        self._states: dict[str, tuple[float, BoardState]] = {}
        self._lock = threading.Lock()
        self.ttl_s = ttl_s
        self.max_boards = max_boards

    def state(self, session: Session, *, competition: str) -> BoardState:
        """The competition's board state, read again when older than `ttl_s` (NotFoundError if unknown)."""
        seen = self._states.get(competition)
        if seen is not None and time.monotonic() - seen[0] < self.ttl_s:
            return seen[1]
        state = board_state(session, competition=competition)
        session.rollback()  # end the read at once; the board may come from the cache
        self._states[competition] = (time.monotonic(), state)
        return state

    def peek_state(self, *, competition: str) -> BoardState | None:
        """The competition's board state when read less than `ttl_s` ago (no database); else None."""
        seen = self._states.get(competition)
        if seen is None or time.monotonic() - seen[0] >= self.ttl_s:
            return None
        return seen[1]

    def peek(self, *, competition: str, now: datetime, final: bool = False, ignore_freeze: bool = False
             ) -> CachedBoard | None:  # fmt: skip
        """The cached board when it is known to be current, without touching the database; else None."""
        state = self.peek_state(competition=competition)
        if state is None:
            return None
        with self._lock:
            return self._boards.get(self._key(state, now, final, ignore_freeze))

    def get(
        self, session: Session, *, competition: str, now: datetime, final: bool = False, ignore_freeze: bool = False
    ) -> CachedBoard:
        """The board (no viewer) at `now`, from the cache when the competition's version has not moved."""
        state = self.state(session, competition=competition)
        key = self._key(state, now, final, ignore_freeze)
        with self._lock:
            cached = self._boards.get(key)
            if cached is not None:
                self._boards.move_to_end(key)
                return cached
        board = leaderboard(session, competition=competition, final=final, ignore_freeze=ignore_freeze, now=now)
        # From the board's own version, not the live one in `key`: a frozen board's stays put.
        etag = '"' + "-".join(str(part) for part in (key[0], board.version, *key[2:])) + '"'
        body = serialise(board)
        cached = CachedBoard(board, body, gzip.compress(body, compresslevel=6), etag, state.final_published)
        with self._lock:
            self._boards[key] = cached
            while len(self._boards) > self.max_boards:
                self._boards.popitem(last=False)
            # Pages rendered from older versions are never served again (keys carry the version):
            # drop them now rather than when the board leaves the cache, which may be 64 changes on.
            for older in self._boards.values():
                if older.board.competition_id == board.competition_id and older.board.version < board.version:
                    older.renders.clear()
        return cached

    @staticmethod
    def _key(state: BoardState, now: datetime, final: bool, ignore_freeze: bool) -> tuple[object, ...]:
        frozen = not final and not ignore_freeze and state.freeze_at is not None and now >= state.freeze_at
        return (state.competition_id, state.version, int(final), int(frozen), int(ignore_freeze))

    @staticmethod
    def rendered(cached: CachedBoard, name: str, build: Callable[[], T]) -> T:
        """What `build` makes of this board version under `name`, built on first use and kept with it.

        `build` must depend on nothing but the board and `name` (no viewer): every
        later caller of this version gets the same object.
        """
        value = cached.renders.get(name)
        if value is None:
            with cached.build_lock:
                value = cached.renders.get(name)
                if value is None:
                    value = cached.renders[name] = build()
        return value  # type: ignore[return-value]  # stored by this method under `name`, by the same caller

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
