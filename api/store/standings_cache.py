"""The cached standings table: rewritten when results change, read by every board.

`recompute_standings` runs when a scored run finishes, a submission is
disqualified or the scoring settings change (never per request) and bumps the
competition's board version, which board caches key on.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.orm import Session

from api.store.models import Competition, Standing, Team
from api.store.standings import RANKED_SETS, CaseCell, EntryStanding, TeamStanding, compute_standings
from judge.backends import Backend, CaseSet
from judge.verdict import Verdict


def recompute_standings(session: Session, *, competition_id: int) -> None:
    """Rewrite the cached live standings of a competition and bump its board version (no commit)."""
    if session.get_bind().dialect.name != "sqlite":
        # Two workers finishing at once would both rewrite the table: take turns.
        session.execute(select(Competition.id).where(Competition.id == competition_id).with_for_update())
    for case_set in RANKED_SETS:
        rows = compute_standings(session, competition_id=competition_id, case_set=case_set)
        session.execute(
            delete(Standing).where(Standing.competition_id == competition_id, Standing.case_set == case_set)
        )
        if rows:
            session.execute(insert(Standing), [_to_row(competition_id, case_set, s) for s in rows])
    bump_board_version(session, competition_id=competition_id)


def read_standings(
    session: Session, *, competition_id: int, case_set: CaseSet, team_id: int | None = None
) -> list[TeamStanding]:
    """The cached live standings (of one team, with `team_id`), ranked first, then the unranked."""
    query = (
        select(Standing, Team.name)
        .join(Team, Team.id == Standing.team_id)
        .where(Standing.competition_id == competition_id, Standing.case_set == case_set)
        .order_by(Standing.rank.is_(None), Standing.rank, Team.name)
    )
    if team_id is not None:
        query = query.where(Standing.team_id == team_id)
    return [_from_row(row, name) for row, name in session.execute(query)]


def bump_board_version(session: Session, *, competition_id: int) -> None:
    """Tell board caches that anything they hold for this competition is stale."""
    session.execute(
        update(Competition).where(Competition.id == competition_id).values(board_version=Competition.board_version + 1)
    )


def _to_row(competition_id: int, case_set: CaseSet, s: TeamStanding) -> dict[str, Any]:
    return {
        "competition_id": competition_id, "case_set": case_set, "team_id": s.team_id, "rank": s.rank,
        "score": s.score, "tie_at": s.tie_at, "disqualified": s.disqualified,
        "last_submission_at": s.last_submission_at, "latest_verdict": s.latest_verdict,
        "entries": {
            slug: {"submission_id": e.submission_id, "run_id": e.run_id, "backend": e.backend.value,
                   "submitted_at": e.submitted_at.isoformat(), "verdict": e.verdict.value, "score": e.score,
                   "cases": [[c.case, c.score, c.ratio, c.passed] for c in e.cases], "disturbed": e.disturbed,
                   "public_id": e.public_id}
            for slug, e in s.entries.items()
        },
    }  # fmt: skip


def _from_row(row: Standing, team_name: str) -> TeamStanding:
    entries = {
        slug: EntryStanding(slug, e["submission_id"], e["run_id"], Backend(e["backend"]),
                            datetime.fromisoformat(e["submitted_at"]), Verdict(e["verdict"]), e["score"],
                            tuple(CaseCell(c[0], c[1], c[2], c[3]) for c in e["cases"]), e.get("disturbed", ""),
                            e.get("public_id", ""))
        for slug, e in row.entries.items()
    }  # fmt: skip
    return TeamStanding(
        row.team_id,
        team_name,
        row.rank,
        row.score,
        row.tie_at,
        row.disqualified,
        row.last_submission_at,
        row.latest_verdict,
        entries,
    )
