"""The reaper: stuck runs back on the broker, pending runs dispatched once the broker is back."""

from __future__ import annotations

import time
from datetime import timedelta

from api.store import RunStatus, claim_run, list_workers, register_worker, submission_detail
from api.store.types import utcnow
from workers.context import WorkerContext
from workers.reaper import WorkerMonitor, reap_once

from .conftest import DownDispatcher, RecordingDispatcher


def status_of(ctx: WorkerContext, submission_id: int) -> RunStatus:
    with ctx.db.session() as session:
        return submission_detail(session, submission_id=submission_id).runs[0].status


def test_pending_runs_whose_enqueue_failed_are_dispatched(ctx, submit) -> None:
    created = submit()
    broker = RecordingDispatcher()
    report = reap_once(ctx, broker)
    assert report.dispatched == [created.run_id] and broker.sent == [(created.run_id, "judge.cpu")]
    assert status_of(ctx, created.submission_id) is RunStatus.QUEUED
    assert reap_once(ctx, broker).dispatched == []  # queued now: not sent twice


def test_a_broker_still_down_leaves_the_run_pending(ctx, submit) -> None:
    created = submit()
    report = reap_once(ctx, DownDispatcher())
    assert report.still_pending == [created.run_id] and "Connection refused" in report.reason
    assert status_of(ctx, created.submission_id) is RunStatus.PENDING


def test_a_run_past_its_deadline_is_requeued_at_once(ctx, submit) -> None:
    created = submit()
    with ctx.db.session() as session:
        claim_run(session, run_id=created.run_id, worker="judge.cpu@dead.1", deadline_s=0.001,
                  now=utcnow() - timedelta(seconds=5))
    assert status_of(ctx, created.submission_id) is RunStatus.RUNNING
    broker = RecordingDispatcher()
    report = reap_once(ctx, broker)
    assert report.requeued == [created.run_id] and broker.sent == [(created.run_id, "judge.cpu")]
    assert status_of(ctx, created.submission_id) is RunStatus.QUEUED


def test_a_run_within_its_deadline_is_left_to_its_worker(ctx, submit) -> None:
    created = submit()
    with ctx.db.session() as session:
        claim_run(session, run_id=created.run_id, worker="judge.cpu@busy.1")
    broker = RecordingDispatcher()
    assert reap_once(ctx, broker).requeued == [] and broker.sent == []


def test_the_monitor_heartbeats_and_reaps(ctx, submit) -> None:
    ctx.settings.heartbeat_interval_s = ctx.settings.reaper_interval_s = 0.2
    with ctx.db.session() as session:
        first = register_worker(session, name=ctx.name, queue="judge.cpu", info={"toolchain": "g++"})
    created = submit()
    broker = RecordingDispatcher()
    monitor = WorkerMonitor(ctx, dispatcher=broker, queue="judge.cpu", info={})
    monitor.start()
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not broker.sent:
            time.sleep(0.1)
        time.sleep(0.5)
    finally:
        monitor.stop()
    assert broker.sent == [(created.run_id, "judge.cpu")]
    with ctx.db.session() as session:
        (seen,) = list_workers(session)
    assert seen.last_seen_at > first.last_seen_at
