"""Problems as teams read them: `/api/v1/problems` and `/api/v1/problems/<slug>`."""

from __future__ import annotations

from typing import Any

from api.web.problem_catalog import ListedProblem
from api.web.problem_info import BackendInfo, PublicCase, SourceText, TimingRules
from api.web.schemas.base import Public, from_view


class ProblemListed(from_view(ListedProblem)):
    url: str  # this API's route for the whole problem
    page: str  # the problem's page


class PublicCasePublic(from_view(PublicCase)):
    pass


class TimingRulesPublic(from_view(TimingRules)):
    pass


class SourceTextPublic(from_view(SourceText)):
    pass


class BackendPublic(from_view(BackendInfo)):
    cases: list[PublicCasePublic]  # tests and benchmarks; private cases are only counted
    timing: TimingRulesPublic
    baseline: list[SourceTextPublic] | None  # None: the competition does not show it


class ScoringPublic(Public):
    competition: str
    relative_to: str
    ranked_by: str
    score_cap: float
    online_weight: float
    reviewer_weight: float


class ProblemPublic(Public):
    slug: str
    title: str
    version: int
    header_name: str
    header: str
    header_url: str
    tolerance: dict[str, dict[str, Any]]
    backends: list[BackendPublic]
    scoring: list[ScoringPublic]  # per competition that holds the problem
    rules: str  # where the judging rules are written down for teams
