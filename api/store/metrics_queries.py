"""What /metrics reads from the store (api/web/metrics.py): finished runs by kind, mode and verdict,
and how long each judging stage took. Read at scrape time, so every process's runs count."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, literal, select
from sqlalchemy.orm import Session

from api.store.enums import RunStatus
from api.store.models import Run, Submission

DEFAULT_MODE = "ranked"  # the mode of every run before run modes existed (docs/rules.md, "Run modes")


@dataclass(frozen=True)
class FinishedRuns:
    kind: str
    mode: str
    backend: str
    verdict: str
    count: int


def _mode_column() -> Any:
    """The run's mode where the schema has one (on the run or its submission), else "ranked"."""
    for model in (Run, Submission):
        column = getattr(model, "mode", None)
        if column is not None:
            return func.coalesce(column, DEFAULT_MODE)
    return literal(DEFAULT_MODE)


def finished_runs(session: Session) -> list[FinishedRuns]:
    """Runs that ended (done or failed), counted by kind, mode, backend and verdict."""
    mode = _mode_column().label("mode")
    rows = session.execute(
        select(Run.kind, mode, Submission.backend, Run.verdict, func.count())
        .join(Submission, Submission.id == Run.submission_id)
        .where(Run.status.in_((RunStatus.DONE, RunStatus.FAILED)))
        .group_by(Run.kind, mode, Submission.backend, Run.verdict)
    )
    return [FinishedRuns(str(kind), str(mode_value), str(backend), str(verdict) if verdict else "none", count)
            for kind, mode_value, backend, verdict, count in rows]  # fmt: skip


def stage_durations(session: Session) -> list[dict[str, float]]:
    """Per finished run, seconds spent in each stage (a stage lasts until the next one starts)."""
    rows = session.execute(
        select(Run.stage_times, Run.finished_at).where(Run.status.in_((RunStatus.DONE, RunStatus.FAILED)))
    )
    return [durations(times or {}, finished) for times, finished in rows]


def durations(stage_times: dict[str, str], finished_at: datetime | None) -> dict[str, float]:
    """Stage -> seconds, from the stage -> ISO start times a run records (the last one ends at finish)."""
    starts = sorted(((datetime.fromisoformat(t), stage) for stage, t in stage_times.items() if t),
                    key=lambda pair: pair[0])  # fmt: skip
    ends = [t for t, _ in starts[1:]] + [finished_at]
    return {stage: max(0.0, (end - start).total_seconds())
            for (start, stage), end in zip(starts, ends, strict=True)
            if end is not None and stage != "done"}  # fmt: skip
