"""Errors the store raises on purpose. Their messages are safe to show; api/web/errors.py picks the status."""

from __future__ import annotations

from judge.errors import UserFacingError


class StoreError(UserFacingError):
    """Base of the store's refusals."""


class NotFoundError(StoreError):
    """The thing does not exist, or the caller may not know that it does."""


class AuthError(StoreError):
    """No usable credentials: missing, unknown or revoked token."""


class PermissionDeniedError(StoreError):
    """The caller is known but may not do this (wrong role, another team's data)."""


class ContestClosedError(StoreError):
    """Outside the submission window (docs/rules.md: 403 with the reason)."""


class QuotaExceededError(StoreError):
    """A per-team quota is spent; `retry_after_s` says when the next attempt can succeed."""

    def __init__(self, message: str, *, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = max(1, retry_after_s)


class InvalidInputError(StoreError):
    """The request names something that cannot be used (unknown problem or backend, bad marks)."""


class ConflictError(StoreError):
    """The request clashes with what is stored (a name already taken, a run already finished)."""
