"""HTTP statuses for the errors the store, the engine and the upload parser raise (chosen here only)."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from api.store import (
    DB_UNAVAILABLE_ERRORS,
    AuthError,
    ConflictError,
    ContestClosedError,
    InvalidInputError,
    NotFoundError,
    PermissionDeniedError,
    QuotaExceededError,
    db_unavailable_reason,
)
from api.uploads import UploadInvalidError, UploadMediaTypeError, UploadTooLargeError
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

    app.add_exception_handler(UserFacingError, user_facing)
    for error_type in DB_UNAVAILABLE_ERRORS:
        app.add_exception_handler(error_type, database_down)
