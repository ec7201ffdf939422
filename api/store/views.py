"""What store functions return: frozen dataclasses, so no ORM object leaves the store.

Most are also the API's answers: the response schemas are built from these records
(`api.web.schemas.base.from_view`), not declared again, so a field added, retyped or given a
default here changes the OpenAPI document too (a field with a default is optional there).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from api.store.enums import RankedBy, RelativeTo, Role, RunKind, RunStatus
from judge.backends import Backend, CaseSet, Isolation
from judge.modes import RunMode
from judge.verdict import Verdict


@dataclass(frozen=True)
class Principal:
    """Who is calling: resolved from an API token by `authenticate`."""

    token_id: int
    role: Role
    prefix: str  # the token's visible start, for logs and the audit trail
    label: str
    team_id: int | None = None
    team_name: str | None = None
    reviewer_id: int | None = None
    reviewer_name: str | None = None
    competition_id: int | None = None  # of the team or reviewer; None for admins
    competition_slug: str | None = None

    @property
    def actor(self) -> str:
        """How the audit log names this caller."""
        who = self.team_name or self.reviewer_name or self.label or self.role.value
        return f"{self.prefix}… ({who})"


@dataclass(frozen=True)
class IssuedToken:
    token_id: int
    token: str  # the secret itself: shown once (store it now), never stored
    prefix: str
    role: Role
    team_id: int | None
    reviewer_id: int | None


@dataclass(frozen=True)
class TokenInfo:
    token_id: int
    prefix: str
    role: Role
    label: str
    team_id: int | None
    reviewer_id: int | None
    created_at: datetime
    revoked_at: datetime | None


@dataclass(frozen=True)
class ProblemLink:
    slug: str
    version: int
    title: str
    backends: tuple[Backend, ...]  # accepted in this competition
    definition_hash: str


@dataclass(frozen=True)
class CompetitionView:
    id: int
    slug: str
    title: str
    starts_at: datetime
    ends_at: datetime
    freeze_at: datetime | None
    quota_per_day: int
    min_interval_s: int
    max_in_flight: int
    online_weight: float
    reviewer_weight: float
    relative_to: RelativeTo
    ranked_by: RankedBy
    score_cap: float
    rubric: dict[str, float]
    reproduction_tolerance: float
    final_published: bool
    finals_limit: int  # ranked_by `chosen`: finals a team may mark per problem
    board_version: int
    problems: tuple[ProblemLink, ...] = ()
    # Every run mode's quota (docs/rules.md "Run modes"); the ranked one repeats the three fields above.
    mode_quotas: dict[str, dict[str, int]] = field(default_factory=dict)
    baseline_public: bool = True  # teams may read the baseline's source on the problem page
    # One field per track setting organisers may set (declared in judge/track_settings/; for now the NPU
    # clock: "events" or "device", and under "device" the launches one timed call of a team's kernel may
    # make, 0: any). None: the workers' default (OPJUDGE_NPU_TIMING, else "events";
    # api/store/judge_settings.py). Each run's report says which clock timed it.
    npu_timing: str | None = None
    npu_max_launches: int | None = None

    def frozen_at(self, now: datetime) -> datetime | None:
        """The freeze time when the public board is frozen at `now`, else None."""
        if self.freeze_at is not None and now >= self.freeze_at:
            return self.freeze_at
        return None


@dataclass(frozen=True)
class TeamView:
    id: int
    name: str
    competition_id: int
    finalist: bool
    created_at: datetime


@dataclass(frozen=True)
class ReviewerView:
    id: int
    name: str
    competition_id: int
    active: bool
    created_at: datetime


@dataclass(frozen=True)
class QuotaStatus:
    used_24h: int  # charged submissions in the last 24 hours
    limit_24h: int
    left_24h: int
    in_flight: int
    max_in_flight: int
    next_allowed_at: datetime | None  # None: a submission is allowed now (as far as quotas go)
    mode: RunMode = RunMode.RANKED
    min_interval_s: int = 0


@dataclass(frozen=True)
class NewSubmission:
    submission_id: int
    run_id: int
    queue: str
    status: RunStatus
    mode: RunMode = RunMode.RANKED
    priority: int = 6  # on the queue, lower first (api.store.modes.QueuePriority)
    public_id: str = ""  # what the team sees (api/store/public_ids.py)

    @property
    def dispatch(self) -> RunDispatch:
        return RunDispatch(self.run_id, self.queue, self.priority)


@dataclass(frozen=True)
class RunDispatch:
    """A run to put on the broker, the queue it goes to and its priority there (lower first)."""

    run_id: int
    queue: str
    priority: int = 6  # api.store.modes.QueuePriority.RANKED


@dataclass(frozen=True)
class FileInfo:
    name: str
    size: int
    sha256: str


@dataclass(frozen=True)
class SubmissionSummary:
    id: int
    competition_id: int
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
    public_id: str = ""  # what teams see and pass instead of `id` (api/store/public_ids.py)


@dataclass(frozen=True)
class CaseView:
    name: str
    case_set: CaseSet
    passed: bool
    verdict: Verdict
    message: str
    errors: dict[str, Any]  # output -> its check (max error, MERE, allowances, reason)
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
    redacted: bool  # a private case shown to a team: pass/fail only
    # The most launches one timed call made, under the NPU's device timing (None: not counted); the
    # team's are capped, the baseline's never.
    launches: int | None = None
    baseline_launches: int | None = None


@dataclass(frozen=True)
class RunView:
    id: int
    submission_id: int
    kind: RunKind
    status: RunStatus
    queue: str
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
    cases: list[CaseView] = field(default_factory=list)
    # The clock that timed the run, as recorded (api/store/results.py run_timing): empty but on the NPU,
    # where it says "timing" (events or device), "timing_detail" and "max_launches".
    timing: dict[str, str] = field(default_factory=dict)
    # One judge.profiling.CaseProfile (as JSON) per profiled public case, in case order
    profiles: list[dict[str, Any]] = field(default_factory=list)
    # Why the host was disturbed when the last of `timing_attempts` timing phases was too (judge/retime.py);
    # "" when calm. Such a score may be off by more than usual: it is marked and stays out of a final
    # ranking until an organiser re-times it.
    disturbed: str = ""
    timing_attempts: int = 1  # timing phases run (more than one: the host was disturbed at first)
    # The run's place among its submission's runs as the viewer sees them, oldest 1: what a team sees
    # instead of `id`, which counts every team's runs (docs/security.md, "Submission ids").
    number: int = 0


@dataclass(frozen=True)
class SubmissionDetail:
    submission: SubmissionSummary
    files: list[FileInfo]
    runs: list[RunView]  # newest first
    scored_run_id: int | None
    queue: Any = None  # api.store.queueinfo.QueuePlace while the live run waits, else None


@dataclass(frozen=True)
class ClaimedRun:
    """What a worker needs to judge a run it has claimed (api.store.runs.claim_run)."""

    run_id: int
    submission_id: int
    kind: RunKind
    problem: str  # slug, for judge.problem.load_problem
    problem_version: int
    definition_hash: str  # the problem definition the submission was made against
    backend: Backend
    sources: list[tuple[str, bytes]]  # (file name, content), in upload order
    case_sets: tuple[CaseSet, ...]  # the sets this kind of run judges (the engine narrows them by `mode`)
    attempt: int  # 1 on the first claim
    deadline: datetime  # the reaper re-queues the run after this
    seed_salt: bytes  # append to the judge secret (JudgeRequest.secret); never shown to teams
    mode: RunMode = RunMode.RANKED  # the submission's run mode
    # The competition's settings of the tracks, by public key (api/store/judge_settings.py): over the
    # worker's defaults for the run's track (judge/host.py `host_from_env`).
    judge_settings: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RunHolder:
    """One claim of a run: the worker and the attempt number `claim_run` gave it.

    A worker that reports a result under a claim the run no longer has (the run was
    re-queued and claimed again, by another worker or by its own name's next process)
    is ignored: the run keeps the result of the claim it is running under.
    """

    worker: str
    attempt: int


@dataclass(frozen=True)
class StuckRun:
    run_id: int
    queue: str
    claimed_by: str | None
    deadline: datetime | None
    attempt: int
    priority: int = 6  # on its queue (api.store.modes.QueuePriority)


@dataclass(frozen=True)
class ReviewView:
    id: int
    reviewer_id: int
    reviewer_name: str
    team_id: int
    team_name: str
    marks: dict[str, float]
    total: float
    comment: str
    created_at: datetime
    is_current: bool


@dataclass(frozen=True)
class FinalistView:
    team_id: int
    team_name: str
    submission_ids: dict[str, int]  # problem -> the ranked submission, for reviewers to read
    online_score: float | None  # on the private set; None before any result


@dataclass(frozen=True)
class AuditView:
    id: int
    at: datetime
    competition_id: int | None
    actor: str
    action: str
    target: str
    details: dict[str, Any]


@dataclass(frozen=True)
class WorkerView:
    name: str
    queue: str
    info: dict[str, Any]
    started_at: datetime
    last_seen_at: datetime


@dataclass(frozen=True)
class QueueLoad:
    queue: str
    status: RunStatus
    runs: int


@dataclass(frozen=True)
class ReproductionView:
    run_id: int
    original_run_id: int | None
    submission_id: int
    team_id: int
    team_name: str
    problem: str
    status: RunStatus
    verdict: Verdict | None
    flagged: bool
    flag_reason: str
    created_at: datetime
    finished_at: datetime | None
