"""What a reviewer may read of a finalist team: every submission, ranked or not
(docs/organisers.md, "What reviewers can read").

The review pages show only the submissions that rank on the private set (what
the final ranking scores); the API lists every submission of a finalist team,
unranked and disqualified ones too, each marked, and its sources are read with
`GET /api/v1/submissions/{id}/sources` (store: `submission_sources`).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session

from api.store.errors import NotFoundError
from api.store.models import Team
from api.store.standings_cache import read_standings
from api.store.submissions import list_submissions
from api.store.views import SubmissionSummary
from judge.backends import CaseSet

_MAX = 10_000  # per team: a whole contest's worth (50 a day for weeks)


@dataclass(frozen=True)
class FinalistSubmission:
    submission: SubmissionSummary
    ranked: bool  # the submission the final ranking scores for its problem (the review pages show only these)


def finalist_submissions(session: Session, *, competition_id: int, team_id: int) -> list[FinalistSubmission]:
    """Every submission of finalist team `team_id`, newest first; NotFoundError for another team."""
    team = session.get(Team, team_id)
    if team is None or team.competition_id != competition_id or not team.finalist:
        raise NotFoundError(f"no finalist team {team_id} in your competition")
    standing = read_standings(session, competition_id=competition_id, case_set=CaseSet.PRIVATE, team_id=team_id)
    ranked = {e.submission_id for s in standing for e in s.entries.values()}
    return [FinalistSubmission(s, s.id in ranked)
            for s in list_submissions(session, team_id=team_id, limit=_MAX)]  # fmt: skip
