"""SQLAlchemy 2 models of the store. Migrations in api/migrations/ mirror them.

Enums are stored as their string values; times as aware UTC (see types.py).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from api.store.enums import RankedBy, RelativeTo, Role, RunKind, RunStatus
from api.store.public_ids import new_public_id
from api.store.types import BackendName, UTCDateTime, str_enum
from judge.backends import Backend, CaseSet, Isolation
from judge.modes import RunMode
from judge.verdict import Verdict

# Stable constraint names, so migrations can refer to them on both databases.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

DEFAULT_RUBRIC = {"design": 40, "code_quality": 30, "presentation": 30}  # docs/rules.md, "Scoring" (reviewers)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map = {datetime: UTCDateTime(), dict[str, Any]: JSON, list[Any]: JSON}


class Competition(Base):
    __tablename__ = "competitions"

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(64), unique=True)
    title: Mapped[str] = mapped_column(String(200))
    starts_at: Mapped[datetime]
    ends_at: Mapped[datetime]
    freeze_at: Mapped[datetime | None]
    quota_per_day: Mapped[int]
    min_interval_s: Mapped[int]
    max_in_flight: Mapped[int]
    # The test and benchmark modes' quotas, where they differ from docs/rules.md's defaults
    # (api/store/modes.py); the three columns above are the ranked mode's.
    mode_quotas: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # How runs are judged beyond the problem: the NPU clock and launch cap (api/store/judge_settings.py).
    judge_settings: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # Whether teams may read the baseline kernel's source on the problem page (api/web/problem_info.py).
    baseline_public: Mapped[bool] = mapped_column(Boolean, default=True)
    online_weight: Mapped[float] = mapped_column(Float, default=0.7)
    reviewer_weight: Mapped[float] = mapped_column(Float, default=0.3)
    relative_to: Mapped[RelativeTo] = mapped_column(str_enum(RelativeTo), default=RelativeTo.BEST)
    ranked_by: Mapped[RankedBy] = mapped_column(str_enum(RankedBy), default=RankedBy.LATEST)
    score_cap: Mapped[float] = mapped_column(Float, default=200.0)
    rubric: Mapped[dict[str, Any]] = mapped_column(default=lambda: dict(DEFAULT_RUBRIC))
    reproduction_tolerance: Mapped[float] = mapped_column(Float, default=0.10)
    final_published: Mapped[bool] = mapped_column(Boolean, default=False)
    # ranked_by `chosen`: how many ranked submissions per problem a team may mark as its finals.
    finals_limit: Mapped[int] = mapped_column(Integer, default=2, server_default="2")
    # Bumped whenever the standings change, so readers can cache a board per version.
    board_version: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime]


class Problem(Base):
    __tablename__ = "problems"
    __table_args__ = (UniqueConstraint("slug", "version", name="uq_problems_slug_version"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(64))
    version: Mapped[int]
    title: Mapped[str] = mapped_column(String(200))
    backends: Mapped[list[Any]]
    definition_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime]


class CompetitionProblem(Base):
    __tablename__ = "competition_problems"

    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id"), primary_key=True)
    problem_id: Mapped[int] = mapped_column(ForeignKey("problems.id"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, default=0)
    backends: Mapped[list[Any]]  # the subset of the problem's backends this competition accepts

    problem: Mapped[Problem] = relationship(lazy="joined")


class Team(Base):
    __tablename__ = "teams"
    __table_args__ = (UniqueConstraint("competition_id", "name", name="uq_teams_competition_name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    finalist: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime]


class Reviewer(Base):
    __tablename__ = "reviewers"
    __table_args__ = (UniqueConstraint("competition_id", "name", name="uq_reviewers_competition_name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime]


class ApiToken(Base):
    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    digest: Mapped[str] = mapped_column(String(64), unique=True)  # HMAC-SHA256(pepper, token), hex
    prefix: Mapped[str] = mapped_column(String(32))  # the visible start, e.g. "opj_team_k3xq"
    role: Mapped[Role] = mapped_column(str_enum(Role))
    team_id: Mapped[int | None] = mapped_column(ForeignKey("teams.id"), index=True)
    reviewer_id: Mapped[int | None] = mapped_column(ForeignKey("reviewers.id"), index=True)
    label: Mapped[str] = mapped_column(String(100), default="")
    created_at: Mapped[datetime]
    revoked_at: Mapped[datetime | None]


class Submission(Base):
    __tablename__ = "submissions"
    __table_args__ = (
        Index("ix_submissions_team_created", "team_id", "created_at"),
        Index("ix_submissions_competition_problem", "competition_id", "problem_id"),
        Index("ix_submissions_public_id", "public_id", unique=True),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    # What teams see and pass instead of `id`: random, so it says nothing of how many submissions other
    # teams made (docs/security.md, "Submission ids"); api/store/public_ids.py makes and resolves it.
    public_id: Mapped[str] = mapped_column(String(16), default=new_public_id)  # unique: see the index
    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id"))
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id"))
    problem_id: Mapped[int] = mapped_column(ForeignKey("problems.id"))
    backend: Mapped[Backend] = mapped_column(BackendName())
    mode: Mapped[RunMode] = mapped_column(str_enum(RunMode), default=RunMode.RANKED)  # only ranked ones rank
    sha256: Mapped[str] = mapped_column(String(64))  # over the files' names and contents, in order
    status: Mapped[RunStatus] = mapped_column(str_enum(RunStatus))  # of the latest judge/rejudge run
    verdict: Mapped[Verdict | None] = mapped_column(str_enum(Verdict))  # of the scored run
    score: Mapped[float | None] = mapped_column(Float)  # the engine's score against the baseline
    charged: Mapped[bool] = mapped_column(Boolean, default=True)  # counts against the daily quota
    # The run whose results count (no FK: runs point back here, and SQLite cannot ALTER one in).
    scored_run_id: Mapped[int | None] = mapped_column(Integer)
    file_count: Mapped[int]
    total_bytes: Mapped[int]
    created_at: Mapped[datetime]
    disqualified_at: Mapped[datetime | None]
    disqualify_reason: Mapped[str | None] = mapped_column(Text)

    files: Mapped[list[SubmissionFile]] = relationship(
        order_by="SubmissionFile.position", cascade="all, delete-orphan", lazy="raise"
    )


class SubmissionFile(Base):
    __tablename__ = "submission_files"
    __table_args__ = (UniqueConstraint("submission_id", "name", name="uq_submission_files_submission_name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"))
    position: Mapped[int]
    name: Mapped[str] = mapped_column(String(128))
    content: Mapped[bytes] = mapped_column(LargeBinary)
    size: Mapped[int]
    sha256: Mapped[str] = mapped_column(String(64))


class Run(Base):
    __tablename__ = "runs"
    __table_args__ = (
        Index("ix_runs_status_pending_since", "status", "pending_since"),
        Index("ix_runs_status_deadline", "status", "deadline"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id"), index=True)
    kind: Mapped[RunKind] = mapped_column(str_enum(RunKind))
    status: Mapped[RunStatus] = mapped_column(str_enum(RunStatus))
    queue: Mapped[str] = mapped_column(String(64))
    priority: Mapped[int] = mapped_column(Integer, default=6)  # on its queue, lower first (api/store/modes.py)
    attempt: Mapped[int] = mapped_column(Integer, default=0)  # claims so far
    claimed_by: Mapped[str | None] = mapped_column(String(200))
    deadline: Mapped[datetime | None]
    created_at: Mapped[datetime]
    pending_since: Mapped[datetime | None]
    queued_at: Mapped[datetime | None]
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
    stage: Mapped[str | None] = mapped_column(String(32))  # the stage now running (judge.backends.Stage)
    stage_times: Mapped[dict[str, Any]] = mapped_column(default=dict)  # stage -> ISO time it started
    verdict: Mapped[Verdict | None] = mapped_column(str_enum(Verdict))
    message: Mapped[str] = mapped_column(Text, default="")
    compile_log: Mapped[str] = mapped_column(Text, default="")
    kernel_output: Mapped[str] = mapped_column(Text, default="")
    findings: Mapped[list[Any]] = mapped_column(default=list)
    score: Mapped[float | None] = mapped_column(Float)
    worker_host: Mapped[str | None] = mapped_column(String(200))
    device: Mapped[str | None] = mapped_column(String(200))
    toolchain: Mapped[str | None] = mapped_column(String(200))
    driver: Mapped[str | None] = mapped_column(String(200))
    isolation: Mapped[Isolation | None] = mapped_column(str_enum(Isolation))
    worker_info: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # Mixed into the judge secret for this run; never shown to teams, so no team can predict its inputs.
    seed_salt: Mapped[str] = mapped_column(String(64), default="")
    reproduction_of: Mapped[int | None] = mapped_column(ForeignKey("runs.id"))
    flagged: Mapped[bool] = mapped_column(Boolean, default=False)
    flag_reason: Mapped[str] = mapped_column(Text, default="")
    # Why the timing phase's host was disturbed when its last attempt was too (judge/retime.py); "" for a
    # calm or untimed run. Such a run is marked wherever its score shows and stays out of a final ranking.
    disturbed: Mapped[str] = mapped_column(Text, default="", server_default="")

    submission: Mapped[Submission] = relationship(lazy="joined", innerjoin=True)


class CaseResultRow(Base):
    __tablename__ = "case_results"
    __table_args__ = (Index("ix_case_results_run_set", "run_id", "case_set"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    position: Mapped[int]
    name: Mapped[str] = mapped_column(String(128))
    case_set: Mapped[CaseSet] = mapped_column(str_enum(CaseSet))
    passed: Mapped[bool] = mapped_column(Boolean)
    verdict: Mapped[Verdict] = mapped_column(str_enum(Verdict))
    message: Mapped[str] = mapped_column(Text, default="")
    errors: Mapped[dict[str, Any]] = mapped_column(default=dict)  # output -> OutputCheck as a dict
    sizes: Mapped[dict[str, Any]] = mapped_column(default=dict)
    median_ns: Mapped[float | None] = mapped_column(Float)
    mean_ns: Mapped[float | None] = mapped_column(Float)
    min_ns: Mapped[float | None] = mapped_column(Float)
    std_ns: Mapped[float | None] = mapped_column(Float)
    count: Mapped[int | None] = mapped_column(Integer)
    baseline_median_ns: Mapped[float | None] = mapped_column(Float)
    ratio: Mapped[float | None] = mapped_column(Float)  # t_sub / t_base
    gflops: Mapped[float | None] = mapped_column(Float)
    gbytes_per_s: Mapped[float | None] = mapped_column(Float)
    flops: Mapped[float] = mapped_column(Float, default=0.0)
    checked_calls: Mapped[int] = mapped_column(Integer, default=0)
    # What timed the baseline's side (a vendor operator or "baseline kernel") and why the kernel did,
    # and the most launches one timed call made under the NPU's device timing (None: not counted).
    # Runs judged before migration 0008 had them in runs.worker_info; the migration moved them here.
    baseline: Mapped[str] = mapped_column(Text, default="", server_default="")
    baseline_note: Mapped[str] = mapped_column(Text, default="", server_default="")
    launches: Mapped[int | None] = mapped_column(Integer)
    baseline_launches: Mapped[int | None] = mapped_column(Integer)


class Review(Base):
    __tablename__ = "reviews"
    __table_args__ = (
        # One current review per reviewer and team; earlier ones stay as history.
        Index(
            "uq_reviews_current",
            "reviewer_id",
            "team_id",
            unique=True,
            sqlite_where=text("is_current"),
            postgresql_where=text("is_current"),
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id"), index=True)
    reviewer_id: Mapped[int] = mapped_column(ForeignKey("reviewers.id"))
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id"), index=True)
    marks: Mapped[dict[str, Any]]
    total: Mapped[float] = mapped_column(Float)
    comment: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime]
    is_current: Mapped[bool] = mapped_column(Boolean, default=True)


class AuditEntry(Base):
    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[datetime]
    competition_id: Mapped[int | None] = mapped_column(ForeignKey("competitions.id"), index=True)
    actor_token_id: Mapped[int | None] = mapped_column(Integer)
    actor: Mapped[str] = mapped_column(String(120))  # the token's prefix and label at the time
    action: Mapped[str] = mapped_column(String(64))
    target: Mapped[str] = mapped_column(String(200), default="")
    details: Mapped[dict[str, Any]] = mapped_column(default=dict)


class Standing(Base):
    """The cached public/final standings: one row per competition, case set and team.

    Rewritten by api/store/standings.py whenever a scored run finishes, a submission
    is disqualified or the scoring settings change; boards read it instead of
    recomputing from every submission.
    """

    __tablename__ = "standings"

    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id"), primary_key=True)
    case_set: Mapped[CaseSet] = mapped_column(str_enum(CaseSet), primary_key=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id"), primary_key=True)
    rank: Mapped[int | None] = mapped_column(Integer)  # None: nothing ranked (disqualified)
    score: Mapped[float] = mapped_column(Float)
    tie_at: Mapped[datetime | None]  # when the ranked entries were submitted (ties go to the earlier)
    disqualified: Mapped[bool] = mapped_column(Boolean, default=False)
    last_submission_at: Mapped[datetime | None]
    latest_verdict: Mapped[Verdict | None] = mapped_column(str_enum(Verdict))
    entries: Mapped[dict[str, Any]]  # problem slug -> ranked entry and its case scores


class Worker(Base):
    __tablename__ = "workers"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    queue: Mapped[str] = mapped_column(String(64))
    info: Mapped[dict[str, Any]] = mapped_column(default=dict)  # host, device, toolchain, driver versions
    started_at: Mapped[datetime]
    last_seen_at: Mapped[datetime]


class PageSession(Base):
    """A login on the pages: the cookie holds a session secret, the row its HMAC.

    Logging out revokes the row, so a copied cookie stops working at once; revoking
    the token the session was opened with ends every session opened with it.
    """

    __tablename__ = "page_sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    digest: Mapped[str] = mapped_column(String(64), unique=True)  # HMAC-SHA256(pepper, secret), hex
    token_id: Mapped[int] = mapped_column(ForeignKey("api_tokens.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    revoked_at: Mapped[datetime | None]


# The organisers' tables live in their own module; imported here so the metadata has them.
from api.store import models_organisers  # noqa: E402, F401
