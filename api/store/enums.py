"""Enums of the store's domain (never bare strings across seams). No SQLAlchemy here."""

from __future__ import annotations

from enum import StrEnum

from judge.backends import CaseSet


class Role(StrEnum):
    TEAM = "team"
    REVIEWER = "reviewer"
    ADMIN = "admin"


class RunKind(StrEnum):
    JUDGE = "judge"  # the run every upload gets
    REJUDGE = "rejudge"  # an organiser's re-run; replaces the earlier result when it finishes
    REPRODUCTION = "reproduction"  # a re-run on a clean host, compared against the original

    @property
    def case_sets(self) -> tuple[CaseSet, ...]:
        """The case sets a run of this kind judges (reproductions re-time, tests are not needed)."""
        if self is RunKind.REPRODUCTION:
            return (CaseSet.BENCHMARKS, CaseSet.PRIVATE)
        return (CaseSet.TESTS, CaseSet.BENCHMARKS, CaseSet.PRIVATE)

    @property
    def scored(self) -> bool:
        """Whether a finished run of this kind becomes the submission's result."""
        return self is not RunKind.REPRODUCTION


class RunStatus(StrEnum):
    PENDING = "pending"  # stored, not (yet) on the broker
    QUEUED = "queued"  # on the broker
    RUNNING = "running"  # claimed by a worker, until its deadline
    DONE = "done"  # finished with a verdict
    FAILED = "failed"  # internal error, no retry left (verdict IE)

    @property
    def in_flight(self) -> bool:
        return self in (RunStatus.PENDING, RunStatus.QUEUED, RunStatus.RUNNING)


IN_FLIGHT = (RunStatus.PENDING, RunStatus.QUEUED, RunStatus.RUNNING)


class RelativeTo(StrEnum):
    BEST = "best"  # docs/rules.md: r*_c is the lowest ratio of the ranked entries
    BASELINE = "baseline"


class RankedBy(StrEnum):
    LATEST = "latest"  # the team's latest judged submission ranks (CANN rule)
    BEST = "best"  # the team's best-scoring submission ranks
    # The final ranking takes the best, on the private set, of the submissions a team marked as
    # its finals (up to the competition's finals_limit per problem; its latest until it marks any);
    # the public board ranks the latest, as under `latest`.
    CHOSEN = "chosen"
