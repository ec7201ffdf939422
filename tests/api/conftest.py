"""Fixtures for the store and the API: a fresh database (SQLite, and PostgreSQL when
OPJUDGE_TEST_POSTGRES_URL is set), settings, a movable clock, dispatchers, a seeded contest.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from fastapi.testclient import TestClient

from api.dispatch import DispatchUnavailable
from api.settings import Settings
from api.store.competitions import attach_problem, create_competition
from api.store.db import Database, Session, upgrade_database
from api.store.enums import Role
from api.store.teams import add_reviewer, create_team, set_finalists
from api.store.tokens import issue_token
from api.web.app import create_app
from judge.backends import Backend
from judge.problem import load_problem

START = datetime(2030, 5, 1, 8, 0, tzinfo=UTC)
PROBLEMS = ("add_mul_relu", "sparse_flash_attention_grad")
SECRETS = {"judge_secret": "judge-secret-for-tests-0123456789", "token_pepper": "token-pepper-for-tests-0123456789"}


class Clock:
    """A clock tests move by hand."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> datetime:
        self.now += timedelta(seconds=seconds)
        return self.now


class RecordingDispatcher:
    """Remembers what would have gone to the broker."""

    def __init__(self) -> None:
        self.sent: list[tuple[int, str]] = []

    def enqueue(self, run_id: int, queue: str, priority: int = 6) -> None:
        self.sent.append((run_id, queue))


class DownDispatcher:
    """A broker that is down (Redis unreachable)."""

    def __init__(self) -> None:
        self.attempts = 0

    def enqueue(self, run_id: int, queue: str, priority: int = 6) -> None:
        self.attempts += 1
        raise DispatchUnavailable("Error 111 connecting to 127.0.0.1:6379. Connection refused.")


def _admin_dsn(base: str) -> str:
    parts = urlsplit(base)
    return urlunsplit(("postgresql", parts.netloc, parts.path or "/postgres", "", ""))


def _migrate(url: str, folder: Path) -> None:
    settings = Settings(database_url=url, judge_secret=SECRETS["judge_secret"], token_pepper=SECRETS["token_pepper"],
                        work_root=folder / "work", cache_dir=folder / "cache")
    db = Database(settings)
    try:
        upgrade_database(settings, database=db)
    finally:
        db.dispose()


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file migrated to head once per session; each test's database starts as a copy.
    Every migration runs from an empty database here, once per dialect, and
    test_setup.py::test_migrations_match_the_models_and_rerun_safely compares the result with the models."""
    folder = tmp_path_factory.mktemp("migrated-sqlite")
    path = folder / "template.db"
    _migrate(f"sqlite:///{path}", folder)
    leftovers = [p.name for p in folder.glob("template.db-*")]
    assert not leftovers, f"SQLite left {leftovers} beside the template (a copy of the file alone would lose them)"
    return path


@pytest.fixture(scope="session")
def migrated_postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The name of a PostgreSQL database migrated to head once per session, the template of each
    test's database (CREATE DATABASE ... TEMPLATE copies it in a fraction of the migrations' time)."""
    base = os.environ.get("OPJUDGE_TEST_POSTGRES_URL")
    if not base:
        pytest.skip("set OPJUDGE_TEST_POSTGRES_URL")
    parts = urlsplit(base)
    name = f"opjudge_template_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(_admin_dsn(base), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        _migrate(urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, "")),
                 tmp_path_factory.mktemp("migrated-postgres"))
        yield name
    finally:
        with psycopg.connect(_admin_dsn(base), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _postgres_database(template: str) -> Iterator[str]:
    base = os.environ.get("OPJUDGE_TEST_POSTGRES_URL")
    if not base:
        pytest.skip("set OPJUDGE_TEST_POSTGRES_URL")
    parts = urlsplit(base)
    name = f"opjudge_test_{uuid.uuid4().hex[:12]}"
    admin_dsn = _admin_dsn(base)
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    try:
        yield urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, ""))
    finally:
        with psycopg.connect(admin_dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh database of this test's own, at the newest migration: a copy of the session's
    migrated SQLite file, or a PostgreSQL database created from the session's migrated template
    and dropped here. `upgrade_database` on it is the no-op a restarted server runs."""
    if request.param == "sqlite":
        path = tmp_path / "opjudge.db"
        shutil.copyfile(request.getfixturevalue("migrated_sqlite"), path)
        yield f"sqlite:///{path}"
    else:
        yield from _postgres_database(request.getfixturevalue("migrated_postgres"))


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return Settings(
        database_url=database_url,
        **SECRETS,
        work_root=tmp_path / "work",
        cache_dir=tmp_path / "cache",
        db_pool_size=5,
        db_max_overflow=5,
        board_cache_ttl_s=0,  # tests look at the board right after changing it
    )


@pytest.fixture
def database(settings: Settings) -> Iterator[Database]:
    db = Database(settings)
    upgrade_database(settings, database=db)
    yield db
    db.dispose()


@pytest.fixture
def session(database: Database) -> Iterator[Session]:
    with database.session() as s:
        yield s


@pytest.fixture
def clock() -> Clock:
    return Clock(START + timedelta(hours=1))


@pytest.fixture
def dispatcher() -> RecordingDispatcher:
    return RecordingDispatcher()


@dataclass
class Contest:
    slug: str
    team_ids: dict[str, int]
    tokens: dict[str, str]  # "alpha", "bravo", "charlie", "admin", "reviewer"
    reviewer_id: int

    def auth(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"}


def make_contest(session: Session, settings: Settings, *, slug: str = "cup", teams: tuple[str, ...] = ()) -> Contest:
    """A competition open from START for a day, both problems on the CPU, teams, an admin, a reviewer."""
    now = START
    create_competition(
        session, slug=slug, title="Test cup", starts_at=START, ends_at=START + timedelta(days=1), actor=None,
        now=now, quota_per_day=5, min_interval_s=60, max_in_flight=2,
    )  # fmt: skip
    for name in PROBLEMS:
        problem = load_problem(name, settings.problems_dir, settings.reference_dir)
        attach_problem(session, competition=slug, problem=problem, backends=[Backend.CPU], actor=None, now=now)
    team_ids, tokens = {}, {}
    for name in teams or ("alpha", "bravo", "charlie"):
        team, token = create_team(session, competition=slug, name=name, pepper=settings.pepper, actor=None, now=now)
        team_ids[name], tokens[name] = team.id, token.token
    set_finalists(session, competition=slug, team_ids=list(team_ids.values()), actor=None, now=now)
    reviewer, token = add_reviewer(session, competition=slug, name="rita", pepper=settings.pepper, actor=None, now=now)
    tokens["reviewer"] = token.token
    tokens["admin"] = issue_token(session, pepper=settings.pepper, role=Role.ADMIN, actor=None, now=now).token
    return Contest(slug, team_ids, tokens, reviewer.id)


@pytest.fixture
def contest(session: Session, settings: Settings) -> Contest:
    return make_contest(session, settings)


@pytest.fixture
def client(
    settings: Settings, database: Database, dispatcher: RecordingDispatcher, clock: Clock
) -> Iterator[TestClient]:
    app = create_app(settings, dispatcher, database=database, clock=clock, pages=False)
    with TestClient(app) as test_client:
        yield test_client
