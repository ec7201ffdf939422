"""Problems as teams read them (docs/user-guide.md, "The problem"): statement, header, public cases, rules.

Public reads: the problem is no secret in a contest. A team's token narrows the
list to its own competition; `?competition=` names one.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from api.store.competitions import get_competition
from api.web.deps import OptionalPrincipal, SessionDep, SettingsDep
from api.web.problem_catalog import list_shown, shown_problem
from api.web.schemas.problems import ProblemListed, ProblemPublic, ScoringPublic

router = APIRouter(prefix="/api/v1/problems", tags=["problems"])
RULES_PAGE = "/rules"

CompetitionQuery = Annotated[str | None, Query(max_length=64, description="a competition's slug; default: "
                                                                          "your team's, else every competition")]


@router.get("", response_model=list[ProblemListed])
def problems(session: SessionDep, viewer: OptionalPrincipal, competition: CompetitionQuery = None
             ) -> list[ProblemListed]:  # fmt: skip
    """The problems of a competition (or of every competition), with their backends."""
    return [
        ProblemListed(slug=p.slug, title=p.title, version=p.version, backends=list(p.backends),
                      competitions=list(p.competitions), url=f"/api/v1/problems/{p.slug}", page=f"/p/{p.slug}")
        for p in list_shown(session, competition, viewer)
    ]  # fmt: skip


@router.get("/{slug}", response_model=ProblemPublic)
def problem(slug: str, session: SessionDep, settings: SettingsDep, viewer: OptionalPrincipal,
            competition: CompetitionQuery = None) -> ProblemPublic:  # fmt: skip
    """The statement per backend (Markdown and HTML), the header, the public cases, the pass rule's
    tolerances, the timing rules, the scoring of each competition and, where allowed, the baseline."""
    info, holding = shown_problem(session, settings, slug, competition, viewer)
    scoring = []
    for comp_slug in holding:
        comp = get_competition(session, slug=comp_slug)
        scoring.append(ScoringPublic(competition=comp.slug, relative_to=comp.relative_to.value,
                                     ranked_by=comp.ranked_by.value, score_cap=comp.score_cap,
                                     online_weight=comp.online_weight, reviewer_weight=comp.reviewer_weight))
    return ProblemPublic.model_validate({
        **{k: getattr(info, k) for k in ("slug", "title", "version", "header_name", "header", "tolerance")},
        "header_url": f"/api/v1/problems/{slug}/header",
        "backends": list(info.backends.values()),
        "scoring": scoring,
        "rules": RULES_PAGE,
    })  # fmt: skip


@router.get("/{slug}/header", response_class=Response,
            responses={200: {"content": {"text/x-c": {}}, "description": "the C header to include"}})
def header(slug: str, session: SessionDep, settings: SettingsDep, viewer: OptionalPrincipal,
           competition: CompetitionQuery = None) -> Response:  # fmt: skip
    """The problem's C header, as a download."""
    info, _ = shown_problem(session, settings, slug, competition, viewer)
    return Response(info.header, media_type="text/x-c; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{info.header_name}"'})
