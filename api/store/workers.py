"""Workers seen by the service: registration on start, heartbeats, and the load per queue."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from api.store.enums import IN_FLIGHT
from api.store.errors import NotFoundError
from api.store.models import Run, Worker
from api.store.types import utcnow
from api.store.views import QueueLoad, WorkerView


def register_worker(
    session: Session, *, name: str, queue: str, info: dict[str, Any], now: datetime | None = None
) -> WorkerView:
    """Record a worker starting on `queue` with its host, device, toolchain and driver versions (commits)."""
    now = now or utcnow()
    row = session.scalars(select(Worker).where(Worker.name == name)).first()
    if row is None:
        row = Worker(name=name, queue=queue, info=dict(info), started_at=now, last_seen_at=now)
        session.add(row)
    else:
        row.queue, row.info, row.started_at, row.last_seen_at = queue, dict(info), now, now
    session.commit()
    return _view(row)


def worker_heartbeat(
    session: Session, *, name: str, now: datetime | None = None, status: dict[str, Any] | None = None
) -> None:
    """The worker is alive (commits); NotFoundError if it never registered.

    `status`: values that change while it runs (its oracle cache's size), merged into its info.
    """
    row = session.scalars(select(Worker).where(Worker.name == name)).first()
    if row is None:
        raise NotFoundError(f"worker {name!r} never registered")
    row.last_seen_at = now or utcnow()
    if status:
        row.info = {**row.info, **status}  # a new dict: the JSON column sees the change
    session.commit()


def list_workers(session: Session) -> list[WorkerView]:
    """Every worker seen, most recently seen first."""
    return [_view(row) for row in session.scalars(select(Worker).order_by(Worker.last_seen_at.desc()))]


def queue_load(session: Session) -> list[QueueLoad]:
    """How many runs wait or run per queue (for the organisers' page)."""
    rows = session.execute(
        select(Run.queue, Run.status, func.count())
        .where(Run.status.in_(IN_FLIGHT))
        .group_by(Run.queue, Run.status)
        .order_by(Run.queue, Run.status)
    )
    return [QueueLoad(queue, status, count) for queue, status, count in rows]


def _view(row: Worker) -> WorkerView:
    return WorkerView(row.name, row.queue, dict(row.info), row.started_at, row.last_seen_at)
