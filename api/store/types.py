"""Column types shared by the models: UTC datetimes, enums stored as plain strings, the integer range."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import DateTime, Enum, String, TypeDecorator
from sqlalchemy.engine import Dialect

from judge.backends import Backend

# The largest value an Integer column holds on both databases (int4 on PostgreSQL; SQLite's are wider).
# Ids and settings above it are refused at the edge: PostgreSQL would fail the query instead.
INT_MAX = 2**31 - 1


class UTCDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes in Python; timestamptz on PostgreSQL, naive UTC text on SQLite.

    SQLite has no time zones, and comparing an aware with a naive datetime raises,
    so everything is normalised to UTC on the way in and tagged on the way out.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r} given to the store; pass an aware UTC time")
        value = as_utc(value)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def as_utc(moment: datetime) -> datetime:
    """An aware time in UTC; OverflowError (saying so) when that falls outside years 1-9999.

    "0001-01-01T00:00:00+05:00" is a valid time whose UTC form is in year 0, which
    Python's datetime cannot hold: `astimezone` would raise a bare OverflowError.
    """
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        raise OverflowError(f"{moment.isoformat()} is outside the years 1 to 9999 once converted to UTC") from None


def str_enum(enum: type[StrEnum], length: int = 16) -> Enum:
    """A StrEnum stored as VARCHAR of its values (no native PostgreSQL enum type to migrate)."""
    values: Any = lambda e: [m.value for m in e]  # noqa: E731 - SQLAlchemy wants a callable
    return Enum(enum, native_enum=False, create_constraint=False, length=length, values_callable=values)


class BackendName(TypeDecorator[Backend]):
    """A backend as VARCHAR(16) of its name, as `str_enum` stored it when Backend was an enum (so no
    migration): the names are the registered tracks' (judge/tracks/__init__.py), checked both ways."""

    impl = String(16)
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        return None if value is None else Backend(value).value

    def process_result_value(self, value: str | None, dialect: Dialect) -> Backend | None:
        return None if value is None else Backend(value)


def utcnow() -> datetime:
    return datetime.now(UTC)
