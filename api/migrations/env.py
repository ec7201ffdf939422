"""Alembic environment: runs on the connection `upgrade_database` hands over (api/store/db.py)."""

from __future__ import annotations

from alembic import context

from api.store.models import Base

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through api.store.db.upgrade_database(settings)")

# render_as_batch: SQLite cannot ALTER most things; batch mode rebuilds the table instead.
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
