"""`judge_run(run_id)`: claim a run, judge it with judge/, store the result. Safe to run twice.

This is the one code path of judging in the service: the Celery task
(workers/celery_app.py) and the embedded in-process worker (workers/inprocess.py)
both call `judge_run` and only differ in how they retry.

- The claim is the store's compare-and-set: a second delivery of a run that is
  finished, or held by a live worker, does nothing.
- An internal error (IE) puts the run back to pending for a retry with back-off,
  never charged to the team; after `max_attempts` claims it ends as IE.
- A database outage is waited out for a while; if it lasts, the caller retries
  the whole run later (`StoreUnavailableError`).
"""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import TypeVar

from api.store.db import DB_UNAVAILABLE_ERRORS, Session
from api.store.runs import claim_run, fail_run, finish_run, record_stage
from api.store.types import utcnow
from api.store.views import ClaimedRun, RunHolder
from judge.backends import CaseSet, Stage
from judge.engine import JudgeRequest, judge_submission
from judge.errors import JudgeError
from judge.problem import load_problem
from judge.results import JudgeResult
from judge.toolchains.base import SourceFile
from judge.verdict import Verdict
from workers.context import WorkerContext

log = logging.getLogger("opjudge.worker")

T = TypeVar("T")

# How long a store call keeps retrying while the database is down, before giving the run back.
STORE_RETRY_WINDOW_S = 60.0


class StoreUnavailableError(JudgeError):
    """The database stayed unreachable; the run must be tried again later.

    `held` says whether this worker had claimed the run: a later attempt of
    the same task may then take it over instead of waiting for its deadline.
    """

    def __init__(self, message: str, *, held: bool) -> None:
        super().__init__(message)
        self.held = held


class Outcome(StrEnum):
    JUDGED = "judged"  # a verdict was stored (IE included, once no retry is left)
    SKIPPED = "skipped"  # another worker has the run, or it is finished: nothing done
    RETRY = "retry"  # an internal error; the run is pending again and should be retried later


@dataclass(frozen=True)
class RunOutcome:
    run_id: int
    outcome: Outcome
    verdict: Verdict | None = None
    retry_in_s: float | None = None  # with Outcome.RETRY: the back-off before the next attempt
    message: str = ""


class StoreReporter:
    """The engine's `Reporter`: each stage's start time goes to the run's timeline in the store."""

    def __init__(self, ctx: WorkerContext, run_id: int) -> None:
        self._ctx, self._run_id = ctx, run_id

    def stage(self, stage: Stage) -> None:
        """Record the stage; a database hiccup here must not fail the judging, so it is only logged."""
        try:
            with self._ctx.db.session() as session:
                record_stage(session, run_id=self._run_id, stage=stage, at=utcnow())
        except DB_UNAVAILABLE_ERRORS as exc:
            log.warning("run %s: stage %s not recorded: %s", self._run_id, stage.value, exc)

    def note(self, message: str) -> None:
        log.debug("run %s: %s", self._run_id, message)


def judge_run(ctx: WorkerContext, run_id: int, *, take_over: bool = False) -> RunOutcome:
    """Claim run `run_id`, judge it and store the result; see the module docstring.

    `take_over=True` when the broker redelivered the task because the worker
    that held it was lost: the run may then still look claimed.
    Raises only `StoreUnavailableError`.
    """
    settings = ctx.settings
    claimed = _store(ctx, "claim", held=False, call=lambda s: claim_run(
        s, run_id=run_id, worker=ctx.name, deadline_s=settings.run_deadline_s, take_over=take_over))
    if claimed is None:
        log.info("run %s: finished or held by another worker; nothing to do", run_id)
        return RunOutcome(run_id, Outcome.SKIPPED)
    if claimed.attempt > settings.max_attempts:
        # Claimed that often without a result: the worker died each time (e.g. out of memory).
        reason = f"the run was started {claimed.attempt - 1} times and never finished"
        _store(ctx, "fail", held=True, call=lambda s: fail_run(s, run_id=run_id, reason=reason, retry=False,
                                                               holder=_holder(ctx, claimed)))
        return RunOutcome(run_id, Outcome.JUDGED, Verdict.IE, message=reason)
    log.info("run %s: claimed (attempt %d, %s %s)", run_id, claimed.attempt, claimed.problem, claimed.backend)
    try:
        result = _judge(ctx, claimed)
    except Exception as exc:  # the judge itself broke: an IE, whatever the cause
        log.exception("run %s: the judge raised", run_id)
        result = JudgeResult(verdict=Verdict.IE, problem=claimed.problem, backend=claimed.backend,
                             message=f"{type(exc).__name__}: {exc}")
    if result.verdict is Verdict.IE and claimed.attempt < settings.max_attempts:
        return _retry_later(ctx, claimed, result.message)
    if not settings.mark_disturbed_runs and result.conditions.disturbed:
        result.conditions = replace(result.conditions, disturbed=None,
                                     disturbed_unmarked=result.conditions.disturbed)
    info = _worker_info(ctx, claimed, result)
    # Kept until the claim's deadline: giving the run back would throw the judged result away,
    # and on the last attempt end it as IE.
    stored = _store(ctx, "finish", held=True, until=claimed.deadline,
                    call=lambda s: finish_run(s, run_id=run_id, result=result, worker_info=info,
                                              holder=_holder(ctx, claimed)))
    log.info("run %s: %s%s", run_id, result.verdict.value,
             "" if stored else " (not stored: finished elsewhere, or re-queued and claimed again)")
    return RunOutcome(run_id, Outcome.JUDGED if stored else Outcome.SKIPPED, result.verdict, message=result.message)


