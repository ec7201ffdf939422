"""Submissions as teams upload and read them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import AliasChoices, Field

from api.schemas.base import Public
from api.store import RunKind, RunStatus, SubmissionDetail
from judge.backends import Backend, CaseSet, Isolation
from judge.modes import RunMode
from judge.verdict import Verdict


class SubmissionCreated(Public):
    # The public id (docs/security.md, "Submission ids"): the one the team's routes, pages and CLI take.
    id: str
    run_id: int  # the run's number among the submission's runs: 1 (not the database's run id)
    mode: RunMode
    status: RunStatus
    status_url: str
    queue: QueuePlacePublic | None = None  # where the run stands in its queue
    queued: bool  # False: the broker was down; the run is stored and will be queued when it is back
    message: str


class _SubmissionFields(Public):
    team_id: int
    team_name: str
    problem: str
    backend: Backend
    mode: RunMode  # test and benchmark runs never count on the board
    status: RunStatus
    verdict: Verdict | None
    score: float | None
    sha256: str
    file_count: int
    total_bytes: int
    created_at: datetime
    disqualified_at: datetime | None
    disqualify_reason: str | None


class SubmissionPublic(_SubmissionFields):
    """A submission as teams, reviewers and the pages see it: named by its public id, which says
    nothing of how many submissions other teams made (docs/security.md, "Submission ids")."""

    id: str = Field(validation_alias=AliasChoices("public_id", "id"))


class SubmissionAdminPublic(_SubmissionFields):
    """A submission in the organisers' API: the database id the admin routes take, and the public id."""

    id: int
    public_id: str


class CasePublic(Public):
    name: str
    case_set: CaseSet
    passed: bool
    verdict: Verdict
    message: str
    errors: dict[str, Any]
    sizes: dict[str, Any]
    median_ns: float | None
    mean_ns: float | None
    min_ns: float | None
    std_ns: float | None
    count: int | None
    baseline_median_ns: float | None
    ratio: float | None
    gflops: float | None
    gbytes_per_s: float | None
    flops: float
    redacted: bool
    # NPU device timing: the most launches one timed call made; the team's are capped, the baseline's never.
    launches: int | None = None
    baseline_launches: int | None = None


class ProfileMetricPublic(Public):
    name: str
    value: float | int | str
    unit: str = ""
    hint: str = ""


class ProfileTablePublic(Public):
    title: str
    columns: list[str]
    rows: list[dict[str, Any]]
    chart: str = ""  # a column of per-cent shares drawn as bars on the report page


class ProfileSectionPublic(Public):
    tool: str  # threads, perf, ncu, msprof, profile
    available: bool
    reason: str = ""  # why the tool could not run, when not available
    metrics: list[ProfileMetricPublic] = []
    tables: list[ProfileTablePublic] = []
    raw_name: str = ""


class CaseProfilePublic(Public):
    """What the profiled pass after timing found on one public timed case (judge/profiling/)."""

    case: str
    backend: str
    sections: list[ProfileSectionPublic]


class RunPublic(Public):
    id: int
    kind: RunKind
    status: RunStatus
    attempt: int
    created_at: datetime
    queued_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    stage: str | None
    stage_times: dict[str, str]
    verdict: Verdict | None
    message: str
    compile_log: str
    kernel_output: str
    findings: list[dict[str, Any]]
    score: float | None
    worker_host: str | None
    device: str | None
    toolchain: str | None
    driver: str | None
    isolation: Isolation | None
    reproduction_of: int | None
    flagged: bool
    flag_reason: str
    cases: list[CasePublic]
    # Which clock timed the run (NPU: "timing" events or device, "timing_detail", "max_launches").
    timing: dict[str, str] = {}
    profiles: list[CaseProfilePublic] = []  # public timed cases of benchmark and ranked runs only
    # Non-empty: the host stayed disturbed through every timing attempt (the reason); the score may be off
    # by more than usual, and the run stays out of a final ranking until an organiser re-times it.
    disturbed: str = ""
    timing_attempts: int = 1  # timing phases run (more than one: the host was disturbed at first)


class FilePublic(Public):
    name: str
    size: int
    sha256: str


class QueuePlacePublic(Public):
    """Where the waiting run stands: position 1 is taken next; the wait is an estimate from recent runs."""

    queue: str
    position: int
    ahead: int
    running: int
    workers: int
    typical_run_s: float | None
    estimated_wait_s: float | None


class SubmissionDetailPublic(Public):
    submission: SubmissionPublic
    files: list[FilePublic]
    runs: list[RunPublic]  # newest first
    scored_run_id: int | None
    queue: QueuePlacePublic | None = None  # while the run waits for a worker

    @classmethod
    def for_team(cls, detail: SubmissionDetail) -> SubmissionDetailPublic:
        """The detail with each run named by its number within the submission, not its database id:
        run ids count every team's runs (docs/security.md, "Submission ids")."""
        numbers = {run.id: run.number for run in detail.runs}
        public = cls.model_validate(detail)
        runs = [run.model_copy(update={"id": numbers[run.id]}) for run in public.runs]
        scored = numbers.get(detail.scored_run_id) if detail.scored_run_id is not None else None
        return public.model_copy(update={"runs": runs, "scored_run_id": scored})


class SourcePublic(Public):
    name: str
    content: str  # decoded as UTF-8, undecodable bytes replaced


class QuotaPublic(Public):
    used_24h: int
    limit_24h: int
    left_24h: int
    in_flight: int
    max_in_flight: int
    next_allowed_at: datetime | None
    mode: RunMode = RunMode.RANKED
    min_interval_s: int = 0


class MePublic(Public):
    team_id: int
    team_name: str
    competition: str
    quota: QuotaPublic  # the ranked mode's
    quotas: dict[RunMode, QuotaPublic] = {}  # every mode's
