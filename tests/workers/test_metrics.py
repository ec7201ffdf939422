"""GET /metrics: its values after runs judged for real by the worker code."""

from __future__ import annotations

import re
import time

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from pydantic import SecretStr

from api.store.seed import DemoSeed
from api.web.app import create_app
from judge.oracle_cache import cache_usage
from workers.context import WorkerContext
from workers.reaper import WorkerMonitor
from workers.tasks import judge_run

from .conftest import FIXTURES, REPO


class _NoBroker:
    def enqueue(self, run_id: int, queue: str, priority: int = 6) -> None:
        pass


def _samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}  # fmt: skip


def _value(samples, name: str, **labels: str) -> float:  # type: ignore[no-untyped-def]
    return samples[(name, frozenset(labels.items()))]


@pytest.mark.slow
def test_metrics_after_judged_runs(ctx: WorkerContext, demo: DemoSeed, submit) -> None:  # type: ignore[no-untyped-def]
    accepted, wrong = submit(), submit((FIXTURES / "wrong_no_relu.cpp").read_bytes())
    assert judge_run(ctx, accepted.run_id).verdict.value == "AC"
    assert judge_run(ctx, wrong.run_id).verdict.value == "WA"
    submit()  # one more, left pending on judge.cpu
    monitor = WorkerMonitor(ctx, dispatcher=None, queue="judge.cpu", info={"host": "test"})
    monitor.heartbeat()  # registers (first beat of a worker the store does not know)
    monitor.heartbeat()  # reports the oracle cache's size
    cache = cache_usage(ctx.settings.cache_dir / "oracle")
    app = create_app(ctx.settings, _NoBroker(), database=ctx.db, pages=False)
    with TestClient(app) as client:
        assert client.get("/metrics").status_code == 401
        assert client.get("/metrics", headers={"Authorization": f"Bearer {demo.reviewer_token}"}).status_code == 403
        client.get("/api/v1/me", headers={"Authorization": f"Bearer {demo.admin_token}"})
        answer = client.get("/metrics", headers={"Authorization": f"Bearer {demo.admin_token}"})
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain")
    samples = _samples(answer.text)
    finished = "opjudge_runs_finished_total"
    assert _value(samples, finished, kind="judge", mode="ranked", backend="cpu", verdict="AC") == 1
    assert _value(samples, finished, kind="judge", mode="ranked", backend="cpu", verdict="WA") == 1
    assert _value(samples, "opjudge_queue_runs", queue="judge.cpu", status="pending") == 1
    assert _value(samples, "opjudge_judge_stage_seconds_count", stage="checking") == 2
    assert _value(samples, "opjudge_judge_stage_seconds_sum", stage="building") > 0
    assert _value(samples, "opjudge_workers", queue="judge.cpu", state="alive") == 1
    beat = _value(samples, "opjudge_worker_last_heartbeat_timestamp_seconds", worker=ctx.name, queue="judge.cpu")
    assert abs(beat - time.time()) < 120
    assert cache.entries > 0  # the two runs' correctness oracles were cached...
    assert _value(samples, "opjudge_worker_oracle_cache_bytes", worker=ctx.name, queue="judge.cpu") == cache.bytes
    me = _value(samples, "opjudge_http_request_seconds_count", route="/api/v1/me", method="GET", kind="api")
    assert me == 1
    # Every series the Grafana dashboard plots is one /metrics serves.
    dashboard = (REPO / "docs" / "grafana-dashboard.json").read_text()
    plotted = set(re.findall(r"opjudge_[a-z_]+", dashboard)) - {"opjudge_overview"}
    served = {name for name, _ in samples}
    assert plotted and plotted <= served, plotted - served


def test_the_metrics_token_is_enough(ctx: WorkerContext, demo: DemoSeed) -> None:
    settings = ctx.settings.model_copy(update={"metrics_token": SecretStr("prometheus-scrape-token-0123456789")})
    app = create_app(settings, _NoBroker(), database=ctx.db, pages=False)
    with TestClient(app) as client:
        ok = client.get("/metrics", headers={"Authorization": "Bearer prometheus-scrape-token-0123456789"})
        assert ok.status_code == 200 and "opjudge_queue_runs" in ok.text
        assert client.get("/metrics", headers={"Authorization": "Bearer opj_admin_wrong"}).status_code == 401


def test_an_empty_metrics_token_opens_nothing(ctx: WorkerContext, demo: DemoSeed) -> None:
    # compose passes OPJUDGE_METRICS_TOKEN="" when .env leaves it out: organisers' tokens only.
    settings = ctx.settings.model_copy(update={"metrics_token": SecretStr("")})
    app = create_app(settings, _NoBroker(), database=ctx.db, pages=False)
    with TestClient(app) as client:
        assert client.get("/metrics", headers={"Authorization": "Bearer x"}).status_code == 401
        assert client.get("/metrics", headers={"Authorization": f"Bearer {demo.admin_token}"}).status_code == 200
