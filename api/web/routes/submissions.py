"""Teams upload submissions and read their own, naming them by their public ids (docs/security.md)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request

from api.dispatch import dispatch_runs, queue_for
from api.store.enums import Role, RunStatus
from api.store.queueinfo import place_of_run
from api.store.submission_refs import submission_id_of
from api.store.submissions import (
    create_submission,
    list_submissions,
    submission_detail,
    submission_sources,
    team_quotas,
)
from api.web.deps import (
    CurrentPrincipal,
    CurrentTeam,
    DispatcherDep,
    NowDep,
    SessionDep,
    SettingsDep,
    TeamOrAdmin,
)
from api.web.schemas.bounds import SubmissionRef
from api.web.schemas.submissions import (
    MePublic,
    QueuePlacePublic,
    QuotaPublic,
    SourcePublic,
    SubmissionCreated,
    SubmissionDetailPublic,
    SubmissionPublic,
)
from api.web.uploads import UploadForm, read_upload
from judge.backends import Backend
from judge.modes import RunMode

router = APIRouter(prefix="/api/v1", tags=["teams"])

_UPLOAD_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["problem", "backend", "files"],
                    "properties": {
                        "problem": {"type": "string", "example": "add_mul_relu"},
                        "backend": {"type": "string", "enum": [b.value for b in Backend]},  # the registered tracks
                        "mode": {"type": "string", "enum": ["test", "benchmark", "ranked"], "default": "ranked"},
                        "files": {"type": "array", "items": {"type": "string", "format": "binary"}},
                    },
                }
            }
        },
    }
}


async def upload_form(request: Request, settings: SettingsDep, _team: CurrentTeam) -> UploadForm:
    """The parsed upload; depends on the team so a missing token is refused before the body is read."""
    return await read_upload(request, settings)


@router.post("/submissions", status_code=202, response_model=SubmissionCreated, openapi_extra=_UPLOAD_BODY)
def upload_submission(
    team: CurrentTeam,
    form: Annotated[UploadForm, Depends(upload_form)],
    session: SessionDep,
    settings: SettingsDep,
    dispatcher: DispatcherDep,
    now: NowDep,
) -> SubmissionCreated:
    """Upload source files for a problem and backend: stored first, then queued for judging (202).

    `mode` (test, benchmark or ranked, default ranked) decides what is judged and which quota it uses.
    """
    assert team.team_id is not None
    created = create_submission(
        session, team_id=team.team_id, problem=form.problem, backend=form.backend, files=form.files,
        queue=queue_for(form.backend, settings), now=now, mode=form.mode,
    )  # fmt: skip
    report = dispatch_runs(session, dispatcher, [created.dispatch], now=now)
    queued = bool(report.queued)
    place = place_of_run(session, run_id=created.run_id, now=now)
    session.rollback()  # end the read
    return SubmissionCreated(
        queue=QueuePlacePublic.model_validate(place) if place is not None else None,
        id=created.public_id,
        run_id=1,  # the first run of the submission: teams see run numbers, not run ids
        mode=created.mode,
        status=RunStatus.QUEUED if queued else RunStatus.PENDING,
        status_url=f"/api/v1/submissions/{created.public_id}",
        queued=queued,
        message="stored and queued for judging"
        if queued
        else "stored; the judging queue is unavailable, the run will be queued when it is back",
    )


@router.get("/submissions", response_model=list[SubmissionPublic])
def my_submissions(
    team: CurrentTeam,
    session: SessionDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    before_id: Annotated[SubmissionRef | None, Query(description="a submission's id: those before it")] = None,
) -> list[SubmissionPublic]:
    """The team's own submissions, newest first (`before_id`, the id of one of them, pages back)."""
    before = submission_id_of(session, before_id, team_id=team.team_id) if before_id is not None else None
    found = list_submissions(session, team_id=team.team_id, limit=limit, before_id=before)
    return [SubmissionPublic.model_validate(s) for s in found]


@router.get("/submissions/{submission_id}", response_model=SubmissionDetailPublic)
def read_submission(submission_id: SubmissionRef, caller: TeamOrAdmin, session: SessionDep,
                    now: NowDep) -> SubmissionDetailPublic:  # fmt: skip
    """A submission with its runs, per-case results and compile log (a team reads only its own, by the id
    its answers show); while it waits, its place in the queue and an estimate of the wait."""
    found = submission_id_of(session, submission_id, team_id=caller.team_id)
    detail = submission_detail(session, submission_id=found, team_id=caller.team_id, now=now)
    if caller.team_id is not None:
        return SubmissionDetailPublic.for_team(detail)
    return SubmissionDetailPublic.model_validate(detail)


@router.get("/submissions/{submission_id}/sources", response_model=list[SourcePublic])
def read_sources(submission_id: SubmissionRef, caller: CurrentPrincipal, session: SessionDep) -> list[SourcePublic]:
    """The uploaded files as text: a team reads its own, a reviewer its competition's finalists'."""
    reviewer_competition = caller.competition_id if caller.role is Role.REVIEWER else None
    found = submission_id_of(session, submission_id, team_id=caller.team_id)
    files = submission_sources(session, submission_id=found, team_id=caller.team_id,
                               reviewer_competition_id=reviewer_competition)  # fmt: skip
    return [SourcePublic(name=name, content=content.decode("utf-8", "replace")) for name, content in files]


@router.get("/me", response_model=MePublic)
def me(team: CurrentTeam, session: SessionDep, now: NowDep) -> MePublic:
    """The calling team, each run mode's quota left in the last 24 hours and when it may submit next."""
    assert team.team_id is not None and team.team_name is not None and team.competition_slug is not None
    quotas = team_quotas(session, team_id=team.team_id, now=now)
    return MePublic(team_id=team.team_id, team_name=team.team_name, competition=team.competition_slug,
                    quota=QuotaPublic.model_validate(quotas[RunMode.RANKED]),
                    quotas={m: QuotaPublic.model_validate(q) for m, q in quotas.items()})  # fmt: skip
