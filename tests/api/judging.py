"""Judge submissions straight through the store, as a worker would (for ranking tests)."""

from __future__ import annotations

import dataclasses

from api.store.competitions import update_competition
from api.store.db import Session
from api.store.runs import claim_run, finish_run
from api.store.submissions import create_submission
from judge.backends import Backend
from judge.verdict import Verdict
from tests.api.conftest import Clock, Contest
from tests.api.helpers import KERNEL, result


def open_quotas(session: Session, contest: Contest, clock: Clock, **scoring: object) -> None:
    """No quota gets in the way of a ranking test; `scoring` sets relative_to, ranked_by, ..."""
    changes = {"quota_per_day": 1000, "min_interval_s": 0, "max_in_flight": 1000, **scoring}
    update_competition(session, slug=contest.slug, changes=changes, actor=None, now=clock.now)


def judged(
    session: Session,
    contest: Contest,
    clock: Clock,
    team: str,
    *,
    problem: str = "add_mul_relu",
    verdict: Verdict = Verdict.AC,
    benchmarks: dict[str, float] | None = None,
    private: dict[str, float] | None = None,
    failed: tuple[str, ...] = (),
    disturbed: str = "",
) -> int:
    """Upload, claim and finish one submission at the clock's time; returns the submission id.
    `disturbed`: the worker's timing stayed disturbed through re-timing, for this reason."""
    created = create_submission(session, team_id=contest.team_ids[team], problem=problem, backend=Backend.CPU,
                                files=[("kernel.cpp", KERNEL)], queue="judge.cpu", now=clock.now)  # fmt: skip
    claim_run(session, run_id=created.run_id, worker="w", now=clock.now)
    outcome = result(problem, verdict, benchmarks=benchmarks, private=private, failed=failed)
    if disturbed:
        outcome.conditions = dataclasses.replace(outcome.conditions, disturbed=disturbed, retimed_attempts=3)
    finish_run(session, run_id=created.run_id, result=outcome, worker_info={}, now=clock.now)
    clock.advance(60)
    return created.submission_id
