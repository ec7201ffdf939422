"""Row counts per table: for operators (`how big is it?`) and for tests that check nothing changed."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from api.store.models import Base


def row_counts(session: Session) -> dict[str, int]:
    """Table name -> number of rows, for every table of the store."""
    return {
        name: session.scalar(select(func.count()).select_from(table)) or 0
        for name, table in sorted(Base.metadata.tables.items())
    }
