"""From what a caller passes to name a submission to the database's id, and back.

Teams name submissions only by their public id (api/store/public_ids.py): a team
that could use the sequential id could count other teams' submissions by probing
(docs/security.md, "Submission ids"). Organisers and reviewers may use either.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.orm import Session

from api.store.errors import NotFoundError
from api.store.models import Submission
from api.store.public_ids import EXAMPLE, is_public_id
from api.store.types import INT_MAX


class NumericIdError(NotFoundError):
    """A team named a submission by the sequential number teams no longer see."""

    def __init__(self, ref: str) -> None:
        super().__init__(
            f"no submission {ref}: submissions are named by the 12-letter id the team page, the API and "
            f"`opjudge status` show (like {EXAMPLE!r}), not by a number; list yours with `opjudge status`"
        )


def submission_id_of(session: Session, ref: str | int, *, team_id: int | None = None) -> int:
    """The database id of the submission `ref` names; NotFoundError when it names none.

    With `team_id` (a team asking) only a public id is taken, and only the team's own
    submission is found: another team's is "not found", as if it did not exist.
    """
    text = str(ref).strip()
    if text.isdigit():
        if team_id is not None:
            raise NumericIdError(text)
        number = int(text)
        if not 1 <= number <= INT_MAX or session.get(Submission, number) is None:
            raise NotFoundError(f"no submission {text}")
        return number
    found = session.execute(
        select(Submission.id, Submission.team_id).where(Submission.public_id == text)
    ).first() if is_public_id(text) else None  # fmt: skip
    if found is None or (team_id is not None and found.team_id != team_id):
        raise NotFoundError(f"no submission {text} among your team's submissions" if team_id is not None
                            else f"no submission {text}")  # fmt: skip
    return int(found.id)


def submission_ids_of(session: Session, refs: Iterable[str | int], *, team_id: int | None = None) -> list[int]:
    """`submission_id_of` for each of `refs`, in order; one error naming every ref that names nothing."""
    ids: list[int] = []
    missing: list[str] = []
    numeric = False
    for ref in refs:
        try:
            ids.append(submission_id_of(session, ref, team_id=team_id))
        except NumericIdError:
            numeric = True
            missing.append(str(ref))
        except NotFoundError:
            missing.append(str(ref))
    if numeric and len(missing) == 1:
        raise NumericIdError(missing[0])
    if missing:
        hint = f" (submissions are named by ids like {EXAMPLE!r}, not by numbers)" if numeric else ""
        raise NotFoundError(f"no submission {', '.join(missing)} among your team's submissions{hint}"
                            if team_id is not None else f"no submission {', '.join(missing)}")  # fmt: skip
    return ids


def public_ids_of(session: Session, ids: Iterable[int]) -> dict[int, str]:
    """database id -> public id, for the submissions of `ids` that exist."""
    wanted = set(ids)
    if not wanted:
        return {}
    rows = session.execute(select(Submission.id, Submission.public_id).where(Submission.id.in_(wanted)))
    return {int(i): str(p) for i, p in rows}
