"""The published final ranking keeps the freeze (docs/organisers.md, "The final ranking").

It is a stored snapshot (table `final_rankings`), taken when the organisers first
publish it, which the service allows only after the submission window has ended
unless an override with a reason is given (audited). A later rejudge or
disqualification changes the live standings only; the published ranking moves
when the organisers recompute it, which replaces the snapshot (the older one is
kept as history) and lists what changed, in the answer and in the audit entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from api.store.audit import record_audit
from api.store.competitions import competition_row, competition_view
from api.store.errors import ConflictError, InvalidInputError
from api.store.final_codec import board_from_json, board_to_json
from api.store.models import Competition
from api.store.models_organisers import FinalRanking
from api.store.ranking import Leaderboard, LeaderboardRow, content_version, live_final
from api.store.standings_cache import bump_board_version
from api.store.views import CompetitionView, Principal

_COMPARED = ("rank", "final_score", "online_score", "reviewer_score", "disqualified", "submission_ids")


@dataclass(frozen=True)
class FinalChange:
    """One difference between two final rankings, for one team."""

    team_id: int
    team_name: str
    field: str  # one of _COMPARED, or "team" when the team appears or disappears
    before: Any
    after: Any


@dataclass(frozen=True)
class SnapshotInfo:
    id: int
    taken_at: datetime
    actor: str
    reason: str
    override: bool
    current: bool


@dataclass(frozen=True)
class FinalState:
    """What the organisers see of the final ranking: published or not, and its snapshot."""

    competition: str
    published: bool
    window_ends_at: datetime
    window_open: bool
    snapshot: SnapshotInfo | None
    history: tuple[SnapshotInfo, ...]


@dataclass(frozen=True)
class Recompute:
    """The differences a recomputation made (or, with `stored` False, would make)."""

    competition: str
    stored: bool
    snapshot: SnapshotInfo | None
    changes: tuple[FinalChange, ...]


def stored_final(session: Session, *, competition_id: int) -> Leaderboard | None:
    """The current snapshot of the final ranking as a board, or None before the first one."""
    row = _current(session, competition_id)
    if row is None:
        return None
    return board_from_json(row.board, version=content_version("final", row.id))


def final_state(session: Session, *, competition: str, now: datetime) -> FinalState:
    comp = competition_row(session, competition)
    rows = session.scalars(
        select(FinalRanking).where(FinalRanking.competition_id == comp.id).order_by(FinalRanking.id.desc())
    ).all()
    history = tuple(_info(r) for r in rows)
    current = next((h for h in history if h.current), None)
    return FinalState(comp.slug, comp.final_published, comp.ends_at, now < comp.ends_at, current, history)


def set_final_published(
    session: Session, *, competition: str, published: bool, actor: Principal | None, now: datetime,
    override: bool = False, reason: str = "",
) -> CompetitionView:  # fmt: skip
    """Show (or hide again) the final ranking (audited; commits).

    Publishing takes the snapshot when there is none yet; while the submission
    window is open it needs `override` and a reason (ConflictError otherwise).
    Hiding keeps the snapshot: publishing again shows the same ranking.
    """
    row = competition_row(session, competition, for_update=True)
    reason = reason.strip()
    details: dict[str, Any] = {"published": published}
    if published:
        _check_window(row, now, override=override, reason=reason, doing="publish the final ranking")
        snapshot = _current(session, row.id) or _take(session, row, actor, now, reason=reason,
                                                      override=now < row.ends_at)  # fmt: skip
        details |= {"snapshot": snapshot.id, "override": now < row.ends_at, "reason": reason}
    row.final_published = published
    row.board_version += 1  # cached boards carry the flag
    record_audit(session, actor=actor, action="competition.publish_final", now=now, competition_id=row.id,
                 target=competition, details=details)  # fmt: skip
    session.flush()
    view = competition_view(session, row)
    session.commit()  # after the last read: no transaction is left open
    return view


def recompute_final(
    session: Session, *, competition: str, actor: Principal | None, now: datetime, reason: str = "",
    override: bool = False, dry_run: bool = False,
) -> Recompute:  # fmt: skip
    """Replace the snapshot by the final ranking as the live standings give it now (audited; commits).

    With `dry_run` only the differences are returned and nothing changes. Like
    publishing, recomputing while the window is open needs `override` and a reason.
    """
    row = competition_row(session, competition, for_update=not dry_run)
    reason = reason.strip()
    old = _current(session, row.id)
    if old is None:
        raise ConflictError("there is no final ranking to recompute yet: publish it first")
    fresh = live_final(session, competition=competition, now=now)
    changes = tuple(differences(board_from_json(old.board, version=0), fresh))
    if dry_run:
        session.rollback()
        return Recompute(row.slug, False, None, changes)
    _check_window(row, now, override=override, reason=reason, doing="recompute the final ranking")
    session.execute(update(FinalRanking).where(FinalRanking.competition_id == row.id).values(current=False))
    snapshot = _take(session, row, actor, now, reason=reason, override=now < row.ends_at, board=fresh)
    record_audit(session, actor=actor, action="competition.recompute_final", now=now, competition_id=row.id,
                 target=competition, details={"snapshot": snapshot.id, "replaces": old.id, "reason": reason,
                                              "override": now < row.ends_at,
                                              "changes": [_change_json(c) for c in changes]})  # fmt: skip
    bump_board_version(session, competition_id=row.id)
    session.flush()
    info = _info(snapshot)
    session.commit()
    return Recompute(row.slug, True, info, changes)


def differences(before: Leaderboard, after: Leaderboard) -> list[FinalChange]:
    """Per team, what moved between two final rankings (rank, scores, the submissions that rank)."""
    old = {r.team_id: r for r in before.rows if not r.is_baseline}
    new = {r.team_id: r for r in after.rows if not r.is_baseline}
    found = []
    for team_id in sorted(old.keys() | new.keys()):
        a, b = old.get(team_id), new.get(team_id)
        if a is None or b is None:
            name = (a or b).team_name  # type: ignore[union-attr]  # one of them exists
            found.append(FinalChange(team_id, name, "team", None if a is None else "ranked",
                                     None if b is None else "ranked"))  # fmt: skip
            continue
        for name in _COMPARED:
            x, y = _value(a, name), _value(b, name)
            if x != y:
                found.append(FinalChange(team_id, b.team_name, name, x, y))
    return found


def _value(row: LeaderboardRow, name: str) -> Any:
    value = getattr(row, name)
    return round(value, 4) if isinstance(value, float) else value


def _check_window(row: Competition, now: datetime, *, override: bool, reason: str, doing: str) -> None:
    if now >= row.ends_at:
        return
    if not override:
        raise ConflictError(
            f"the submission window is open until {row.ends_at.isoformat()}: to {doing} now, before the "
            "results are final, confirm with override and a reason (it is audited). Teams can still submit, "
            "and a published final ranking shows them the private cases by name with every entry's per-case "
            "ratios: they could tune their kernels to the private cases until the window ends"
        )
    if not reason:
        raise InvalidInputError(f"say why you {doing} before the submission window ends")


def _take(session: Session, row: Competition, actor: Principal | None, now: datetime, *, reason: str,
          override: bool, board: Leaderboard | None = None) -> FinalRanking:  # fmt: skip
    board = board or live_final(session, competition=row.slug, now=now)
    snapshot = FinalRanking(competition_id=row.id, taken_at=now, actor=actor.actor if actor else "system",
                            reason=reason, override=override, current=True, board=board_to_json(board))  # fmt: skip
    session.add(snapshot)
    session.flush()
    return snapshot


def _current(session: Session, competition_id: int) -> FinalRanking | None:
    return session.scalars(
        select(FinalRanking).where(FinalRanking.competition_id == competition_id, FinalRanking.current)
    ).first()


def _info(row: FinalRanking) -> SnapshotInfo:
    return SnapshotInfo(row.id, row.taken_at, row.actor, row.reason, row.override, row.current)


def _change_json(change: FinalChange) -> dict[str, Any]:
    return {"team_id": change.team_id, "team": change.team_name, "field": change.field,
            "before": change.before, "after": change.after}  # fmt: skip
