"""Organiser actions on runs: rejudge, disqualify, reproduce; workers, queues and the audit log."""

from __future__ import annotations

from pydantic import Field, model_validator

from api.store.disturbed import DisturbedRunView
from api.store.views import AuditView, QueueLoad, ReproductionView, WorkerView
from api.web.schemas.base import Create, Public, from_view
from api.web.schemas.bounds import PlainText, SubmissionRef, TeamId


class RejudgeCreate(Create):
    """Exactly one of the three."""

    # The database id, or the public id a team sees; one that names nothing is 404 (api/store/submission_refs.py).
    submission_id: int | SubmissionRef | None = None
    team_id: TeamId | None = None
    problem: PlainText | None = None

    @model_validator(mode="after")
    def _one(self) -> RejudgeCreate:
        if sum(v is not None for v in (self.submission_id, self.team_id, self.problem)) != 1:
            raise ValueError("give exactly one of submission_id, team_id, problem")
        return self


class RunsAccepted(Public):
    run_ids: list[int]
    queued: list[int]
    pending: list[int]  # the broker was down: dispatched when it is back
    message: str


class DisqualifyCreate(Create):
    reason: PlainText = Field(min_length=1, max_length=2000)


class ReproductionCreate(Create):
    top_n: int = Field(ge=1, le=1000)


class ReproductionPublic(from_view(ReproductionView)):
    pass


class DisturbedRunPublic(from_view(DisturbedRunView)):
    """A run whose host stayed disturbed through its re-timing: rejudge its submission to re-time it."""


class WorkerPublic(from_view(WorkerView)):
    pass


class QueueLoadPublic(from_view(QueueLoad)):
    pass


class AuditPublic(from_view(AuditView)):
    pass
