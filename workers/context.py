"""What a worker process holds: its settings, its name and, built lazily, its database.

The database is built on first use in the process that uses it: a prefork pool
child must not share the parent's connections, so the Celery app resets it after
each fork (workers/celery_app.py).
"""

from __future__ import annotations

import dataclasses
import os
import socket
import threading
from collections.abc import Mapping, MutableMapping
from typing import Any

from api.store.db import Database
from judge.backends import Backend
from judge.host import host_from_env
from judge.host_config import HostConfig
from judge.tracks import get_track
from workers.settings import WorkerSettings


def default_worker_name(queue: str) -> str:
    """`<queue>@<host>.<pid>`: unique per process, readable in Flower and on the runs it claims."""
    return f"{queue}@{socket.gethostname()}.{os.getpid()}"


def pin_device(backend: Backend, device: str | None, environ: MutableMapping[str, str] = os.environ) -> dict[str, str]:
    """Make this worker, its host probe and its pool see only `device` (OPJUDGE_DEVICE); what was set.

    Called before anything starts CUDA or CANN, which read these variables once. The runner
    children then get the same view (judge/track_settings/cuda.py: `child_environment`), so the kernel, the
    inputs the checker makes again and the oracle all run on this worker's device and on no
    other worker's. What to set is the track's to say (judge/tracks/__init__.py, `pin_environment`).
    """
    pin = None if device is None else get_track(backend).pin_environment
    if device is None or pin is None:
        return {}
    pinned = pin(device)
    environ.update(pinned)
    return pinned


class WorkerContext:
    """Settings, identity and a lazily built `Database` for one worker process."""

    def __init__(self, settings: WorkerSettings, *, name: str | None = None) -> None:
        self.settings = settings
        self.name = name or f"inprocess@{socket.gethostname()}.{os.getpid()}"
        self._db: Database | None = None
        self._lock = threading.Lock()

    @property
    def db(self) -> Database:
        """This process's database (built on first use)."""
        with self._lock:
            if self._db is None:
                self._db = Database(self.settings)
            return self._db

    def forget_database(self) -> None:
        """After a fork: drop the parent's engine without closing the connections it still uses."""
        with self._lock:
            if self._db is not None:
                self._db.engine.dispose(close=False)
            self._db = None

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.dispose()
            self._db = None

    def host_config(self, backend: Backend, judge_settings: Mapping[str, Any] | None = None) -> HostConfig:
        """The `HostConfig` a run on `backend` is judged with: this host's paths and the track's limits.

        `judge_settings`: the competition's (ClaimedRun.judge_settings); a setting it sets wins over this
        worker's environment (OPJUDGE_NPU_TIMING, OPJUDGE_NPU_MAX_LAUNCHES), which is only the default."""
        s = self.settings
        s.work_root.mkdir(parents=True, exist_ok=True)
        s.cache_dir.mkdir(parents=True, exist_ok=True)
        limits = get_track(backend).limits
        if s.case_time_budget_s is not None:
            limits = dataclasses.replace(limits, case_time_budget_s=s.case_time_budget_s)
        limits = dataclasses.replace(limits, disturbed_timing_attempts=s.disturbed_timing_attempts,
                                     disturbed_backoff_s=s.disturbed_backoff_s)
        if s.cases_per_timing_pair is not None:
            limits = dataclasses.replace(limits, cases_per_timing_pair=s.cases_per_timing_pair)
        # A worker's device is its track's setting where the track names one (the NPU's: OPJUDGE_DEVICE,
        # `--device`); else it is the worker's environment, pinned by `pin_device` (a CUDA worker's GPU view).
        setting = get_track(backend).device_setting
        own = {setting: s.device or "0"} if setting is not None else {}
        return host_from_env(
            os.environ,
            backend=backend,
            competition=judge_settings,
            overrides=own,
            work_root=s.work_root,
            limits=limits,
            sandbox_mode=s.sandbox_mode,
            memory_cgroup=s.memory_cgroup,
            cache_dir=s.cache_dir,
            oracle_cache_max_bytes=s.oracle_cache_max_bytes,
            oracle_cache_max_age_s=s.oracle_cache_age_s,
            problems_dir=s.problems_dir,
            reference_dir=s.reference_dir,
        )  # the toolchains' locations are the tracks' settings, read from the environment there
