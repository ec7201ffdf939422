"""The contest rules the service enforces on uploads (judging.md "Competition rules")."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from api.store.enums import IN_FLIGHT, RunKind
from api.store.errors import ContestClosedError, QuotaExceededError
from api.store.models import Competition, Run, Submission
from api.store.views import QuotaStatus

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


def check_quotas(session: Session, comp: Competition, team_id: int, now: datetime) -> None:
    """429 territory: the daily quota, the minimum interval, the runs in flight (IE runs are not charged)."""
    used, oldest, last = _charged(session, team_id, now)
    if used >= comp.quota_per_day:
        free_at = (oldest + DAY) if oldest else now + DAY
        raise QuotaExceededError(
            f"daily quota spent: {used} submissions in the last 24 hours (limit {comp.quota_per_day}); "
            f"the next is allowed at {_utc(free_at)}",
            retry_after_s=_seconds(free_at - now),
        )
    if last is not None and comp.min_interval_s and last + timedelta(seconds=comp.min_interval_s) > now:
        wait = _seconds(last + timedelta(seconds=comp.min_interval_s) - now)
        raise QuotaExceededError(
            f"too soon: wait {wait} s more (at least {comp.min_interval_s} s between two submissions)",
            retry_after_s=wait,
        )
    flying = _in_flight(session, team_id)
    if flying >= comp.max_in_flight:
        raise QuotaExceededError(
            f"{flying} runs still in flight (limit {comp.max_in_flight}); submit again when one has finished",
            retry_after_s=IN_FLIGHT_RETRY_S,
        )


def quota_status(session: Session, comp: Competition, team_id: int, now: datetime) -> QuotaStatus:
    """What a team has left, and when its next submission is allowed as far as quotas go."""
    used, oldest, last = _charged(session, team_id, now)
    flying = _in_flight(session, team_id)
    waits = [now]
    if used >= comp.quota_per_day:
        waits.append((oldest + DAY) if oldest else now + DAY)
    if last is not None:
        waits.append(last + timedelta(seconds=comp.min_interval_s))
    next_at = max(waits)
    return QuotaStatus(
        used_24h=used,
        limit_24h=comp.quota_per_day,
        left_24h=max(0, comp.quota_per_day - used),
        in_flight=flying,
        max_in_flight=comp.max_in_flight,
        next_allowed_at=None if next_at <= now and flying < comp.max_in_flight else next_at,
    )


def _charged(session: Session, team_id: int, now: datetime) -> tuple[int, datetime | None, datetime | None]:
    """(charged submissions in the last 24 h, the oldest and the newest of them), in one query.

    The newest is all the minimum interval needs: intervals are capped at a day.
    """
    used, oldest, last = session.execute(
        select(func.count(), func.min(Submission.created_at), func.max(Submission.created_at)).where(
            Submission.team_id == team_id, Submission.charged, Submission.created_at > now - DAY
        )
    ).one()
    return used, oldest, last


def _in_flight(session: Session, team_id: int) -> int:
    # Only the team's own uploads count; organisers' rejudges must not block a team.
    return (
        session.scalar(
            select(func.count())
            .select_from(Run)
            .join(Submission, Submission.id == Run.submission_id)
            .where(Submission.team_id == team_id, Run.kind == RunKind.JUDGE, Run.status.in_(IN_FLIGHT))
        )
        or 0
    )


def _seconds(delta: timedelta) -> int:
    return max(1, math.ceil(delta.total_seconds()))


def _utc(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")
