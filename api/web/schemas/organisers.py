"""The organisers' tools (docs/organisers.md): the final ranking's snapshot and its recomputation."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from api.store.final_ranking import FinalChange, FinalState, Recompute, SnapshotInfo
from api.store.jobs import JobView
from api.store.similarity import PairView
from api.web.schemas.base import Create, Public, from_view
from api.web.schemas.bounds import PlainText


class SnapshotPublic(from_view(SnapshotInfo)):
    pass


class FinalStatePublic(from_view(FinalState)):
    snapshot: SnapshotPublic | None
    history: list[SnapshotPublic]


class FinalChangePublic(from_view(FinalChange)):
    pass


class RecomputeRequest(Create):
    reason: PlainText = Field(default="", max_length=2000)
    override: bool = False  # needed (with a reason) while the submission window is open
    dry_run: bool = False  # only list what would change


class RecomputePublic(from_view(Recompute)):
    snapshot: SnapshotPublic | None
    changes: list[FinalChangePublic]


class ReauditRequest(Create):
    rebuild: bool = False  # also rebuild each submission and check its preprocessed units and library again
    # The worker queue the job goes to: a rebuild needs the submissions' toolchains (judge.cpu builds CPU ones).
    queue: str = Field(default="judge.cpu", pattern=r"^judge\.[a-z0-9_.-]{1,60}$")


# Organisers name the competition in the route; kind and status are shown as plain strings.
class JobPublic(from_view(JobView, exclude=("competition_id",))):
    kind: str
    status: str
    dispatch: str = ""  # why the job is still pending, when it could not be handed to a worker


class SimilarityRequest(Create):
    threshold: float = Field(default=0.5, gt=0, le=1)  # pairs whose matched share reaches this are kept
    queue: str = Field(default="judge.cpu", pattern=r"^judge\.[a-z0-9_.-]{1,60}$")


class PairPublic(from_view(PairView)):
    decision: str | None  # shown as a plain string


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
