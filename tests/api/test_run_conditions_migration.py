"""Runs judged before migration 0009 kept their conditions (judge/conditions.py) as flat strings in
`runs.worker_info`; the migration types them under `worker_info["conditions"]`, which the API, the
report's chart and the exports read, and a downgrade writes the strings back."""

from __future__ import annotations

import dataclasses

from alembic import command
from sqlalchemy import select, update

from api.store.db import Database, alembic_config
from api.store.models import Run
from api.store.runs import claim_run, finish_run
from api.web.pages.devices import device_peaks
from judge.backends import Backend
from judge.conditions import CONDITIONS_KEY, RunConditions, stored_conditions
from tests.api.conftest import Clock, Contest
from tests.api.helpers import judge_run_id, result, upload
from tests.api.judging import open_quotas

CONDITIONS = RunConditions(toolchain="g++ 12", python_baseline="aclnnAdd",
                           baseline_overheads_ns={"event_overhead_ns": 900.0}, peak_flops=1.2e12,
                           retimed_attempts=2, disturbed_attempts=("load average 6.00",))


def _worker_info(database: Database, run_id: int) -> dict[str, object]:
    with database.session() as session:
        return dict(session.scalar(select(Run.worker_info).where(Run.id == run_id)) or {})


def test_the_migration_types_a_stored_runs_conditions_and_a_downgrade_writes_the_strings_back(
        client, contest: Contest, database: Database, clock: Clock) -> None:  # type: ignore[no-untyped-def]
    with database.session() as session:
        open_quotas(session, contest, clock)
    created = upload(client, contest.auth("alpha")).json()
    judged = dataclasses.replace(result(benchmarks={"b1": 0.5}), conditions=CONDITIONS)
    with database.session() as session:
        run_id = judge_run_id(session, created["id"])
        claim_run(session, run_id=run_id, worker="w", now=clock.now)
        finish_run(session, run_id=run_id, result=judged, worker_info={"worker": "w"}, now=clock.now)
    assert stored_conditions(_worker_info(database, run_id)) == CONDITIONS
    with database.engine.begin() as connection:
        command.downgrade(alembic_config(connection), "0008")
    flat = _worker_info(database, run_id)
    assert CONDITIONS_KEY not in flat and flat["host"] == "box" and flat["worker"] == "w"
    assert (flat["toolchain"], flat["retimed_attempts"], flat["disturbed_attempt_1"]) == ("g++ 12", "2",
                                                                                          "load average 6.00")
    assert (flat["baseline_python_baseline"], flat["baseline_event_overhead_ns"]) == ("aclnnAdd", "900")
    old = {"host": "box", "device": "Xeon", "toolchain": "g++ 11", "retimed_attempts": "3", "peak_flops": "2e12",
           "peak_bytes_per_s": "40e9", "disturbed_attempt_1": "load average 6.00", "baseline:b1": "aclnn op",
           "timing": "device"}  # the shape a run was stored in before  # fmt: skip
    with database.engine.begin() as connection:
        connection.execute(update(Run).where(Run.id == run_id).values(worker_info=old))
    with database.engine.begin() as connection:
        command.upgrade(alembic_config(connection), "head")
    info = _worker_info(database, run_id)
    assert {k for k in info if k != CONDITIONS_KEY} == {"host", "device", "baseline:b1", "timing"}
    assert stored_conditions(info) == RunConditions(toolchain="g++ 11", peak_flops=2e12, peak_bytes_per_s=4e10,
                                                    retimed_attempts=3, disturbed_attempts=("load average 6.00",))
    (run,) = client.get(created["status_url"], headers=contest.auth("alpha")).json()["runs"]
    assert run["timing_attempts"] == 3 and run["timing"] == {"timing": "device"}
    peaks = device_peaks(info, backend=Backend.CPU, device="Xeon")
    assert (peaks.gflops, peaks.gbytes_per_s, peaks.source) == (2000.0, 40.0, "as recorded by the worker")


def test_a_row_a_worker_of_the_previous_release_writes_still_reads() -> None:
    """Flat strings written after the migration (a worker not yet upgraded) read as before."""
    old = {"host": "box", "retimed_attempts": "3", "peak_flops": "1e12"}
    assert stored_conditions(old).timing_attempts == 3
    assert device_peaks(old, backend=Backend.CPU, device=None).gflops == 1000.0
