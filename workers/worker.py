"""`opjudge worker --queue judge.cpu`: a Celery worker for one device queue.

On start it probes and reports its host, device and toolchain versions
(printed and stored with `register_worker`), then runs a prefork pool with one
process per device, a heartbeat and a reaper beside it.
"""

from __future__ import annotations

import logging

from celery.signals import worker_ready, worker_shutting_down

from api.store.db import Database, upgrade_database
from api.store.runs import release_runs_of_earlier_process
from api.store.workers import register_worker
from judge.backends import Backend
from judge.errors import UserFacingError
from judge.tracks import find_track_by_queue, queue_forms
from workers.celery_app import CeleryDispatcher, make_celery
from workers.context import WorkerContext, default_worker_name, pin_device
from workers.hostinfo import describe_worker
from workers.reaper import WorkerMonitor
from workers.settings import WorkerSettings

log = logging.getLogger("opjudge.worker")


class WorkerConfigError(UserFacingError):
    """The worker cannot start as asked (unknown queue, no broker)."""


def backend_for_queue(queue: str) -> Backend:
    """The backend whose queue `queue` is (judge.cpu, judge.cuda.<gpu>, judge.npu.<soc>: `Track.queue_name`)."""
    track = find_track_by_queue(queue)
    if track is None:
        raise WorkerConfigError(f"unknown queue {queue!r}; queues are {queue_forms()}")
    return track.backend


def run_worker(
    settings: WorkerSettings, *, queue: str, name: str | None, concurrency: int, loglevel: str, reaper: bool
) -> None:
    """Start the worker (blocks until it is shut down)."""
    if settings.broker_url.startswith("memory://"):
        raise WorkerConfigError("a separate worker needs a real broker: set OPJUDGE_BROKER_URL=redis://host:6379/0 "
                                "(the embedded `opjudge serve` judges in its own process instead)")
    backend = backend_for_queue(queue)
    name = name or default_worker_name(queue)
    pinned = pin_device(backend, settings.device)
    if pinned:
        log.info("worker %s pinned to device %s: %s", name, settings.device, pinned)
    upgrade_database(settings)  # a worker may start before the API on a fresh database
    info = describe_worker(backend, WorkerContext(settings, name=name).host_config(backend), queue=queue)
    print(f"worker {name} on queue {queue}: device {info.get('device', '?')}; toolchain "
          f"{info.get('toolchain', '?')}; driver {info.get('driver') or '-'}; sandbox {info.get('sandbox', '?')}",
          flush=True)
    if settings.sandbox_mode == "strict" and info.get("sandbox") != "strict":
        # Every run would end as IE: refuse to start, and say what the probes found.
        found = "\n".join(f"  {k}: {v}" for k, v in info.items() if k.startswith("sandbox."))
        raise WorkerConfigError(f"OPJUDGE_SANDBOX_MODE=strict but this host gives {info.get('sandbox')!r}:\n{found}")
    if settings.memory_cgroup == "required" and info.get("memory_cgroup") == "unavailable":
        raise WorkerConfigError("OPJUDGE_MEMORY_CGROUP=required but this worker cannot make memory cgroups "
                                "(`opjudge doctor` says why; docs/operations.md, \"Memory cgroups\")")
    db = Database(settings)
    try:
        with db.session() as session:
            started = register_worker(session, name=name, queue=queue, info=info).started_at
            # Runs an earlier process of this name still holds: it is gone, so they go back to
            # pending and a reaper hands them out again (here at once, not at their deadline).
            released = release_runs_of_earlier_process(session, worker=name, started_before=started)
    finally:
        db.dispose()
    if released:
        log.warning("worker %s: runs %s were held by an earlier process of this name; put back to pending",
                    name, [r.run_id for r in released])

    app = make_celery(settings, ctx=WorkerContext(settings, name=name))
    # Heartbeat (and reaper) in the main process, with its own context and broker connection:
    # pool children never touch them.
    dispatcher = CeleryDispatcher(make_celery(settings, publisher=True)) if reaper else None
    monitor = WorkerMonitor(WorkerContext(settings, name=name), dispatcher=dispatcher, queue=queue, info=info)
    worker_ready.connect(lambda **_: monitor.start(), weak=False, dispatch_uid=f"opjudge-monitor-{name}")
    worker_shutting_down.connect(lambda **_: monitor.stop(timeout_s=2.0), weak=False,
                                 dispatch_uid=f"opjudge-monitor-stop-{name}")
    app.worker_main([
        "worker", "--queues", queue, "--hostname", name, "--concurrency", str(concurrency), "--pool", "prefork",
        "--loglevel", loglevel, "--without-gossip", "--without-mingle",
    ])  # fmt: skip
