"""Competitions: window, freeze, quotas, scoring settings, and the problems they use."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from api.store.audit import record_audit
from api.store.enums import RankedBy, RelativeTo
from api.store.errors import ConflictError, InvalidInputError, NotFoundError
from api.store.judge_settings import FIELDS as JUDGE_SETTINGS
from api.store.judge_settings import apply_judge_settings
from api.store.models import DEFAULT_RUBRIC, Competition, CompetitionProblem, Problem
from api.store.modes import all_mode_quotas, apply_mode_quotas
from api.store.standings_cache import recompute_standings
from api.store.types import INT_MAX, as_utc
from api.store.views import CompetitionView, Principal, ProblemLink
from judge.backends import Backend
from judge.problem import Problem as ProblemDefinition

# Fields an organiser may set; those that change scores make the standings be recomputed.
EDITABLE = {
    "title", "starts_at", "ends_at", "freeze_at", "quota_per_day", "min_interval_s", "max_in_flight",
    "online_weight", "reviewer_weight", "relative_to", "ranked_by", "score_cap", "rubric",
    "reproduction_tolerance", "mode_quotas", "baseline_public", "finals_limit", *JUDGE_SETTINGS,
}  # fmt: skip
SCORING = {"relative_to", "ranked_by", "score_cap", "online_weight", "reviewer_weight", "finals_limit"}
MAX_FINALS = 50  # finals_limit: at most this many chosen finals per team and problem

DEFAULT_FREEZE_BEFORE_END_S = 30 * 60  # docs/rules.md: the board freezes this long before the end


def competition_row(session: Session, slug: str, *, for_update: bool = False) -> Competition:
    """The competition named `slug`, or NotFoundError."""
    query = select(Competition).where(Competition.slug == slug)
    if for_update and session.get_bind().dialect.name != "sqlite":
        query = query.with_for_update()
    row = session.scalars(query).first()
    if row is None:
        raise NotFoundError(f"no competition {slug!r}")
    return row


def get_competition(session: Session, *, slug: str) -> CompetitionView:
    """A competition with its problems."""
    return competition_view(session, competition_row(session, slug))


def list_competitions(session: Session) -> list[CompetitionView]:
    """Every competition, newest window first."""
    rows = session.scalars(select(Competition).order_by(Competition.starts_at.desc()))
    return [competition_view(session, row) for row in rows]


def create_competition(
    session: Session,
    *,
    slug: str,
    title: str,
    starts_at: datetime,
    ends_at: datetime,
    actor: Principal | None,
    now: datetime,
    quota_per_day: int = 50,
    min_interval_s: int = 90,
    max_in_flight: int = 2,
    freeze_before_end_s: int = DEFAULT_FREEZE_BEFORE_END_S,
    options: dict[str, Any] | None = None,
) -> CompetitionView:
    """A new competition; the freeze defaults to `freeze_before_end_s` before the end (commits)."""
    if session.scalar(select(func.count()).where(Competition.slug == slug)):
        raise ConflictError(f"a competition {slug!r} exists already")
    _check_times(starts_at=starts_at, ends_at=ends_at)  # before the default freeze is computed from them
    row = Competition(
        slug=slug,
        title=title,
        starts_at=starts_at,
        ends_at=ends_at,
        freeze_at=_default_freeze(starts_at, ends_at, freeze_before_end_s),
        quota_per_day=quota_per_day,
        min_interval_s=min_interval_s,
        max_in_flight=max_in_flight,
        online_weight=0.7,
        reviewer_weight=0.3,
        relative_to=RelativeTo.BEST,
        ranked_by=RankedBy.LATEST,
        score_cap=200.0,
        rubric=dict(DEFAULT_RUBRIC),
        reproduction_tolerance=0.10,
        finals_limit=2,
        final_published=False,
        baseline_public=True,
        board_version=0,
        created_at=now,
    )
    _apply(row, options or {})
    session.add(row)
    session.flush()
    record_audit(
        session,
        actor=actor,
        action="competition.create",
        now=now,
        competition_id=row.id,
        target=slug,
        details=_jsonable({"title": title, **(options or {})}),
    )
    session.flush()
    view = competition_view(session, row)
    session.commit()  # after the last read: no transaction is left open
    return view


def update_competition(
    session: Session,
    *,
    slug: str,
    changes: dict[str, Any],
    actor: Principal | None,
    now: datetime,
    action: str = "competition.update",
) -> CompetitionView:
    """Change settings (audited; commits); scoring changes recompute the standings."""
    row = competition_row(session, slug, for_update=True)
    changes = _freeze_follows_the_end(row, changes)
    _apply(row, changes)
    record_audit(
        session, actor=actor, action=action, now=now, competition_id=row.id, target=slug, details=_jsonable(changes)
    )
    if SCORING & changes.keys() or "freeze_at" in changes:
        recompute_standings(session, competition_id=row.id)
    session.flush()
    view = competition_view(session, row)
    session.commit()  # after the last read: no transaction is left open
    return view


def attach_problem(
    session: Session,
    *,
    competition: str,
    problem: ProblemDefinition,
    backends: list[Backend] | None,
    actor: Principal | None,
    now: datetime,
) -> CompetitionView:
    """Use a loaded problem definition in a competition, on some or all of its backends (commits).

    The problem row is keyed by (slug, version); attaching a newer version replaces
    the older one in the competition, while old submissions keep theirs.
    """
    comp = competition_row(session, competition, for_update=True)
    chosen = list(backends) if backends else list(problem.backends)
    twice = sorted({b.value for b in chosen if chosen.count(b) > 1})
    if twice:
        raise InvalidInputError(f"backend {', '.join(twice)} is listed more than once; list each backend once")
    unknown = [b.value for b in chosen if b not in problem.backends]
    if unknown:
        raise InvalidInputError(
            f"problem {problem.slug!r} has no backend {', '.join(unknown)}; it has: "
            f"{', '.join(b.value for b in problem.backends)}"
        )
    row = session.scalars(
        select(Problem).where(Problem.slug == problem.slug, Problem.version == problem.version)
    ).first()
    if row is None:
        row = Problem(
            slug=problem.slug,
            version=problem.version,
            title=problem.title,
            backends=[b.value for b in problem.backends],
            definition_hash=problem.definition_hash,
            created_at=now,
        )
        session.add(row)
        session.flush()
    elif row.definition_hash != problem.definition_hash:
        raise ConflictError(
            f"problem {problem.slug!r} version {problem.version} changed on disk without a new version "
            "number; bump `version` in its problem.toml"
        )
    links = session.scalars(select(CompetitionProblem).where(CompetitionProblem.competition_id == comp.id)).all()
    position = len(links)
    for link in links:
        if link.problem.slug == problem.slug:
            position = link.position
            session.delete(link)
    session.flush()
    session.add(
        CompetitionProblem(
            competition_id=comp.id, problem_id=row.id, position=position, backends=[b.value for b in chosen]
        )
    )
    record_audit(
        session,
        actor=actor,
        action="competition.attach_problem",
        now=now,
        competition_id=comp.id,
        target=problem.slug,
        details={"version": problem.version, "backends": [b.value for b in chosen]},
    )
    session.flush()
    view = competition_view(session, comp)
    session.commit()  # after the last read: no transaction is left open
    return view


def competition_view(session: Session, row: Competition) -> CompetitionView:
    links = session.scalars(
        select(CompetitionProblem)
        .where(CompetitionProblem.competition_id == row.id)
        .order_by(CompetitionProblem.position)
    ).all()
    problems = tuple(
        ProblemLink(
            link.problem.slug,
            link.problem.version,
            link.problem.title,
            tuple(Backend(b) for b in link.backends),
            link.problem.definition_hash,
        )
        for link in links
    )
    return CompetitionView(
        id=row.id, slug=row.slug, title=row.title, starts_at=row.starts_at, ends_at=row.ends_at,
        freeze_at=row.freeze_at, quota_per_day=row.quota_per_day, min_interval_s=row.min_interval_s,
        max_in_flight=row.max_in_flight, online_weight=row.online_weight, reviewer_weight=row.reviewer_weight,
        relative_to=row.relative_to, ranked_by=row.ranked_by, score_cap=row.score_cap, rubric=dict(row.rubric),
        reproduction_tolerance=row.reproduction_tolerance, final_published=row.final_published,
        finals_limit=row.finals_limit,
        board_version=row.board_version, problems=problems,
        mode_quotas={mode.value: quota.to_dict() for mode, quota in all_mode_quotas(row).items()},
        baseline_public=row.baseline_public,
        **{key: (row.judge_settings or {}).get(key) for key in JUDGE_SETTINGS},
    )  # fmt: skip


def _freeze_follows_the_end(row: Competition, changes: dict[str, Any]) -> dict[str, Any]:
    """A new end moves the default freeze with it, the same time before the end (docs/rules.md: 30
    minutes), unless the same change sets the freeze itself. A freeze an organiser set (anything but
    the default) stays where it was set: moved with the end, a manual freeze "now" had jumped to the
    start of the window. If it then lies outside the window, `_apply` says so."""
    if "ends_at" not in changes or "freeze_at" in changes or row.freeze_at is None:
        return changes
    ends_at = changes["ends_at"]
    if not isinstance(ends_at, datetime):
        return changes  # _apply refuses it with its own message
    if row.freeze_at != _default_freeze(row.starts_at, row.ends_at, DEFAULT_FREEZE_BEFORE_END_S):
        return changes
    lead_s = DEFAULT_FREEZE_BEFORE_END_S
    starts_at = changes.get("starts_at", row.starts_at)
    if not isinstance(starts_at, datetime):
        return changes
    return {**changes, "freeze_at": _default_freeze(starts_at, ends_at, lead_s)}


def _apply(row: Competition, changes: dict[str, Any]) -> None:
    unknown = sorted(set(changes) - EDITABLE)
    if unknown:
        raise InvalidInputError(f"cannot set {', '.join(unknown)}; settable: {', '.join(sorted(EDITABLE))}")
    for key, value in changes.items():
        if key == "relative_to":
            value = RelativeTo(value)
        elif key == "ranked_by":
            value = RankedBy(value)
        elif key == "mode_quotas":
            apply_mode_quotas(row, value)
            continue
        elif key in JUDGE_SETTINGS:
            row.judge_settings = apply_judge_settings(row.judge_settings, {key: value})
            continue
        setattr(row, key, value)
    _validate(row)


def _validate(row: Competition) -> None:
    _check_times(starts_at=row.starts_at, ends_at=row.ends_at, freeze_at=row.freeze_at)
    if row.ends_at <= row.starts_at:
        raise InvalidInputError("the competition must end after it starts")
    if row.freeze_at is not None and not row.starts_at <= row.freeze_at <= row.ends_at:
        raise InvalidInputError("the freeze time must lie within the competition's window")
    _check_quotas(row)
    if not 1 <= row.finals_limit <= MAX_FINALS:
        raise InvalidInputError(f"finals_limit must be a whole number from 1 to {MAX_FINALS}")
    for name in ("online_weight", "reviewer_weight"):
        if not math.isfinite(getattr(row, name)) or getattr(row, name) < 0:
            raise InvalidInputError(f"{name} must be a finite number, 0 or more")
    if row.online_weight + row.reviewer_weight <= 0:
        raise InvalidInputError("online_weight and reviewer_weight cannot both be zero")
    if not 0 < row.reproduction_tolerance < 10 or not math.isfinite(row.score_cap) or row.score_cap < 100:
        raise InvalidInputError("reproduction_tolerance must be in (0, 10) and score_cap at least 100")
    _check_rubric(row.rubric)


def _default_freeze(starts_at: datetime, ends_at: datetime, before_end_s: int) -> datetime:
    try:
        return max(starts_at, ends_at - timedelta(seconds=before_end_s))
    except OverflowError:  # an end within `before_end_s` of 0001-01-01: freeze from the start
        return starts_at


def _check_times(**moments: datetime | None) -> None:
    """Each time must have a UTC form: the database stores UTC (0001-01-01T00:00+05:00 has none)."""
    for name, moment in moments.items():
        if moment is None:
            continue
        try:
            as_utc(moment)
        except OverflowError as error:
            raise InvalidInputError(f"{name}: {error}") from None


def _check_quotas(row: Competition) -> None:
    # At least 1: with 0 submissions a day or 0 runs in flight every team would wait forever. docs/rules.md
    # gives quotas as limits on how often a team submits (defaults 50, 90 s, 2); the window closes a contest.
    for name in ("quota_per_day", "max_in_flight"):
        if not 1 <= getattr(row, name) <= INT_MAX:
            raise InvalidInputError(f"{name} must be a whole number from 1 to {INT_MAX}")
    if not 0 <= row.min_interval_s <= 24 * 3600:
        raise InvalidInputError("min_interval_s must be from 0 to a day (86400 s)")


def _check_rubric(rubric: dict[str, Any]) -> None:
    # Finite maxima: an infinite one would let a reviewer give 1e308 and turn final scores into nan.
    if not rubric or not all(
        isinstance(k, str) and k and isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
        and v > 0 for k, v in rubric.items()
    ):  # fmt: skip
        raise InvalidInputError("the rubric maps each criterion to its maximum mark, a finite number above 0")


def _jsonable(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in values.items()}
