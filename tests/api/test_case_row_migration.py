"""Runs judged before migration 0008 kept each case's baseline and launch counts in `runs.worker_info`
under prefixed keys; the migration moves them into the case rows, which the API and exports read."""

from __future__ import annotations

import dataclasses

from alembic import command
from sqlalchemy import select, update

from api.store.db import Database, alembic_config
from api.store.models import CaseResultRow, Run
from api.store.runs import claim_run, finish_run
from tests.api.conftest import Clock, Contest
from tests.api.helpers import judge_run_id, result, upload
from tests.api.judging import open_quotas


def test_the_migration_moves_a_stored_runs_case_data_into_its_case_rows(
        client, contest: Contest, database: Database, clock: Clock) -> None:  # type: ignore[no-untyped-def]
    with database.session() as session:
        open_quotas(session, contest, clock)
    created = upload(client, contest.auth("alpha")).json()
    judged = result(benchmarks={"b1": 0.5})
    cases = [dataclasses.replace(c, baseline="", launches=None) for c in judged.cases]
    with database.session() as session:
        run_id = judge_run_id(session, created["id"])
        claim_run(session, run_id=run_id, worker="w", now=clock.now)
        finish_run(session, run_id=run_id, result=dataclasses.replace(judged, cases=cases), worker_info={},
                   now=clock.now)
    with database.engine.begin() as connection:
        command.downgrade(alembic_config(connection), "0007")
    old = {"host": "box", "baseline:b1": "aclnn op", "baseline_note:b1": "why", "launches:b1": "2",
           "baseline_launches:b1": "5", "launches:t1": "x"}  # the shape a run was stored in before
    with database.engine.begin() as connection:
        connection.execute(update(Run).where(Run.id == run_id).values(worker_info=old))
    with database.engine.begin() as connection:
        command.upgrade(alembic_config(connection), "head")
    with database.session() as session:
        rows = {r.name: r for r in session.scalars(select(CaseResultRow).where(CaseResultRow.run_id == run_id))}
    b1, t1 = rows["b1"], rows["t1"]
    assert (b1.baseline, b1.baseline_note, b1.launches, b1.baseline_launches) == ("aclnn op", "why", 2, 5)
    assert (t1.baseline, t1.launches, t1.baseline_launches) == ("", None, None)  # "x" was never a count
    (run,) = client.get(created["status_url"], headers=contest.auth("alpha")).json()["runs"]
    by_name = {c["name"]: c for c in run["cases"]}
    assert (by_name["b1"]["launches"], by_name["b1"]["baseline_launches"]) == (2, 5)
