"""Prometheus metrics at GET /metrics; docs/grafana-dashboard.json plots them
(docs/operations.md, "Metrics and the dashboard").

From the store, read at each scrape (so the workers' runs count, whichever process judged them):
- `opjudge_queue_runs{queue,status}`: runs pending, queued or running, per queue;
- `opjudge_runs_finished_total{kind,mode,backend,verdict}`: runs that ended ("mode" is "ranked"
  until the schema has run modes);
- `opjudge_judge_stage_seconds{stage}`: a histogram of how long each stage of a finished run took;
- `opjudge_workers{queue,state}` (alive or lost), `opjudge_worker_last_heartbeat_timestamp_seconds`
  and `opjudge_worker_oracle_cache_bytes{worker,queue}` (each worker's heartbeat reports it).
From this process: `opjudge_http_request_seconds{route,method,kind}`, a latency histogram with
kind "upload" (POST /api/v1/submissions), "api" or "page".

/metrics needs a bearer token: OPJUDGE_METRICS_TOKEN (for Prometheus) or an organiser's token.
"""

from __future__ import annotations

import hmac
import logging
import time
from collections.abc import Iterable, Iterator
from datetime import datetime

from fastapi import APIRouter, FastAPI, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Receive, Scope, Send

from api.settings import Settings
from api.store.db import Database
from api.store.enums import Role
from api.store.errors import AuthError, PermissionDeniedError
from api.store.metrics_queries import finished_runs, stage_durations
from api.store.tokens import authenticate
from api.store.types import utcnow
from api.store.workers import list_workers, queue_load

log = logging.getLogger("opjudge.metrics")

STAGE_BUCKETS_S = (0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800)
LATENCY_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
UPLOAD_ROUTE = ("POST", "/api/v1/submissions")

router = APIRouter(include_in_schema=False)


class StoreCollector(Collector):
    """Queue depth, finished runs, stage durations and workers, read from the store at each scrape."""

    def __init__(self, database: Database, settings: Settings) -> None:
        self.database = database
        self.lost_after_s = _lost_after_s(settings)

    def collect(self) -> Iterator[Metric]:
        with self.database.session(write=False) as session:
            yield self._queues(queue_load(session))
            yield self._finished(finished_runs(session))
            yield self._stages(stage_durations(session))
            yield from self._workers(list_workers(session), utcnow())

    @staticmethod
    def _queues(loads: Iterable) -> Metric:  # type: ignore[type-arg]
        family = GaugeMetricFamily("opjudge_queue_runs", "Runs pending, queued or running, per queue",
                                   labels=["queue", "status"])  # fmt: skip
        for load in loads:
            family.add_metric([load.queue, str(load.status)], load.runs)
        return family

    @staticmethod
    def _finished(rows: Iterable) -> Metric:  # type: ignore[type-arg]
        family = CounterMetricFamily("opjudge_runs_finished", "Runs that ended, by kind, mode, backend and verdict",
                                     labels=["kind", "mode", "backend", "verdict"])  # fmt: skip
        for row in rows:
            family.add_metric([row.kind, row.mode, row.backend, row.verdict], row.count)
        return family

    @staticmethod
    def _stages(runs: list[dict[str, float]]) -> Metric:
        family = HistogramMetricFamily("opjudge_judge_stage_seconds", "Time a finished run spent in each stage",
                                       labels=["stage"])  # fmt: skip
        stages = sorted({stage for run in runs for stage in run})
        for stage in stages:
            values = [run[stage] for run in runs if stage in run]
            buckets = [(str(bound), sum(1 for v in values if v <= bound)) for bound in STAGE_BUCKETS_S]
            buckets.append(("+Inf", len(values)))
            family.add_metric([stage], buckets, sum_value=sum(values))
        return family

    def _workers(self, workers: Iterable, now: datetime) -> Iterator[Metric]:  # type: ignore[type-arg]
        counts = GaugeMetricFamily("opjudge_workers", "Workers seen, alive or lost (missed heartbeats)",
                                   labels=["queue", "state"])  # fmt: skip
        beats = GaugeMetricFamily("opjudge_worker_last_heartbeat_timestamp_seconds",
                                  "When each worker last heartbeat (Unix time)", labels=["worker", "queue"])
        cache = GaugeMetricFamily("opjudge_worker_oracle_cache_bytes", "Size of each worker's oracle cache",
                                  labels=["worker", "queue"])  # fmt: skip
        tally: dict[tuple[str, str], int] = {}
        for worker in workers:
            alive = (now - worker.last_seen_at).total_seconds() <= self.lost_after_s
            key = (worker.queue, "alive" if alive else "lost")
            tally[key] = tally.get(key, 0) + 1
            beats.add_metric([worker.name, worker.queue], worker.last_seen_at.timestamp())
            if isinstance(worker.info.get("oracle_cache_bytes"), int):
                cache.add_metric([worker.name, worker.queue], worker.info["oracle_cache_bytes"])
        for (queue, state), count in sorted(tally.items()):
            counts.add_metric([queue, state], count)
        yield from (counts, beats, cache)


def _lost_after_s(settings: Settings) -> float:
    # Worker settings know the heartbeat; the API's plain Settings use the workers' defaults (3 x 10 s).
    return float(getattr(settings, "worker_lost_after_s", 30.0))


class LatencyMiddleware:
    """Times every HTTP request into `opjudge_http_request_seconds` by route template."""

    def __init__(self, app: ASGIApp, histogram: Histogram) -> None:
        self.app, self.histogram = app, histogram

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        try:
            await self.app(scope, receive, send)
        finally:
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            method = scope["method"]
            kind = "upload" if (method, route) == UPLOAD_ROUTE else "api" if route.startswith("/api/") else "page"
            if route != "/metrics":
                self.histogram.labels(route, method, kind).observe(time.perf_counter() - started)


def install_metrics(app: FastAPI, settings: Settings, database: Database) -> None:
    """A registry of this app's own (tests build many apps), the collector, the middleware and /metrics."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(StoreCollector(database, settings))
    latency = Histogram("opjudge_http_request_seconds", "HTTP request latency by route",
                        ["route", "method", "kind"], buckets=LATENCY_BUCKETS_S, registry=registry)  # fmt: skip
    app.state.metrics_registry = registry
    app.add_middleware(LatencyMiddleware, histogram=latency)
    app.include_router(router)


@router.get("/metrics")
def metrics(request: Request) -> Response:
    """The Prometheus text format; needs the metrics token or an organiser's token."""
    _authorise(request)
    return Response(generate_latest(request.app.state.metrics_registry), media_type=CONTENT_TYPE_LATEST,
                    headers={"Cache-Control": "no-store"})  # fmt: skip


def _authorise(request: Request) -> None:
    settings: Settings = request.app.state.settings
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise AuthError("missing token: send `Authorization: Bearer <OPJUDGE_METRICS_TOKEN or an admin token>`")
    expected = settings.metrics_token.get_secret_value() if settings.metrics_token is not None else ""
    if expected and hmac.compare_digest(token.encode(), expected.encode()):  # empty (unset in .env): admin only
        return
    throttle = request.app.state.auth_throttle
    client = request.client.host if request.client else "unknown"
    throttle.check(client)
    database: Database = request.app.state.database
    with database.session(write=False) as session:
        try:
            principal = authenticate(session, token=token, pepper=settings.pepper)
        except AuthError:
            throttle.failed(client)
            raise
    if principal.role is not Role.ADMIN:
        raise PermissionDeniedError("/metrics needs the metrics token or an admin token")