def retry_delay_s(ctx: WorkerContext, attempt: int) -> float:
    """Back-off before attempt `attempt + 1`: doubling from `retry_backoff_s`, capped."""
    s = ctx.settings
    return float(min(s.retry_backoff_s * 2 ** max(attempt - 1, 0), s.retry_backoff_max_s))


def run_case_sets(ctx: WorkerContext, claimed: ClaimedRun) -> tuple[CaseSet, ...]:
    """The run kind's sets, narrowed by OPJUDGE_RUN_CASE_SETS where the kind has any of those."""
    override = ctx.settings.case_sets_override
    narrowed = tuple(s for s in claimed.case_sets if s in override)
    return narrowed or claimed.case_sets


def _judge(ctx: WorkerContext, claimed: ClaimedRun) -> JudgeResult:
    settings = ctx.settings
    problem = load_problem(claimed.problem, settings.problems_dir, settings.reference_dir)
    if problem.definition_hash != claimed.definition_hash:
        log.warning("run %s: problem %s changed since it was attached (definition %s, now %s)",
                    claimed.run_id, claimed.problem, claimed.definition_hash[:12], problem.definition_hash[:12])
    request = JudgeRequest(
        problem=problem,
        backend=claimed.backend,
        # The API checked names and sizes on upload; the engine's policy check looks at the content.
        sources=[SourceFile(name=name, content=content) for name, content in claimed.sources],
        case_sets=run_case_sets(ctx, claimed),
        # docs/rules.md: seeds mix a secret the submission cannot predict; the salt makes each run's differ.
        secret=settings.secret + claimed.seed_salt,
        mode=claimed.mode,  # test: tests only; benchmark: no private cases (judge/modes.py)
    )
    # The competition's judge settings (its NPU clock) win over the worker's own defaults.
    host = ctx.host_config(claimed.backend, claimed.judge_settings)
    return judge_submission(request, host=host, reporter=StoreReporter(ctx, claimed.run_id))


def _retry_later(ctx: WorkerContext, claimed: ClaimedRun, reason: str) -> RunOutcome:
    log.warning("run %s: internal error on attempt %d, retrying: %s", claimed.run_id, claimed.attempt, reason)
    released = _store(ctx, "fail", held=True, call=lambda s: fail_run(
        s, run_id=claimed.run_id, reason=reason, retry=True, holder=_holder(ctx, claimed)))
    if not released:  # finished elsewhere, or re-queued and claimed again: not ours to retry
        return RunOutcome(claimed.run_id, Outcome.SKIPPED, Verdict.IE, message=reason)
    return RunOutcome(claimed.run_id, Outcome.RETRY, Verdict.IE, retry_in_s=retry_delay_s(ctx, claimed.attempt),
                      message=reason)


def _holder(ctx: WorkerContext, claimed: ClaimedRun) -> RunHolder:
    return RunHolder(worker=ctx.name, attempt=claimed.attempt)


def _worker_info(ctx: WorkerContext, claimed: ClaimedRun, result: JudgeResult) -> dict[str, str]:
    # finish_run lets these win over the engine's `result.host`, so only add what it lacks.
    info = {"worker": ctx.name, "attempt": str(claimed.attempt), "sandbox_mode": ctx.settings.sandbox_mode,
            "problem_definition": claimed.definition_hash}
    if "host" not in result.host:
        info["host"] = socket.gethostname()
    return info


def _store(ctx: WorkerContext, what: str, *, held: bool, call: Callable[[Session], T],
           until: datetime | None = None) -> T:
    """Run one store call, waiting out a database outage for up to STORE_RETRY_WINDOW_S, or
    until `until` when that is later (a judged result is kept while the claim lasts)."""
    window_s = STORE_RETRY_WINDOW_S
    if until is not None:
        window_s = max(window_s, (until - utcnow()).total_seconds())
    give_up = time.monotonic() + window_s
    delay = 0.5
    while True:
        try:
            with ctx.db.session() as session:
                return call(session)
        except DB_UNAVAILABLE_ERRORS as exc:
            if time.monotonic() + delay > give_up:
                raise StoreUnavailableError(f"database unavailable during {what}: {exc}", held=held) from exc
            log.warning("database unavailable during %s, retrying in %.1f s: %s", what, delay, exc)
            time.sleep(delay)
            delay = min(delay * 2, 8.0)
