"""A database that cannot be reached answers 503 with a reason; service resumes when it is back."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from fastapi.testclient import TestClient

from api.settings import Settings
from api.store.db import Database, upgrade_database
from api.web.app import create_app
from tests.api.conftest import Clock, Contest, RecordingDispatcher, make_contest
from tests.api.helpers import upload
from tests.api.tcpproxy import TcpProxy

SECRETS = {"judge_secret": "judge-secret-for-tests-0123456789", "token_pepper": "token-pepper-for-tests-0123456789"}


def _client(url: str) -> TestClient:
    settings = Settings(database_url=url, db_pool_timeout_s=2, **SECRETS)  # type: ignore[arg-type]
    return TestClient(create_app(settings, RecordingDispatcher(), pages=False))


def test_closed_postgres_port_answers_503() -> None:
    with _client("postgresql+psycopg://postgres@127.0.0.1:1/opjudge") as client:
        response = client.get("/api/v1/competitions/cup/leaderboard")
        assert response.status_code == 503 and response.headers["retry-after"] == "5"
        assert response.json()["detail"] == "the database is unavailable (OperationalError); retry shortly"
        response = upload(client, {"Authorization": "Bearer opj_team_whatever"})
        assert response.status_code == 503


def test_missing_sqlite_file_answers_503(tmp_path: Path) -> None:
    with _client(f"sqlite:///{tmp_path / 'gone' / 'deeper' / 'opjudge.db'}") as client:
        response = client.get("/api/v1/competitions/cup")
        assert response.status_code == 503 and "database is unavailable" in response.json()["detail"]


@pytest.mark.postgres
def test_postgres_going_away_and_coming_back(database_url: str, clock: Clock) -> None:
    if not database_url.startswith("postgresql"):
        pytest.skip("the restart is played on PostgreSQL")
    parts = urlsplit(database_url)
    proxy = TcpProxy(parts.hostname or "127.0.0.1", parts.port or 5432)
    proxy.start()
    netloc = f"{parts.username}@127.0.0.1:{proxy.port}" if parts.username else f"127.0.0.1:{proxy.port}"
    settings = Settings(database_url=urlunsplit((parts.scheme, netloc, parts.path, "", "")), db_pool_timeout_s=2,
                        **SECRETS)  # type: ignore[arg-type]  # fmt: skip
    db = Database(settings)
    upgrade_database(settings, database=db)
    with db.session() as session:
        contest: Contest = make_contest(session, settings)
    try:
        with TestClient(create_app(settings, RecordingDispatcher(), database=db, clock=clock, pages=False)) as client:
            first = upload(client, contest.auth("alpha"))
            assert first.status_code == 202
            proxy.stop()
            down = client.get("/api/v1/submissions", headers=contest.auth("alpha"))
            assert down.status_code == 503 and "unavailable" in down.json()["detail"]
            assert upload(client, contest.auth("bravo")).status_code == 503
            proxy.start()
            back = client.get("/api/v1/submissions", headers=contest.auth("alpha"))
            assert back.status_code == 200 and [s["id"] for s in back.json()] == [first.json()["id"]]
            clock.advance(120)
            assert upload(client, contest.auth("bravo")).status_code == 202
    finally:
        proxy.stop()
        db.dispose()


def test_postgres_url_in_env_is_well_formed() -> None:
    url = os.environ.get("OPJUDGE_TEST_POSTGRES_URL")
    if url is None:
        pytest.skip("set OPJUDGE_TEST_POSTGRES_URL")
    assert url.startswith("postgresql+psycopg://"), "use the psycopg (v3) driver: postgresql+psycopg://..."
