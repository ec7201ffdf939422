"""The seam between the API and the broker: the API never imports Celery.

`RunDispatcher` puts a run on a queue; the workers package provides the Celery
one. `DispatchUnavailable` means the broker is down: the run stays pending and
`dispatch_pending` hands it out later (api.store.runs.runs_to_dispatch).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from api.settings import Settings
from api.store.db import Session
from api.store.runs import mark_queued, runs_to_dispatch
from api.store.views import RunDispatch
from judge.backends import Backend
from judge.errors import JudgeError
from judge.tracks import get_track

log = logging.getLogger(__name__)


class DispatchUnavailable(JudgeError):
    """The broker cannot take the run now (e.g. Redis is down); try again later."""


class RunDispatcher(Protocol):
    def enqueue(self, run_id: int, queue: str, priority: int = 6) -> None:
        """Put the run on `queue` at `priority` (lower is taken first: api.store.modes.QueuePriority);
        raise DispatchUnavailable when the broker cannot take it."""
        ...


def queue_for(backend: Backend, settings: Settings) -> str:
    """The queue a backend's runs go to: one per device kind, so a worker takes only runs its device can judge
    (docs/operations.md, "The parts"). The track says its form and which setting names the kind."""
    track = get_track(backend)
    setting = track.queue_device_setting
    return track.queue_name(str(getattr(settings, setting, "default")) if setting else None)


@dataclass
class DispatchReport:
    queued: list[int] = field(default_factory=list)
    pending: list[int] = field(default_factory=list)  # the broker was down: dispatched later
    reason: str = ""


def dispatch_runs(
    session: Session, dispatcher: RunDispatcher, runs: list[RunDispatch], *, now: datetime | None = None
) -> DispatchReport:
    """Enqueue stored runs, marking each queued; stops at the first DispatchUnavailable."""
    report = DispatchReport()
    for index, run in enumerate(runs):
        try:
            dispatcher.enqueue(run.run_id, run.queue, priority=run.priority)
        except DispatchUnavailable as error:
            report.pending = [r.run_id for r in runs[index:]]
            report.reason = str(error) or "the broker is unavailable"
            log.warning("broker unavailable, %d run(s) stay pending: %s", len(report.pending), report.reason)
            break
        mark_queued(session, run_id=run.run_id, now=now)
        report.queued.append(run.run_id)
    return report


def dispatch_pending(
    session: Session,
    dispatcher: RunDispatcher,
    *,
    limit: int = 100,
    min_age_s: float = 5.0,
    now: datetime | None = None,
) -> DispatchReport:
    """Hand the broker the pending runs it never took (call periodically, e.g. from the reaper)."""
    pending = runs_to_dispatch(session, limit=limit, min_age_s=min_age_s, now=now)
    return dispatch_runs(session, dispatcher, pending, now=now)
