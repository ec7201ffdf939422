"""The organisers' tools (docs/organisers.md): the final ranking's snapshot and its recomputation."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from api.schemas.base import Create, Public
from api.schemas.bounds import PlainText


class SnapshotPublic(Public):
    id: int
    taken_at: datetime
    actor: str
    reason: str
    override: bool
    current: bool


class FinalStatePublic(Public):
    competition: str
    published: bool
    window_ends_at: datetime
    window_open: bool
    snapshot: SnapshotPublic | None
    history: list[SnapshotPublic]


class FinalChangePublic(Public):
    team_id: int
    team_name: str
    field: str
    before: Any
    after: Any


class RecomputeRequest(Create):
    reason: PlainText = Field(default="", max_length=2000)
    override: bool = False  # needed (with a reason) while the submission window is open
    dry_run: bool = False  # only list what would change


class RecomputePublic(Public):
    competition: str
    stored: bool
    snapshot: SnapshotPublic | None
    changes: list[FinalChangePublic]


class ReauditRequest(Create):
    rebuild: bool = False  # also rebuild each submission and check its preprocessed units and library again
    # The worker queue the job goes to: a rebuild needs the submissions' toolchains (judge.cpu builds CPU ones).
    queue: str = Field(default="judge.cpu", pattern=r"^judge\.[a-z0-9_.-]{1,60}$")


class JobPublic(Public):
    id: int
    kind: str
    status: str
    params: dict[str, Any]
    result: dict[str, Any]
    error: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    dispatch: str = ""  # why the job is still pending, when it could not be handed to a worker


class SimilarityRequest(Create):
    threshold: float = Field(default=0.5, gt=0, le=1)  # pairs whose matched share reaches this are kept
    queue: str = Field(default="judge.cpu", pattern=r"^judge\.[a-z0-9_.-]{1,60}$")


class PairPublic(Public):
    id: int
    problem: str
    similarity: float
    submission_a: int
    team_a: str
    submission_b: int
    team_b: str
    regions: dict[str, Any]  # {"a": [[file, start, end], ...], "b": [...], "share_a": x, "share_b": y}
    decision: str | None
    decided_by: str | None
    decided_at: datetime | None
    note: str
    job_id: int


class SourceFilePublic(Public):
    name: str
    content: str


class PairDetailPublic(Public):
    pair: PairPublic
    files_a: list[SourceFilePublic]
    files_b: list[SourceFilePublic]


class PairDecision(Create):
    decision: Literal["cleared", "flagged"] | None  # None: undecided again
    note: PlainText = Field(default="", max_length=2000)
