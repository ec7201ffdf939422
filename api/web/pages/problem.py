"""The problem page `/p/<slug>` and the rules page `/rules` (docs/rules.md).

The problem page shows what `/api/v1/problems/<slug>` returns: the statement for
the chosen backend, the header to download, the public cases, the pass rule's
tolerances, the timing and scoring rules, and the baseline where allowed.
`/rules` renders docs/rules.md, the judging rules written for teams and organisers.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response

from api.store.competitions import get_competition
from api.store.errors import NotFoundError
from api.web.deps import SessionDep, SettingsDep
from api.web.pages.auth import PageViewer
from api.web.pages.routing import PageRoute
from api.web.pages.web import render
from api.web.problem_catalog import list_shown, shown_problem
from api.web.problem_info import render_markdown
from judge.backends import Backend

router = APIRouter(include_in_schema=False, route_class=PageRoute)

RULES_FILE = Path(__file__).resolve().parents[3] / "docs" / "rules.md"

BackendParam = Annotated[Backend | None, Query()]
CompetitionParam = Annotated[str | None, Query(max_length=64)]


@router.get("/p")
def problems_page(request: Request, session: SessionDep, viewer: PageViewer,
                  competition: CompetitionParam = None) -> Response:  # fmt: skip
    """Every problem the reader can see."""
    return render(request, "problems.html", problems=list_shown(session, competition, viewer))


@router.get("/p/{slug}")
def problem_page(slug: str, request: Request, session: SessionDep, settings: SettingsDep, viewer: PageViewer,
                 backend: BackendParam = None, competition: CompetitionParam = None) -> Response:  # fmt: skip
    """One problem, for one of its backends (the first by default)."""
    info, holding = shown_problem(session, settings, slug, competition, viewer)
    if backend is not None and backend not in info.backends:
        raise NotFoundError(f"problem {slug!r} is not judged on {backend.value} here; "
                            f"backends: {', '.join(b.value for b in info.backends)}")  # fmt: skip
    chosen = info.backends[backend or next(iter(info.backends))]
    competitions = [get_competition(session, slug=c) for c in holding]
    return render(request, "problem.html", problem=info, chosen=chosen, competitions=competitions,
                  tolerance_rows=tolerance_rows(info.tolerance),
                  competition=competitions[0] if len(competitions) == 1 else None,
                  query=f"&competition={competition}" if competition else "")  # fmt: skip


@router.get("/rules")
def rules_page(request: Request) -> Response:
    """docs/rules.md: verdicts, the pass rule, timing, scoring, run modes and contest rules."""
    return render(request, "rules.html", rules_html=_rules_html())


@cache
def _rules_html() -> str:
    return render_markdown(RULES_FILE.read_text(encoding="utf-8"))


# The pass rule's figures in words: one row each on the problem page (a key a problem adds is shown as named).
TOLERANCE_LABELS = {
    "abs_factor": "Max error allowed, times max(1, max|G|)",
    "mere": "MERE allowed: the mean of |X − G| / |G| over the elements above the floor",
    "ref_factor": "Max error allowed, times the reference R's own max error",
    "atol": "… plus this much",
    "mere_ref_factor": "MERE allowed, times R's own MERE",
    "mere_slack": "… plus this much",
    "ulps": "Units in the last place an element may be off",
    "mere_floor": "MERE floor: elements with |G| below it are left out of MERE",
    "mere_floor_relative": "The floor is times max(1, max|G|)",
    "mixed_tol": "CANN's mixed tolerance (rtol = atol): the share within it is reported, not judged",
}


def tolerance_rows(tolerance: dict[str, dict[str, Any]]) -> list[tuple[str, str, list[Any]]]:
    """(key, its words, its value per dtype) for the page's table, the pass rule's bounds first."""
    keys: list[str] = []
    for values in tolerance.values():
        keys += [k for k in values if k not in keys]
    keys.sort(key=lambda k: list(TOLERANCE_LABELS).index(k) if k in TOLERANCE_LABELS else len(TOLERANCE_LABELS))
    return [(k, TOLERANCE_LABELS.get(k, k), [tolerance[d].get(k, "—") for d in tolerance]) for k in keys]
