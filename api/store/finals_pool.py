"""Which entries may rank under `ranked_by: chosen` (docs/organisers.md, "Chosen finals"), for standings.py.

A team's entries for a problem narrow to the submissions it marked as finals
(table `final_choices`); where it marked none that can still rank (none yet, or
every marked one disqualified), its latest judged submission counts, as under
`latest`. standings.py then takes the best of what is left, as under `best`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from api.store.models_organisers import FinalChoice


class _Candidate(Protocol):
    submission_id: int
    team_id: int
    problem: str
    created_at: datetime


E = TypeVar("E", bound=_Candidate)


def narrow_to_finals(session: Session, entries: Sequence[E]) -> list[E]:
    """`entries` (every judged, not disqualified entry) narrowed to each team's finals, else its latest."""
    teams = {e.team_id for e in entries}
    chosen = set(session.scalars(select(FinalChoice.submission_id).where(FinalChoice.team_id.in_(teams))))
    groups: dict[tuple[int, str], list[E]] = {}
    for entry in entries:
        groups.setdefault((entry.team_id, entry.problem), []).append(entry)
    kept: list[E] = []
    for group in groups.values():
        marked = [e for e in group if e.submission_id in chosen]
        kept.extend(marked or [max(group, key=lambda e: (e.created_at, e.submission_id))])
    return kept
