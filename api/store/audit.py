"""The audit log: every organiser action, written in the same transaction as the action."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from api.store.models import AuditEntry, Competition
from api.store.views import AuditView, Principal


def record_audit(
    session: Session,
    *,
    actor: Principal | None,
    action: str,
    now: datetime,
    competition_id: int | None = None,
    target: str = "",
    details: dict[str, Any] | None = None,
) -> None:
    """Add an audit entry to the caller's transaction (the caller commits with its action)."""
    session.add(
        AuditEntry(
            at=now,
            competition_id=competition_id,
            actor_token_id=actor.token_id if actor else None,
            actor=actor.actor if actor else "system",
            action=action,
            target=target,
            details=details or {},
        )
    )


def list_audit(
    session: Session, *, competition: str | None = None, limit: int = 100, before_id: int | None = None
) -> list[AuditView]:
    """Audit entries, newest first; `before_id` pages back through older ones."""
    query = select(AuditEntry).order_by(AuditEntry.id.desc()).limit(limit)
    if competition is not None:
        query = query.join(Competition, Competition.id == AuditEntry.competition_id).where(
            Competition.slug == competition
        )
    if before_id is not None:
        query = query.where(AuditEntry.id < before_id)
    return [
        AuditView(
            id=e.id,
            at=e.at,
            competition_id=e.competition_id,
            actor=e.actor,
            action=e.action,
            target=e.target,
            details=e.details,
        )
        for e in session.scalars(query)
    ]
