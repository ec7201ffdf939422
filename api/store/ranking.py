"""Boards to render: the public leaderboard (benchmarks) and the final ranking (private + reviewers).

Both read the cached standings table; only a board as of a past moment (the
frozen public board) is computed, from SQL, by `compute_standings`. Callers
that serve many readers cache a board per `board_version`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from api.store.competitions import competition_row
from api.store.enums import RankedBy, RelativeTo
from api.store.models import Competition, CompetitionProblem, Problem
from api.store.reviews import reviewer_scores
from api.store.standings import CaseCell, Reference, TeamStanding, compute_standings, reference_of
from api.store.standings_cache import read_standings
from api.store.types import utcnow
from judge.backends import CaseSet
from judge.scoring import case_score_vs_baseline, case_score_vs_best, final_score
from judge.verdict import Verdict


@dataclass(frozen=True)
class BoardColumn:
    problem: str
    case: str


@dataclass(frozen=True)
class LeaderboardRow:
    rank: int | None  # None: not ranked (disqualified, or the baseline reference row)
    team_id: int  # 0 for the baseline row
    team_name: str
    online_score: float  # mean over the competition's problems of the per-problem score
    cells: tuple[CaseCell | None, ...]  # aligned with Leaderboard.columns; None: no such case
    problem_scores: dict[str, float]
    submission_ids: dict[str, int]  # problem -> the submission that ranks
    submitted_at: datetime | None  # the tie-break time: the latest of the ranked submissions
    last_submission_at: datetime | None  # the team's latest judged submission
    latest_verdict: Verdict | None
    disqualified: bool = False
    reviewer_score: float | None = None  # final ranking only
    reviewers: int = 0  # final ranking only: how many reviewers marked the team
    final_score: float | None = None  # final ranking only
    is_viewer: bool = False  # the row of the team asking
    live: bool = False  # the viewer's own up-to-date row on a frozen board
    is_baseline: bool = False
    # Non-empty: a ranked entry's run was timed on a host that stayed disturbed through re-timing (why):
    # marked on the board.
    disturbed: str = ""
    # problem -> the public id of the submission that ranks: what the JSON shows as `submission_ids`,
    # since the database ids count every team's submissions (docs/security.md, "Submission ids").
    public_ids: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Leaderboard:
    competition: str
    competition_id: int
    title: str
    case_set: CaseSet  # benchmarks (public board) or private (final ranking)
    final: bool
    frozen: bool
    frozen_at: datetime | None  # the moment the public board shows, when frozen
    as_of: datetime | None  # None: now
    relative_to: RelativeTo
    ranked_by: RankedBy
    online_weight: float
    reviewer_weight: float
    version: int  # the competition's board version this was built from
    generated_at: datetime
    problems: tuple[str, ...] = field(default=())
    columns: tuple[BoardColumn, ...] = ()
    rows: tuple[LeaderboardRow, ...] = ()
    baseline: LeaderboardRow | None = None  # the problem's baseline kernel: ratio 1 on every case
    # Frozen public board: the r*_c its rows were scored with, which the viewer's live row is scored against.
    reference: Reference = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class BoardState:
    """What a board cache keys on, read in one small query."""

    competition_id: int
    version: int
    freeze_at: datetime | None
    final_published: bool


def board_state(session: Session, *, competition: str) -> BoardState:
    """The competition's board version, freeze time and whether the final ranking is public."""
    row = competition_row(session, competition)
    return BoardState(row.id, row.board_version, row.freeze_at, row.final_published)


