"""Which problems the service shows, and for which competition (the API's and the pages' one rule).

A problem is shown when a competition has it attached. With a competition named
(`?competition=`, or the team's own), only that competition's problems, on its
backends, with its baseline rule; with none, every competition's problems, the
baseline's source only where every competition holding the problem allows it.
"""

from __future__ import annotations

from dataclasses import dataclass

from api.settings import Settings
from api.store.competitions import get_competition, list_competitions
from api.store.db import Session
from api.store.errors import NotFoundError
from api.store.views import CompetitionView, Principal
from api.web.problem_info import ProblemInfo, problem_info
from judge.backends import Backend
from judge.errors import UnknownProblemError
from judge.problem import load_problem


@dataclass(frozen=True)
class ListedProblem:
    slug: str
    title: str
    version: int
    backends: tuple[Backend, ...]
    competitions: tuple[str, ...]


def competitions_in_view(session: Session, competition: str | None, viewer: Principal | None) -> list[CompetitionView]:
    """The named competition, else the viewer's own, else every competition."""
    slug = competition or (viewer.competition_slug if viewer is not None else None)
    if slug:
        return [get_competition(session, slug=slug)]
    return list_competitions(session)


def list_shown(session: Session, competition: str | None, viewer: Principal | None) -> list[ListedProblem]:
    found: dict[str, ListedProblem] = {}
    for comp in competitions_in_view(session, competition, viewer):
        for link in comp.problems:
            seen = found.get(link.slug)
            backends = tuple(dict.fromkeys((*(seen.backends if seen else ()), *link.backends)))
            comps = (*(seen.competitions if seen else ()), comp.slug)
            found[link.slug] = ListedProblem(link.slug, link.title, link.version, backends, comps)
    return sorted(found.values(), key=lambda p: p.slug)


def shown_problem(session: Session, settings: Settings, slug: str, competition: str | None,
                  viewer: Principal | None) -> tuple[ProblemInfo, list[str]]:  # fmt: skip
    """The problem `slug` as teams may read it, and the competitions it is part of; NotFoundError if none."""
    holding = [c for c in competitions_in_view(session, competition, viewer) if any(p.slug == slug for p in c.problems)]
    if not holding:
        where = f"competition {competition!r}" if competition else "any competition you can see"
        raise NotFoundError(f"no problem {slug!r} in {where}")
    backends = tuple(dict.fromkeys(b for c in holding for p in c.problems if p.slug == slug for b in p.backends))
    try:
        problem = load_problem(slug, settings.problems_dir, settings.reference_dir)
    except UnknownProblemError:
        raise NotFoundError(f"problem {slug!r} is attached but its package is missing on this server") from None
    info = problem_info(problem, backends, baseline_public=_baseline_shown(session, holding, viewer))
    return info, [c.slug for c in holding]


def _baseline_shown(session: Session, holding: list[CompetitionView], viewer: Principal | None) -> bool:
    """Whether the baseline's source is shown. A team's or reviewer's own competition decides for them,
    whichever competition they name: a team of a contest that hides its baseline read it through another
    contest that shows it. Others (no token, organisers) see it where every competition named shows it.
    Left open: a problem whose baseline one competition shows is public there to anyone without a token;
    docs/operations.md says not to attach it so beside a contest that hides it."""
    if viewer is not None and viewer.competition_slug:
        own = get_competition(session, slug=viewer.competition_slug)
        return own.baseline_public
    return all(c.baseline_public for c in holding)
