"""The workers' settings: the service's `Settings` plus the knobs only workers read.

Same `OPJUDGE_` environment prefix, built once at start-up and passed down
(nothing reads the environment later, so every part sees the same values). A `WorkerSettings`
is a `Settings`, so the API and the store accept it unchanged.
"""

from __future__ import annotations

from pydantic import Field, field_validator

from api.settings import Settings
from judge.backends import CaseSet


class WorkerSettings(Settings):
    """Everything a worker (Celery or in-process) is configured with."""

    # Restrict which case sets a run judges, e.g. "tests" for fast service tests. Empty: every
    # set the run's kind judges (judge/rejudge: tests, benchmarks, private; reproduction: the timed two).
    run_case_sets: str = ""

    # Timing budget per case and kernel; None: the track's (2 s on the CPU). Tests shorten it.
    case_time_budget_s: float | None = Field(default=None, gt=0)

    # A timing phase on a disturbed host is run again (judge/retime.py): phases in all, and the first pause.
    disturbed_timing_attempts: int = Field(default=3, ge=1, le=6)
    disturbed_backoff_s: float = Field(default=15.0, ge=0)
    # A fresh pair of runner children every this many timed cases (judge/timing_children.py); None:
    # the track's (one pair a group), 0: one pair a group. Costs a child start-up a pair (docs/benchmarks.md).
    cases_per_timing_pair: int | None = Field(default=None, ge=0)
    # A run whose last timing attempt was disturbed is marked, and stays out of a final ranking. Off only
    # where every timing is that short (the test suite's 0.1 s budgets), which always looks disturbed: the
    # reason is then kept in the run's conditions as `disturbed_unmarked` (judge/conditions.py).
    mark_disturbed_runs: bool = True

    heartbeat_interval_s: float = Field(default=10.0, gt=0)
    reaper_interval_s: float = Field(default=15.0, gt=0)
    # A worker that missed this many heartbeats in a row is lost (its host died or was cut off):
    # the reaper puts its runs back at once instead of at their deadline. Every host must use the
    # same heartbeat interval, and their clocks must agree to well within one (NTP).
    lost_after_missed_heartbeats: int = Field(default=3, ge=2)
    # A queued run the broker never delivered for this long is put on the broker again
    # (Redis restarted without its data). Duplicates are harmless: the claim is compare-and-set.
    requeue_queued_after_s: float = Field(default=2 * 3600.0, gt=0)

    # Internal errors: claims per run before it ends as IE, and the first back-off (doubling).
    max_attempts: int = Field(default=3, ge=1)
    retry_backoff_s: float = Field(default=30.0, ge=0)
    retry_backoff_max_s: float = Field(default=600.0, ge=0)

    # The oracle cache (judge/oracle_cache.py): each run's salt makes its inputs new, so an entry is
    # read again only when the same run is judged again (IE retry, lost worker, redelivery). Kept
    # that long (None: `oracle_retry_window_s`) and at most this big (0: no oracle cache at all).
    oracle_cache_max_bytes: int = Field(default=512 * 1024 * 1024, ge=0)
    oracle_cache_max_age_s: float | None = Field(default=None, gt=0)

    # Broker: how long to wait for Redis before an upload leaves its run pending.
    broker_connect_timeout_s: float = Field(default=3.0, gt=0)

    # The one accelerator this worker judges on (OPJUDGE_DEVICE): nvidia-smi's index or a GPU UUID
    # on a CUDA queue, the device id on an NPU queue. Unset: a CUDA worker keeps the GPU view it
    # was started with (CUDA_VISIBLE_DEVICES) and uses the first GPU; an NPU worker uses device 0.
    device: str | None = Field(default=None, min_length=1, pattern=r"^[A-Za-z0-9:_-]+$")

    @field_validator("run_case_sets")
    @classmethod
    def _known_sets(cls, value: str) -> str:
        # A comma list (OPJUDGE_RUN_CASE_SETS=tests,benchmarks): checked here so a typo fails at start.
        for part in _parts(value):
            if part not in {s.value for s in CaseSet}:
                raise ValueError(f"unknown case set {part!r}; sets: {', '.join(s.value for s in CaseSet)}")
        return value

    @property
    def case_sets_override(self) -> tuple[CaseSet, ...]:
        """The sets OPJUDGE_RUN_CASE_SETS names; empty when unset."""
        return tuple(CaseSet(part) for part in _parts(self.run_case_sets))

    @property
    def oracle_cache_age_s(self) -> float:
        """How long an oracle entry is kept: as set, or as long as a retry of its run can come."""
        if self.oracle_cache_max_age_s is not None:
            return self.oracle_cache_max_age_s
        return float(self.max_attempts * (self.run_deadline_s + self.retry_backoff_max_s))

    @property
    def worker_lost_after_s(self) -> float:
        """A worker whose last heartbeat is older than this is lost."""
        return self.heartbeat_interval_s * self.lost_after_missed_heartbeats

    @property
    def visibility_timeout_s(self) -> float:
        """Redis hands an unacknowledged task to another worker after this long.

        Longer than a run's deadline, so a redelivery never takes a run from a
        worker that is still within its time (the reaper handles late ones).
        """
        return float(self.run_deadline_s) + 300.0

    @property
    def task_time_limit_s(self) -> float:
        """Celery stops a task that runs this long: past the run's deadline (the reaper has
        given the run to another worker by then) and before the visibility timeout."""
        return float(self.run_deadline_s) + 120.0


def _parts(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]
