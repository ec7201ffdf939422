"""Input types that keep values inside what the database can hold: ids, cursors, text, marks.

An id beyond the Integer columns' range cannot name anything stored, yet SQLite
raises OverflowError on it and PostgreSQL "integer out of range": a 500 either
way. Refusing it here answers the caller instead; api/web/errors.py turns the
`unknown_id` errors into the 404 an unknown id in range gets from the store.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, AwareDatetime, Field, Strict
from pydantic_core import PydanticCustomError

from api.store.types import INT_MAX, as_utc

UNKNOWN_ID = "unknown_id"  # the validation error type of an id that cannot exist (answered 404)


def _existing_id(what: str) -> AfterValidator:
    """Refuses an id no row can have, worded like the store's NotFoundError ("no team 5")."""

    def check(value: int) -> int:
        if not 1 <= value <= INT_MAX:
            raise PydanticCustomError(UNKNOWN_ID, "no {what} {id}", {"what": what, "id": value})
        return value

    return AfterValidator(check)


# Ids that name one thing (in a path or a body): out of range means "no such thing", 404.
SubmissionId = Annotated[int, _existing_id("submission")]
TeamId = Annotated[int, _existing_id("team")]
TokenId = Annotated[int, _existing_id("token")]
ReviewerId = Annotated[int, _existing_id("reviewer")]
JobId = Annotated[int, _existing_id("job")]  # an organiser job (re-audit, machine review)
PairId = Annotated[int, _existing_id("similar pair")]  # a pair machine review found

# A submission as a caller names it: its public id (api/store/public_ids.py), or, for organisers and
# reviewers only, its database id; api/store/submission_refs.py resolves it (404 when it names none).
SubmissionRef = Annotated[str, Field(min_length=1, max_length=64)]

# Ids used as a filter or a page cursor: out of range is a malformed request, 422.
IdFilter = Annotated[int, Field(ge=1, le=INT_MAX)]


def text_problem(value: str) -> str | None:
    """Why the database cannot store `value`, or None when it can (also for forms read by hand)."""
    # PostgreSQL text cannot hold NUL, and a lone surrogate (JSON "\ud800") is no Unicode at all:
    # neither could be stored or shown again, so neither is taken anywhere.
    if "\x00" in value:
        return "text cannot contain the NUL character (\\u0000)"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "text must be valid Unicode (no lone surrogates like \\ud800)"
    return None


def _storable_text(value: str) -> str:
    problem = text_problem(value)
    if problem is not None:
        raise PydanticCustomError("unstorable_text", problem)
    return value


PlainText = Annotated[str, AfterValidator(_storable_text)]


def _in_utc(moment: datetime) -> datetime:
    try:
        return as_utc(moment)
    except OverflowError as error:
        raise PydanticCustomError("datetime_out_of_range", str(error)) from None


# A time with its zone that has a UTC form (the store keeps UTC): 0001-01-01T00:00+05:00 has none.
Moment = Annotated[AwareDatetime, AfterValidator(_in_utc)]

# A mark or a rubric maximum: a real number (true is not 1), finite (an infinite one breaks the scores).
Number = Annotated[float, Strict(), Field(allow_inf_nan=False)]
