"""Reviewers list the finalists and put rubric marks (docs/organisers.md, "What reviewers can read")."""

from __future__ import annotations

from fastapi import APIRouter

from api.store.finalist_reads import finalist_submissions
from api.store.reviews import list_finalists, put_review, reviewer_marks
from api.web.deps import NowDep, ReviewerDep, SessionDep
from api.web.schemas.bounds import TeamId
from api.web.schemas.reviews import FinalistPublic, FinalistSubmissionPublic, ReviewCreate, ReviewPublic

router = APIRouter(prefix="/api/v1/review", tags=["reviewers"])


@router.get("/teams", response_model=list[FinalistPublic])
def finalists(reviewer: ReviewerDep, session: SessionDep) -> list[FinalistPublic]:
    """The finalist teams of the reviewer's competition, with the submissions that rank."""
    assert reviewer.competition_id is not None
    return [FinalistPublic.model_validate(f) for f in list_finalists(session, competition_id=reviewer.competition_id)]


@router.get("/teams/{team_id}/submissions", response_model=list[FinalistSubmissionPublic])
def team_submissions(team_id: TeamId, reviewer: ReviewerDep, session: SessionDep) -> list[FinalistSubmissionPublic]:
    """Every submission of a finalist team, newest first, unranked and disqualified ones too, each
    marked `ranked` or not; read any one's files with `GET /api/v1/submissions/{id}/sources`."""
    assert reviewer.competition_id is not None
    found = finalist_submissions(session, competition_id=reviewer.competition_id, team_id=team_id)
    return [FinalistSubmissionPublic.model_validate(f) for f in found]


@router.put("/teams/{team_id}", response_model=ReviewPublic)
def put_marks(
    team_id: TeamId, body: ReviewCreate, reviewer: ReviewerDep, session: SessionDep, now: NowDep
) -> ReviewPublic:
    """Rubric marks for a finalist team; they replace the reviewer's earlier marks (kept as history)."""
    assert reviewer.reviewer_id is not None
    review = put_review(session, reviewer_id=reviewer.reviewer_id, team_id=team_id, marks=body.marks,
                        comment=body.comment, now=now)  # fmt: skip
    return ReviewPublic.model_validate(review)


@router.get("/marks", response_model=list[ReviewPublic])
def my_marks(reviewer: ReviewerDep, session: SessionDep) -> list[ReviewPublic]:
    """The reviewer's current marks."""
    assert reviewer.reviewer_id is not None
    return [ReviewPublic.model_validate(r) for r in reviewer_marks(session, reviewer_id=reviewer.reviewer_id)]