def leaderboard(
    session: Session,
    *,
    competition: str,
    as_of: datetime | None = None,
    viewer_team: int | None = None,
    final: bool = False,
    ignore_freeze: bool = False,
    now: datetime | None = None,
) -> Leaderboard:
    """The public board (or with `final`, the final ranking) to render.

    The public board honours the freeze unless `ignore_freeze` (organisers): from
    the freeze time on it shows the standings as they were then, except that
    `viewer_team` sees its own row up to date. `as_of` shows an earlier moment.
    The final ranking is public only once published: the caller checks that. Once a
    snapshot of it was taken (final_ranking.py), `final` returns the snapshot.
    """
    comp = competition_row(session, competition)
    now = now or utcnow()
    problems = _problems(session, comp)
    if final:
        # docs/organisers.md, "The final ranking": once taken, the stored snapshot is the ranking; it never
        # moves by itself.
        from api.store.final_ranking import stored_final  # the snapshot module builds on this one

        board = stored_final(session, competition_id=comp.id) or _final(session, comp, problems, now)
        return for_viewer(session, board, viewer_team=viewer_team)
    moment = as_of
    frozen_at = None
    if not ignore_freeze and comp.freeze_at is not None and (as_of or now) >= comp.freeze_at:
        moment = frozen_at = comp.freeze_at
    if moment is None:
        standings = read_standings(session, competition_id=comp.id, case_set=CaseSet.BENCHMARKS)
    else:
        standings = compute_standings(session, competition_id=comp.id, case_set=CaseSet.BENCHMARKS, as_of=moment)
    columns = _columns(problems, standings)
    rows = [_row(s, columns) for s in standings]
    board = Leaderboard(
        competition=comp.slug, competition_id=comp.id, title=comp.title, case_set=CaseSet.BENCHMARKS, final=False,
        frozen=frozen_at is not None, frozen_at=frozen_at, as_of=as_of, relative_to=comp.relative_to,
        ranked_by=comp.ranked_by, online_weight=comp.online_weight, reviewer_weight=comp.reviewer_weight,
        version=comp.board_version, generated_at=now, columns=columns, rows=tuple(rows),
        baseline=_baseline(comp, problems, columns, rows), problems=problems,
        reference=reference_of(standings) if frozen_at is not None else {},
    )  # fmt: skip
    if frozen_at is not None:
        # The live version moves with every judged run and every reviewer mark: shown on a frozen
        # board (and in its ETag), it would let anyone count and time the others' runs after the
        # freeze. The frozen board's version says only what the frozen board shows.
        board = replace(board, version=content_version(board.columns, board.rows), generated_at=frozen_at)
    return for_viewer(session, board, viewer_team=viewer_team)


def live_final(session: Session, *, competition: str, now: datetime | None = None) -> Leaderboard:
    """The final ranking computed now from the live standings (what a snapshot stores)."""
    comp = competition_row(session, competition)
    return _final(session, comp, _problems(session, comp), now or utcnow())


def _problems(session: Session, comp: Competition) -> tuple[str, ...]:
    return tuple(session.scalars(
        select(Problem.slug).join(CompetitionProblem, CompetitionProblem.problem_id == Problem.id)
        .where(CompetitionProblem.competition_id == comp.id).order_by(CompetitionProblem.position)
    ))  # fmt: skip


def content_version(*parts: object) -> int:
    """A version that changes only when `parts` do (48 bits of a hash of their repr)."""
    return int.from_bytes(hashlib.blake2b(repr(parts).encode(), digest_size=6).digest(), "big")


def for_viewer(session: Session, board: Leaderboard, *, viewer_team: int | None) -> Leaderboard:
    """`board` as team `viewer_team` sees it: its row marked and, on a frozen board, up to date.

    Boards are cached without a viewer; this is the cheap per-request step.
    """
    if viewer_team is None:
        return board
    rows = list(board.rows)
    if board.frozen and not board.final:
        live = _live_standing(session, board, viewer_team)
        if live:
            rows = _with_live_row(rows, _row(live[0], board.columns))
            # The team's own live row moves its view on; the others' rows stay frozen.
            board = replace(board, version=content_version(board.version, rows))
    rows = [replace(r, is_viewer=True) if r.team_id == viewer_team else r for r in rows]
    return replace(board, rows=tuple(rows))


def _live_standing(session: Session, board: Leaderboard, team_id: int) -> list[TeamStanding]:
    """The team's up-to-date standing on a frozen board.

    Under `relative_to: best` a score depends on r*_c, which other teams' later
    results move: score the team's entries against the frozen board's r*_c, so its
    own row shows only its own results (docs/rules.md, "Contest rules the service enforces": freeze).
    """
    if board.relative_to is RelativeTo.BEST:
        return compute_standings(session, competition_id=board.competition_id, case_set=CaseSet.BENCHMARKS,
                                 team_id=team_id, reference=board.reference)  # fmt: skip
    return read_standings(session, competition_id=board.competition_id, case_set=CaseSet.BENCHMARKS, team_id=team_id)


