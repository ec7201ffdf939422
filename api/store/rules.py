"""The contest rules the service enforces on uploads (docs/rules.md, "Contest rules the service enforces")."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from api.store.enums import IN_FLIGHT, RunKind
from api.store.errors import ContestClosedError, QuotaExceededError
from api.store.models import Competition, Run, Submission
from api.store.modes import mode_quota
from api.store.views import QuotaStatus
from judge.modes import RunMode

DAY = timedelta(hours=24)  # the daily quota is a rolling 24 hours: no time zone to argue about
IN_FLIGHT_RETRY_S = 30  # a guess at when a run will have finished, for Retry-After


def check_window(comp: Competition, now: datetime) -> None:
    """403 territory: before the start or after the end."""
    if now < comp.starts_at:
        raise ContestClosedError(
            f"competition {comp.slug!r} opens at {_utc(comp.starts_at)}; submissions are not accepted before"
        )
    if now >= comp.ends_at:
        raise ContestClosedError(
            f"competition {comp.slug!r} closed at {_utc(comp.ends_at)}; submissions are no longer accepted"
        )


def check_quotas(session: Session, comp: Competition, team_id: int, now: datetime,
                 mode: RunMode = RunMode.RANKED) -> None:
    """429 territory: the mode's daily quota, minimum interval and runs in flight (IE runs are not charged).

    Each run mode has its own quota (docs/rules.md "Run modes"): a test run never uses up a ranked one.
    """
    quota = mode_quota(comp, mode)
    used, oldest, last = _charged(session, team_id, now, mode)
    if used >= quota.per_day:
        free_at = (oldest + DAY) if oldest else now + DAY
        raise QuotaExceededError(
            f"daily quota spent: {used} submissions in the last 24 hours (limit {quota.per_day} for "
            f"{mode.value} runs); the next is allowed at {_utc(free_at)}",
            retry_after_s=_seconds(free_at - now),
        )
    if last is not None and quota.min_interval_s and last + timedelta(seconds=quota.min_interval_s) > now:
        wait = _seconds(last + timedelta(seconds=quota.min_interval_s) - now)
        raise QuotaExceededError(
            f"too soon: wait {wait} s more (at least {quota.min_interval_s} s between two {mode.value} runs)",
            retry_after_s=wait,
        )
    flying = _in_flight(session, team_id, mode)
    if flying >= quota.max_in_flight:
        raise QuotaExceededError(
            f"{flying} runs still in flight (limit {quota.max_in_flight}) among your {mode.value} runs; "
            "submit again when one has finished",
            retry_after_s=IN_FLIGHT_RETRY_S,
        )


def quota_status(session: Session, comp: Competition, team_id: int, now: datetime,
                 mode: RunMode = RunMode.RANKED) -> QuotaStatus:
    """What a team has left of `mode`'s quota, and when its next run of that mode is allowed."""
    quota = mode_quota(comp, mode)
    used, oldest, last = _charged(session, team_id, now, mode)
    flying = _in_flight(session, team_id, mode)
    waits = [now]
    if used >= quota.per_day:
        waits.append((oldest + DAY) if oldest else now + DAY)
    if last is not None:
        waits.append(last + timedelta(seconds=quota.min_interval_s))
    next_at = max(waits)
    return QuotaStatus(
        used_24h=used,
        limit_24h=quota.per_day,
        left_24h=max(0, quota.per_day - used),
        in_flight=flying,
        max_in_flight=quota.max_in_flight,
        next_allowed_at=None if next_at <= now and flying < quota.max_in_flight else next_at,
        mode=mode,
        min_interval_s=quota.min_interval_s,
    )


def _charged(session: Session, team_id: int, now: datetime,
             mode: RunMode) -> tuple[int, datetime | None, datetime | None]:
    """(charged submissions of `mode` in the last 24 h, the oldest and the newest of them), in one query.

    The newest is all the minimum interval needs: intervals are capped at a day.
    """
    used, oldest, last = session.execute(
        select(func.count(), func.min(Submission.created_at), func.max(Submission.created_at)).where(
            Submission.team_id == team_id, Submission.mode == mode, Submission.charged,
            Submission.created_at > now - DAY
        )
    ).one()
    return used, oldest, last


def _in_flight(session: Session, team_id: int, mode: RunMode) -> int:
    # Only the team's own uploads count; organisers' rejudges must not block a team.
    return (
        session.scalar(
            select(func.count())
            .select_from(Run)
            .join(Submission, Submission.id == Run.submission_id)
            .where(Submission.team_id == team_id, Submission.mode == mode, Run.kind == RunKind.JUDGE,
                   Run.status.in_(IN_FLIGHT))
        )
        or 0
    )


def _seconds(delta: timedelta) -> int:
    return max(1, math.ceil(delta.total_seconds()))


def _utc(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")
