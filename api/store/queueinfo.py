"""Where a waiting run stands in its queue, and how long it may wait (docs/user-guide.md, "Submitting").

The position follows the order workers take runs: by priority (test runs first,
api/store/modes.py), then oldest first. The estimate adds the typical judge time
of each run ahead (the median of the queue's recent runs of the same priority)
and what is left of the runs being judged now, shared among the queue's live
workers. It is an estimate: None until the queue has finished a run.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from api.store.enums import RunStatus
from api.store.models import Run, Worker

RECENT_RUNS = 50  # finished runs of a queue the estimate learns from
WORKER_ALIVE_S = 120  # a worker seen this recently still takes runs


@dataclass(frozen=True)
class QueuePlace:
    queue: str
    position: int  # 1: the next run a worker takes
    ahead: int  # runs waiting before this one
    running: int  # runs of this queue being judged now
    workers: int  # live workers on the queue (1 when none is registered: the embedded server)
    typical_run_s: float | None  # the median judge time of this priority's recent runs
    estimated_wait_s: float | None  # None: no finished run to learn from yet


def queue_place(session: Session, *, run: Run, now: datetime) -> QueuePlace | None:
    """The place of `run` while it waits (pending or queued); None once it runs or has finished."""
    if run.status not in (RunStatus.PENDING, RunStatus.QUEUED):
        return None
    waiting = (Run.queue == run.queue) & Run.status.in_([RunStatus.PENDING, RunStatus.QUEUED])
    before = or_(Run.priority < run.priority, (Run.priority == run.priority) & (Run.id < run.id))
    ahead_rows = session.execute(select(Run.priority).where(waiting, before)).scalars().all()
    running = session.execute(
        select(Run.priority, Run.started_at).where(Run.queue == run.queue, Run.status == RunStatus.RUNNING)
    ).all()
    medians = _median_times(session, run.queue)
    workers = _live_workers(session, run.queue, now)
    typical = medians.get(run.priority, medians.get(-1))
    estimate = _estimate(ahead_rows, running, medians, workers, now)
    return QueuePlace(run.queue, len(ahead_rows) + 1, len(ahead_rows), len(running), workers, typical, estimate)


def _estimate(ahead: list[int], running: list[tuple[int, datetime | None]], medians: dict[int, float],
              workers: int, now: datetime) -> float | None:  # fmt: skip
    if not medians:
        return None
    overall = medians[-1]
    total = sum(medians.get(p, overall) for p in ahead)
    for priority, started in running:
        elapsed = (now - started).total_seconds() if started else 0.0
        total += max(0.0, medians.get(priority, overall) - elapsed)
    return round(total / workers, 1)


def _median_times(session: Session, queue: str) -> dict[int, float]:
    """Median seconds from claim to finish per priority of the queue's recent runs; -1: all of them."""
    rows = session.execute(
        select(Run.priority, Run.started_at, Run.finished_at)
        .where(Run.queue == queue, Run.status == RunStatus.DONE, Run.started_at.is_not(None),
               Run.finished_at.is_not(None))
        .order_by(Run.finished_at.desc())
        .limit(RECENT_RUNS)
    ).all()  # fmt: skip
    by_priority: dict[int, list[float]] = {}
    for priority, started, finished in rows:
        seconds = max(0.0, (finished - started).total_seconds())
        by_priority.setdefault(priority, []).append(seconds)
        by_priority.setdefault(-1, []).append(seconds)
    return {p: statistics.median(v) for p, v in by_priority.items()}


def _live_workers(session: Session, queue: str, now: datetime) -> int:
    seen = session.scalar(
        select(func.count()).select_from(Worker)
        .where(Worker.queue == queue, Worker.last_seen_at >= now - timedelta(seconds=WORKER_ALIVE_S))
    )  # fmt: skip
    return max(1, seen or 0)


def place_of_run(session: Session, *, run_id: int, now: datetime) -> QueuePlace | None:
    """`queue_place` of the run with id `run_id` (None when there is none, or it no longer waits)."""
    run = session.get(Run, run_id)
    return queue_place(session, run=run, now=now) if run is not None else None