def _final(session: Session, comp: Competition, problems: tuple[str, ...], now: datetime) -> Leaderboard:
    """docs/rules.md: final = online_weight * online (private) + reviewer_weight * reviewer."""
    standings = read_standings(session, competition_id=comp.id, case_set=CaseSet.PRIVATE)
    reviews = reviewer_scores(session, competition_id=comp.id)
    columns = _columns(problems, standings)
    rows = []
    for s in standings:
        reviewer, count = reviews.get(s.team_id, (None, 0))
        total = (
            None
            if s.rank is None
            else final_score(s.score, reviewer, online_weight=comp.online_weight, reviewer_weight=comp.reviewer_weight)
        )
        rows.append(replace(_row(s, columns), reviewer_score=reviewer, reviewers=count, final_score=total))
    ranked = sorted((r for r in rows if r.final_score is not None),
                    key=lambda r: (-round(r.final_score or 0.0, 9), r.submitted_at, r.team_id))  # fmt: skip
    rows = [replace(r, rank=i + 1) for i, r in enumerate(ranked)] + [r for r in rows if r.final_score is None]
    return Leaderboard(
        competition=comp.slug, competition_id=comp.id, title=comp.title, case_set=CaseSet.PRIVATE, final=True,
        frozen=False, frozen_at=None, as_of=None, relative_to=comp.relative_to, ranked_by=comp.ranked_by,
        online_weight=comp.online_weight, reviewer_weight=comp.reviewer_weight, version=comp.board_version,
        generated_at=now, columns=columns, rows=tuple(rows), baseline=_baseline(comp, problems, columns, rows),
        problems=problems,
    )  # fmt: skip


def _columns(problems: tuple[str, ...], standings: list[TeamStanding]) -> tuple[BoardColumn, ...]:
    seen: dict[str, dict[str, None]] = {p: {} for p in problems}
    for standing in standings:
        for slug, entry in standing.entries.items():
            for cell in entry.cases:
                seen.setdefault(slug, {})[cell.case] = None
    return tuple(BoardColumn(p, c) for p, cases in seen.items() for c in cases)


def _row(s: TeamStanding, columns: tuple[BoardColumn, ...]) -> LeaderboardRow:
    cells = {(slug, c.case): c for slug, e in s.entries.items() for c in e.cases}
    return LeaderboardRow(
        rank=s.rank, team_id=s.team_id, team_name=s.team_name, online_score=s.score,
        cells=tuple(cells.get((col.problem, col.case)) for col in columns),
        problem_scores={slug: e.score for slug, e in s.entries.items()},
        submission_ids={slug: e.submission_id for slug, e in s.entries.items()},
        public_ids={slug: e.public_id for slug, e in s.entries.items() if e.public_id},
        submitted_at=s.tie_at, last_submission_at=s.last_submission_at, latest_verdict=s.latest_verdict,
        disqualified=s.disqualified, disturbed="; ".join(e.disturbed for e in s.entries.values() if e.disturbed),
    )  # fmt: skip


def _with_live_row(rows: list[LeaderboardRow], live: LeaderboardRow) -> list[LeaderboardRow]:
    """Put the viewer's live row where its frozen row was (or at the end); the frozen rank stays."""
    for i, row in enumerate(rows):
        if row.team_id == live.team_id:
            return rows[:i] + [replace(live, rank=row.rank, live=True)] + rows[i + 1 :]
    return rows + [replace(live, rank=None, live=True)]


def _baseline(
    comp: Competition, problems: tuple[str, ...], columns: tuple[BoardColumn, ...], rows: list[LeaderboardRow]
) -> LeaderboardRow:
    """The reference row: the baseline kernel has r_c = 1 on every case by definition."""
    cells = []
    for i, _column in enumerate(columns):
        if comp.relative_to is RelativeTo.BASELINE:
            score = case_score_vs_baseline(1.0, comp.score_cap)
        else:
            ratios = [r.cells[i].ratio for r in rows if r.cells[i] is not None and r.cells[i].score is not None]
            score = case_score_vs_best(1.0, min(ratios)) if ratios else 100.0  # type: ignore[arg-type]
        cells.append(CaseCell(_column.case, score, 1.0, True))
    per_problem = {}
    for slug in problems:
        scores = [c.score or 0.0 for c, col in zip(cells, columns, strict=True) if col.problem == slug]
        if scores:
            per_problem[slug] = sum(scores) / len(scores)
    online = sum(per_problem.values()) / len(problems) if problems else 0.0
    return LeaderboardRow(rank=None, team_id=0, team_name="baseline", online_score=online, cells=tuple(cells),
                          problem_scores=per_problem, submission_ids={}, submitted_at=None,
                          last_submission_at=None, latest_verdict=None, is_baseline=True)  # fmt: skip
