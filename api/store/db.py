"""Engine, sessions and migrations. The store is the only code that imports SQLAlchemy.

SQLite runs in WAL mode with a busy timeout, and write sessions start with
`BEGIN IMMEDIATE`: a deferred transaction that reads and then writes can fail
at once when another writer committed in between, which a busy timeout cannot
fix. PostgreSQL serialises what must be serialised with row locks instead
(see `lock_row`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event, select
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from sqlalchemy.orm import Session, sessionmaker

from api.settings import Settings

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"

# What the API answers 503 for: the database cannot be reached or the pool is exhausted.
DB_UNAVAILABLE_ERRORS: tuple[type[Exception], ...] = (OperationalError, PoolTimeoutError)

__all__ = ["DB_UNAVAILABLE_ERRORS", "Database", "Session", "db_unavailable_reason", "upgrade_database"]


def make_engine(settings: Settings) -> Engine:
    """The engine for `settings.database_url`, pinging connections so a restarted database recovers."""
    url = settings.database_url
    kwargs: dict[str, Any] = {"pool_pre_ping": True}
    if url.startswith("sqlite"):
        if ":memory:" in url or url in ("sqlite://", "sqlite:///"):
            raise ValueError("an in-memory SQLite database cannot be shared between threads; use a file")
        _ensure_sqlite_dir(url)
        kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
    kwargs.update(
        pool_size=settings.db_pool_size,
        max_overflow=settings.db_max_overflow,
        pool_timeout=settings.db_pool_timeout_s,
    )
    if url.startswith("postgresql"):
        kwargs["connect_args"] = {"connect_timeout": 5}
    engine = create_engine(url, **kwargs)
    if engine.dialect.name == "sqlite":
        _sqlite_events(engine)
    return engine


def _ensure_sqlite_dir(url: str) -> None:
    path = url.split("///", 1)[-1].split("?", 1)[0]
    if path:
        parent = Path(path).parent
        # Only create below an existing parent (e.g. var/): a typo'd path should fail, not sprawl.
        if parent.parent.is_dir():
            parent.mkdir(exist_ok=True)


def _sqlite_events(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event emit BEGIN itself (pysqlite's own is always deferred).
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Any) -> None:
        immediate = conn.get_execution_options().get("opjudge_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


class Database:
    """One engine and its session factories; built once per process from the settings."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.engine = make_engine(settings)
        writer = self.engine.execution_options(opjudge_write=True)
        self._read = sessionmaker(self.engine, expire_on_commit=False, autoflush=False)
        self._write = sessionmaker(writer, expire_on_commit=False, autoflush=False)

    def new_session(self, *, write: bool = True) -> Session:
        """A session the caller closes. `write=False` for read-only work (no lock on SQLite)."""
        return (self._write if write else self._read)()

    @contextmanager
    def session(self, *, write: bool = True) -> Iterator[Session]:
        """A session closed on exit; store functions that change data commit themselves."""
        session = self.new_session(write=write)
        try:
            yield session
        finally:
            session.close()

    def dispose(self) -> None:
        self.engine.dispose()


def lock_row(session: Session, model: Any, row_id: int) -> None:
    """Serialise writers on one row (PostgreSQL `FOR UPDATE`; SQLite writers are serial already)."""
    if session.get_bind().dialect.name != "sqlite":
        session.execute(select(model.id).where(model.id == row_id).with_for_update())


def db_unavailable_reason(error: Exception) -> str:
    """A short, safe sentence for a 503: what failed, without connection strings or passwords."""
    if isinstance(error, PoolTimeoutError):
        return "the database is overloaded (no free connection); retry shortly"
    original = getattr(error, "orig", None) if isinstance(error, DBAPIError) else None
    kind = type(original).__name__ if original is not None else type(error).__name__
    return f"the database is unavailable ({kind}); retry shortly"


def alembic_config(connection: Any) -> Config:
    """Alembic configured in code (no alembic.ini): our scripts, run on `connection`."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["connection"] = connection
    return config


def upgrade_database(settings: Settings, *, database: Database | None = None) -> None:
    """Run every migration up to the newest (on start). Safe to run concurrently."""
    owned = database is None
    db = database or Database(settings)
    try:
        with db.engine.begin() as connection:
            if connection.dialect.name == "postgresql":
                # Two processes starting at once must not both create the tables.
                connection.exec_driver_sql("SELECT pg_advisory_xact_lock(724011)")
            command.upgrade(alembic_config(connection), "head")
    finally:
        if owned:
            db.dispose()
