"""Typed errors of the engine. HTTP status codes are chosen in api/ only."""

from __future__ import annotations


class JudgeError(Exception):
    """Base of every error the engine raises on purpose."""


class UserFacingError(JudgeError):
    """An error whose message is safe and useful to show a team or an organiser."""


class UnknownProblemError(UserFacingError):
    def __init__(self, slug: str, known: list[str]) -> None:
        super().__init__(f"unknown problem {slug!r}; known problems: {', '.join(known) or 'none'}")
        self.slug = slug


class UnsupportedBackendError(UserFacingError):
    def __init__(self, problem: str, backend: str, supported: list[str]) -> None:
        super().__init__(
            f"problem {problem!r} has no backend {backend!r}; it has: {', '.join(supported)}"
        )


class SubmissionFormatError(UserFacingError):
    """The uploaded files cannot be judged as they are (names, sizes, count)."""


class ToolchainUnavailableError(JudgeError):
    """The backend's compiler or runtime is not installed on this host; says what was looked for."""


class SandboxUnavailableError(JudgeError):
    """The requested isolation level cannot be provided here; says which probe failed and how to fix it."""


class InternalJudgeError(JudgeError):
    """The judge itself failed (verdict IE)."""
