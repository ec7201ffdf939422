"""HTTP statuses for the errors the store, the engine and the upload parser raise (chosen here only)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DataError, StatementError

from api.store.db import DB_UNAVAILABLE_ERRORS, db_unavailable_reason
from api.store.errors import (
    AuthError,
    ConflictError,
    ContestClosedError,
    InvalidInputError,
    NotFoundError,
    PermissionDeniedError,
    QuotaExceededError,
)
from api.web.schemas.bounds import UNKNOWN_ID
from api.web.uploads import UploadInvalidError, UploadMediaTypeError, UploadTooLargeError
from judge.errors import UnknownProblemError, UnsupportedBackendError, UserFacingError

log = logging.getLogger(__name__)

# Most specific first: the handler looks the error's class up along its MRO.
STATUS: dict[type[Exception], int] = {
    AuthError: 401,
    PermissionDeniedError: 403,
    ContestClosedError: 403,
    NotFoundError: 404,
    ConflictError: 409,
    UploadTooLargeError: 413,
    UploadMediaTypeError: 415,
    InvalidInputError: 422,
    UploadInvalidError: 422,
    UnknownProblemError: 422,
    UnsupportedBackendError: 422,
    QuotaExceededError: 429,
    UserFacingError: 400,
}
DB_RETRY_AFTER_S = 5

# Said when the database refuses a value the edge let through (the bounds in api/web/schemas/bounds.py
# should stop these first; this keeps a missed one from becoming a 500).
VALUE_OUT_OF_RANGE = (
    "a value in the request cannot be stored or looked up: a number too large, a date too far out, "
    "or text with a NUL character; check the numbers, dates and text you sent"
)


def value_error_reason(error: Exception) -> str | None:
    """VALUE_OUT_OF_RANGE when `error` is the database (or Python) refusing a value, else None.

    SQLite raises a bare OverflowError for an int beyond 64 bits; PostgreSQL a DataError
    ("integer out of range", NUL in text); a bind processor's OverflowError arrives wrapped.
    """
    if isinstance(error, OverflowError | DataError):
        return VALUE_OUT_OF_RANGE
    if isinstance(error, StatementError) and isinstance(error.orig, OverflowError | DataError):
        return VALUE_OUT_OF_RANGE
    return None


def validation_errors(error: RequestValidationError) -> list[dict[str, Any]]:
    """Each error's loc, msg and type, always renderable as JSON.

    FastAPI's own answer echoes the input, and fails (a 500) when the input is NaN or a
    lone surrogate; the caller sent it, so leaving it out loses nothing.
    """
    return [
        {"loc": [_printable(part) for part in item.get("loc", ())], "msg": _message(item), "type": item.get("type")}
        for item in error.errors()
    ]


def validation_status(errors: Sequence[dict[str, Any]]) -> int:
    """404 when every error is an id no row can have (as for an unknown id in range), else 422."""
    return 404 if errors and all(e["type"] == UNKNOWN_ID for e in errors) else 422


def validation_reason(errors: Sequence[dict[str, Any]]) -> str:
    """The errors as one line a person can read: "comment: text cannot contain ..."."""
    return "; ".join(item["msg"] if item["type"] == UNKNOWN_ID else f"{_where(item['loc'])}: {item['msg']}"
                     for item in errors)  # fmt: skip


def _where(loc: Sequence[Any]) -> str:
    # "comment", not "body.comment": a person knows which part of the request held it.
    return ".".join(str(part) for part in loc[1:]) or ".".join(str(part) for part in loc) or "request"


def _message(item: dict[str, Any]) -> str:
    message = str(item.get("msg", "invalid value"))
    context = item.get("ctx") or {}
    if item.get("type") == "json_invalid" and isinstance(context.get("error"), str):
        message += f": {context['error']}"  # where the JSON broke
    return _printable(message)


def _printable(value: Any) -> Any:
    # A lone surrogate in a dict key or message cannot be encoded as UTF-8: show it as '?'.
    return value.encode("utf-8", "replace").decode("utf-8") if isinstance(value, str) else value


def install_error_handlers(app: FastAPI) -> None:
    """Answer each typed error with its status and `{"detail": reason}`."""

    async def user_facing(_request: Request, error: Exception) -> JSONResponse:
        status = next(STATUS[c] for c in type(error).__mro__ if c in STATUS)
        headers = {}
        if isinstance(error, AuthError):
            headers["WWW-Authenticate"] = "Bearer"
        if isinstance(error, QuotaExceededError):
            headers["Retry-After"] = str(error.retry_after_s)
        return JSONResponse({"detail": str(error)}, status_code=status, headers=headers)

    async def database_down(_request: Request, error: Exception) -> JSONResponse:
        reason = db_unavailable_reason(error)
        log.warning("answering 503: %s (%s)", reason, error)
        return JSONResponse({"detail": reason}, status_code=503, headers={"Retry-After": str(DB_RETRY_AFTER_S)})

    async def invalid_request(_request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, RequestValidationError)
        errors = validation_errors(error)
        status = validation_status(errors)
        if status == 404:
            return JSONResponse({"detail": validation_reason(errors)}, status_code=404)
        return JSONResponse({"detail": errors}, status_code=status)

    async def value_out_of_range(_request: Request, error: Exception) -> JSONResponse:
        reason = value_error_reason(error)
        if reason is None:
            raise error  # some other statement failed: a real 500
        log.warning("answering 422 for a value the database refused: %r", error, exc_info=error)
        return JSONResponse({"detail": reason}, status_code=422)

    app.add_exception_handler(UserFacingError, user_facing)
    app.add_exception_handler(RequestValidationError, invalid_request)
    for error_type in (OverflowError, StatementError):  # DataError is a StatementError
        app.add_exception_handler(error_type, value_out_of_range)
    for error_type in DB_UNAVAILABLE_ERRORS:
        app.add_exception_handler(error_type, database_down)
