"""Fixtures for end-to-end tests with real processes: a fresh PostgreSQL database per module,
a dedicated Redis database, and a small client for the API.

PostgreSQL comes from OPJUDGE_TEST_POSTGRES_URL (a server with trust auth; each module
creates and drops its own database), Redis from OPJUDGE_TEST_REDIS_URL (use a database
number nothing else uses, e.g. redis://127.0.0.1:6379/15: it is flushed). Under pytest-xdist
worker gwN takes the database N below that one (`worker_redis_url`).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg
import pytest
import redis

from tests.e2e.services import Process, wait_until

REPO = Path(__file__).resolve().parents[2]
BASELINE = REPO / "reference_kernels" / "add_mul_relu" / "cpu" / "baseline.cpp"
FIXTURES = REPO / "tests" / "submissions" / "add_mul_relu" / "cpu"
FINISHED = ("done", "failed")


@contextmanager
def fresh_database() -> Iterator[str]:
    """A new database on the test PostgreSQL server (OPJUDGE_TEST_POSTGRES_URL), dropped on exit."""
    base = os.environ.get("OPJUDGE_TEST_POSTGRES_URL")
    if not base:
        pytest.skip("set OPJUDGE_TEST_POSTGRES_URL")
    parts = urlsplit(base)
    name = f"opjudge_e2e_{uuid.uuid4().hex[:10]}"
    admin_dsn = urlunsplit(("postgresql", parts.netloc, parts.path or "/postgres", "", ""))
    with psycopg.connect(admin_dsn, autocommit=True, connect_timeout=10) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(("postgresql+psycopg", parts.netloc, f"/{name}", parts.query, ""))
    finally:
        with psycopg.connect(admin_dsn, autocommit=True, connect_timeout=10) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    """A fresh database for the module."""
    with fresh_database() as url:
        yield url


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    """The dedicated Redis database, flushed before and after the module."""
    base = os.environ.get("OPJUDGE_TEST_REDIS_URL")
    if not base:
        pytest.skip("set OPJUDGE_TEST_REDIS_URL")
    url = worker_redis_url(base, os.environ.get("PYTEST_XDIST_WORKER", ""))
    client = redis.Redis.from_url(url, socket_connect_timeout=5)
    client.flushdb()
    yield url
    client.flushdb()
    client.close()


def worker_redis_url(base: str, worker: str) -> str:
    """The Redis database of one pytest-xdist worker: gw0 takes the given database, gw1 the one
    below it, and so on, so two workers never flush each other's queues (no worker: the given one)."""
    parts = urlsplit(base)
    number = int(parts.path.strip("/") or 0)
    index = int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else 0
    if index > number:
        raise ValueError(f"OPJUDGE_TEST_REDIS_URL's database {number} leaves no database for xdist worker {worker}; "
                         "give a higher one (e.g. /15)")
    return urlunsplit((parts.scheme, parts.netloc, f"/{number - index}", parts.query, parts.fragment))


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("logs")


class Api:
    """The API over HTTP, as a team, reviewer or admin would call it."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.http = httpx.Client(base_url=base, timeout=30)

    def call(self, method: str, path: str, token: str | None = None, **kwargs: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return self.http.request(method, path, headers=headers, **kwargs)

    def upload(self, token: str, source: bytes, *, name: str = "kernel.cpp",
               problem: str = "add_mul_relu") -> httpx.Response:
        return self.call("POST", "/api/v1/submissions", token, data={"problem": problem, "backend": "cpu"},
                         files=[("files", (name, source, "text/x-c++src"))])

    def submission(self, token: str, submission_id: int | str) -> dict[str, Any]:
        response = self.call("GET", f"/api/v1/submissions/{submission_id}", token)
        response.raise_for_status()
        return dict(response.json())

    def wait_finished(self, token: str, submission_id: int | str, *, timeout_s: float = 150,
                      logs: Sequence[Process] = ()) -> dict[str, Any]:
        def finished() -> dict[str, Any] | None:
            detail = self.submission(token, submission_id)
            return detail if detail["submission"]["status"] in FINISHED else None

        return dict(wait_until(f"submission {submission_id} to be judged", finished, timeout_s=timeout_s,
                               interval_s=0.5, log=lambda: "\n".join(p.log() for p in logs)))

    def close(self) -> None:
        self.http.close()
