"""Problems as teams read them: `/api/v1/problems` and `/api/v1/problems/<slug>`."""

from __future__ import annotations

from typing import Any

from api.schemas.base import Public
from judge.backends import Backend, CaseSet


class ProblemListed(Public):
    slug: str
    title: str
    version: int
    backends: list[Backend]
    competitions: list[str]
    url: str  # this API's route for the whole problem
    page: str  # the problem's page


class PublicCasePublic(Public):
    name: str
    case_set: CaseSet
    dtype: str
    sizes: dict[str, Any]
    flags: list[str]


class TimingRulesPublic(Public):
    warmup_calls: int
    warmup_ms: float
    min_calls: int
    max_calls: int
    target_sem_percent: float
    case_budget_s: float
    call_time_limit_s: float
    checked_share: float


class SourceTextPublic(Public):
    name: str
    content: str


class BackendPublic(Public):
    backend: Backend
    statement_markdown: str
    statement_html: str
    cases: list[PublicCasePublic]  # tests and benchmarks; private cases are only counted
    private_cases: int
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
