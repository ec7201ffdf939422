"""Submissions as teams upload and read them."""

from __future__ import annotations

from pydantic import AliasChoices, Field

from api.store.enums import RunStatus
from api.store.queueinfo import QueuePlace
from api.store.views import CaseView, FileInfo, QuotaStatus, RunView, SubmissionDetail, SubmissionSummary
from api.web.schemas.base import Public, from_view
from judge.modes import RunMode
from judge.profiling import CaseProfile, Metric, ProfileSection, Table


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


# The audiences name a submission differently (the subclasses' `id`); the competition is the caller's.
class _SubmissionFields(from_view(SubmissionSummary, exclude=("id", "competition_id", "public_id"))):
    pass


class SubmissionPublic(_SubmissionFields):
    """A submission as teams, reviewers and the pages see it: named by its public id, which says
    nothing of how many submissions other teams made (docs/security.md, "Submission ids")."""

    id: str = Field(validation_alias=AliasChoices("public_id", "id"))


class SubmissionAdminPublic(_SubmissionFields):
    """A submission in the organisers' API: the database id the admin routes take, and the public id."""

    id: int
    public_id: str


class CasePublic(from_view(CaseView)):
    pass


class ProfileMetricPublic(from_view(Metric)):
    pass


class ProfileTablePublic(from_view(Table)):
    pass


class ProfileSectionPublic(from_view(ProfileSection)):
    metrics: list[ProfileMetricPublic] = []
    tables: list[ProfileTablePublic] = []


class CaseProfilePublic(from_view(CaseProfile)):
    """What the profiled pass after timing found on one public timed case (judge/profiling/)."""

    sections: list[ProfileSectionPublic]


# Not shown: the submission (the one asked about), the broker queue, and `number`, which
# `SubmissionDetailPublic.for_team` puts in place of `id` for teams.
class RunPublic(from_view(RunView, exclude=("submission_id", "queue", "number"))):
    cases: list[CasePublic]
    profiles: list[CaseProfilePublic] = []  # public timed cases of benchmark and ranked runs only


class FilePublic(from_view(FileInfo)):
    pass


class QueuePlacePublic(from_view(QueuePlace)):
    """Where the waiting run stands: position 1 is taken next; the wait is an estimate from recent runs."""


class SubmissionDetailPublic(from_view(SubmissionDetail)):
    submission: SubmissionPublic
    files: list[FilePublic]
    runs: list[RunPublic]  # newest first
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


class QuotaPublic(from_view(QuotaStatus)):
    pass


class MePublic(Public):
    team_id: int
    team_name: str
    competition: str
    quota: QuotaPublic  # the ranked mode's
    quotas: dict[RunMode, QuotaPublic] = {}  # every mode's
