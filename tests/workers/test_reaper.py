"""The reaper: stuck runs back on the broker, pending runs dispatched once the broker is back."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from sqlalchemy.exc import OperationalError

from api.store.enums import RunStatus
from api.store.runs import claim_run
from api.store.submissions import submission_detail
from api.store.types import utcnow
from api.store.workers import list_workers, register_worker, worker_heartbeat
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
                  now=utcnow() - timedelta(seconds=5))  # fmt: skip
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


DEAD = "judge.cpu@killed-host.7"


def _held_by_dead_worker(ctx: WorkerContext, run_id: int, *, silent_s: float = 3600) -> None:
    """`run_id` claimed by a registered worker whose last heartbeat was `silent_s` ago; the deadline is far."""
    then = utcnow() - timedelta(seconds=silent_s)
    with ctx.db.session() as session:
        register_worker(session, name=DEAD, queue="judge.cpu", info={"host": "killed-host"}, now=then)
        claim_run(session, run_id=run_id, worker=DEAD, deadline_s=silent_s + 1800, now=then)


def test_a_run_of_a_lost_worker_is_requeued_before_its_deadline(ctx, submit) -> None:
    created = submit()
    _held_by_dead_worker(ctx, created.run_id, silent_s=ctx.settings.worker_lost_after_s + 5)
    broker = RecordingDispatcher()
    assert reap_once(ctx, broker, lost_workers=False).requeued == []  # the deadline alone: half an hour on
    assert status_of(ctx, created.submission_id) is RunStatus.RUNNING
    report = reap_once(ctx, broker)
    assert report.lost == report.requeued == [created.run_id] and broker.sent == [(created.run_id, "judge.cpu")]
    assert status_of(ctx, created.submission_id) is RunStatus.QUEUED
    assert reap_once(ctx, broker).requeued == []  # once


def test_a_worker_that_heartbeats_keeps_its_run(ctx, submit) -> None:
    created = submit()
    _held_by_dead_worker(ctx, created.run_id, silent_s=ctx.settings.worker_lost_after_s + 5)
    with ctx.db.session() as session:
        worker_heartbeat(session, name=DEAD)  # it was only slow
    broker = RecordingDispatcher()
    assert reap_once(ctx, broker).requeued == [] and broker.sent == []
    assert status_of(ctx, created.submission_id) is RunStatus.RUNNING


def test_the_lost_window_is_the_missed_heartbeats_times_the_interval(settings) -> None:
    settings.heartbeat_interval_s, settings.lost_after_missed_heartbeats = 4.0, 5
    assert settings.worker_lost_after_s == 20.0
    with pytest.raises(ValueError, match="greater than or equal to 2"):
        type(settings)(**{**settings.model_dump(), "lost_after_missed_heartbeats": 1})


def test_the_monitor_judges_workers_lost_only_after_a_window_of_database_answers(ctx, submit, monkeypatch) -> None:
    ctx.settings.heartbeat_interval_s = 1.0  # lost after 3 s of silence
    first = submit()
    _held_by_dead_worker(ctx, first.run_id)
    now = [1000.0]
    broker = RecordingDispatcher()
    monitor = WorkerMonitor(ctx, dispatcher=broker, clock=lambda: now[0])
    monitor.reap()  # just started: an old heartbeat says nothing yet
    now[0] += 2.0
    monitor.reap()
    assert broker.sent == [] and status_of(ctx, first.submission_id) is RunStatus.RUNNING
    now[0] += 1.5  # the database has answered for 3.5 s
    monitor.reap()
    assert broker.sent == [(first.run_id, "judge.cpu")]

    # An outage silences every worker's heartbeat: the window starts again once the database is back.
    second = submit()
    _held_by_dead_worker(ctx, second.run_id)

    def database_down(*_args: object, **_kwargs: object) -> None:
        raise OperationalError("UPDATE workers", {}, ConnectionRefusedError("connection refused"))

    monkeypatch.setattr("workers.reaper.worker_heartbeat", database_down)
    monitor.heartbeat()  # logged, not raised
    monkeypatch.undo()
    now[0] += 10.0
    monitor.reap()
    now[0] += 2.0
    monitor.reap()
    assert status_of(ctx, second.submission_id) is RunStatus.RUNNING
    now[0] += 1.5
    monitor.reap()
    assert broker.sent[-1] == (second.run_id, "judge.cpu")
