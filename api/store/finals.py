"""Chosen finals (docs/organisers.md): under `ranked_by: chosen` each team marks up to the
competition's `finals_limit` of its ranked submissions per problem; the final ranking takes the
best of those on the private set (standings.py, finals_pool.py), its latest until it marks any.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from api.store.enums import RankedBy
from api.store.errors import ContestClosedError, InvalidInputError, NotFoundError
from api.store.models import Competition, Problem, Submission, Team
from api.store.models_organisers import FinalChoice
from api.store.standings_cache import read_standings, recompute_standings
from api.store.submissions import list_submissions
from api.store.views import SubmissionSummary
from judge.backends import CaseSet
from judge.modes import RunMode

_MAX_LISTED = 10_000


@dataclass(frozen=True)
class TeamFinals:
    """A team's finals: what it marked, what the final ranking takes now, and what it may mark."""

    ranked_by: RankedBy
    limit: int  # finals per problem
    chosen: tuple[int, ...]  # submission ids, oldest first
    counting: dict[str, int]  # problem -> the submission the final ranking scores now
    choosable: tuple[SubmissionSummary, ...]  # judged, not disqualified, newest first
    open_until: datetime


def team_finals(session: Session, *, team_id: int) -> TeamFinals:
    team = _team(session, team_id)
    comp = session.get_one(Competition, team.competition_id)
    chosen = tuple(session.scalars(
        select(FinalChoice.submission_id).where(FinalChoice.team_id == team_id)
        .order_by(FinalChoice.chosen_at, FinalChoice.submission_id)
    ))  # fmt: skip
    choosable = tuple(s for s in list_submissions(session, team_id=team_id, limit=_MAX_LISTED)
                      if s.verdict is not None and s.disqualified_at is None
                      and s.mode == RunMode.RANKED)  # fmt: skip
    return TeamFinals(comp.ranked_by, comp.finals_limit, chosen, _counting(session, comp, team_id, chosen, choosable),
                      choosable, comp.ends_at)


def _counting(session: Session, comp: Competition, team_id: int, chosen: tuple[int, ...],
              choosable: tuple[SubmissionSummary, ...]) -> dict[str, int]:
    """problem -> the submission the final ranking scores now, as far as a team may know it.

    Private cases stay private until the final ranking is published (docs/rules.md): before that,
    nothing here is derived from private results. Which of several marked finals wins, or which
    submission is a team's best, is a private result, so those problems are left out (the marked
    set is `chosen`); a problem with nothing marked, or under `latest`, names the latest ranked
    submission, which public facts decide. After publication, the private standings say."""
    if comp.final_published:
        standing = read_standings(session, competition_id=comp.id, case_set=CaseSet.PRIVATE, team_id=team_id)
        return {slug: e.submission_id for s in standing for slug, e in s.entries.items()}
    if comp.ranked_by is RankedBy.BEST:
        return {}
    marked = {s.problem for s in choosable if s.id in chosen}
    latest: dict[str, int] = {}
    for summary in choosable:  # newest first
        if summary.problem not in marked:
            latest.setdefault(summary.problem, summary.id)
    return latest


def choose_finals(session: Session, *, team_id: int, submission_ids: list[int], now: datetime) -> TeamFinals:
    """Replace the team's finals by `submission_ids` (an empty list: its latest counts again; commits).

    Only while the submission window is open, only under `ranked_by: chosen`, at most
    `finals_limit` per problem, each one of the team's own judged, not disqualified submissions.
    """
    team = _team(session, team_id)
    comp = session.get_one(Competition, team.competition_id)
    if comp.ranked_by is not RankedBy.CHOSEN:
        raise InvalidInputError(f"this competition ranks each team's {comp.ranked_by.value} submission; "
                                "there are no finals to choose")  # fmt: skip
    if now >= comp.ends_at:
        raise ContestClosedError(f"finals could be chosen until the window ended at {comp.ends_at.isoformat()}")
    wanted = list(dict.fromkeys(submission_ids))
    rows = session.execute(
        select(Submission.id, Submission.team_id, Submission.problem_id, Submission.verdict,
               Submission.disqualified_at, Submission.mode, Problem.slug)
        .join(Problem, Problem.id == Submission.problem_id).where(Submission.id.in_(wanted))
    ).all()  # fmt: skip
    found = {r.id: r for r in rows if r.team_id == team_id}
    missing = [str(i) for i in wanted if i not in found]
    if missing:
        raise NotFoundError(f"no submission {', '.join(missing)} among your team's submissions")
    _check_choosable(found.values(), comp.finals_limit)
    session.execute(delete(FinalChoice).where(FinalChoice.team_id == team_id))
    session.add_all(FinalChoice(team_id=team_id, submission_id=i, problem_id=found[i].problem_id, chosen_at=now)
                    for i in wanted)  # fmt: skip
    session.flush()
    recompute_standings(session, competition_id=comp.id)
    session.commit()
    return team_finals(session, team_id=team_id)


def _check_choosable(rows: object, limit: int) -> None:
    per_problem: dict[str, int] = {}
    for row in rows:  # type: ignore[attr-defined]  # result rows of choose_finals' query
        if row.verdict is None:
            raise InvalidInputError(f"submission {row.id} is not judged yet; choose it once it has a result")
        if row.disqualified_at is not None:
            raise InvalidInputError(f"submission {row.id} is disqualified and cannot be a final")
        if row.mode != RunMode.RANKED:
            raise InvalidInputError(f"submission {row.id} is a {RunMode(row.mode).value} run; "
                                    "only ranked runs can be finals")
        per_problem[row.slug] = per_problem.get(row.slug, 0) + 1
    over = sorted(slug for slug, count in per_problem.items() if count > limit)
    if over:
        raise InvalidInputError(f"at most {limit} finals per problem; too many for {', '.join(over)}")


def _team(session: Session, team_id: int) -> Team:
    team = session.get(Team, team_id)
    if team is None:
        raise NotFoundError(f"no team {team_id}")
    return team
