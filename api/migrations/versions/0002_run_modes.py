"""Run modes (docs/rules.md "Run modes"): each submission's mode, the test and benchmark quotas,
each run's priority on its queue; and whether teams may read the baseline's source.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Every earlier submission was a full, ranked judging.
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("mode", sa.String(length=16), nullable=False, server_default="ranked"))
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("priority", sa.Integer(), nullable=False, server_default="6"))
    with op.batch_alter_table("competitions") as batch:
        batch.add_column(sa.Column("mode_quotas", sa.JSON(), nullable=False, server_default=sa.text("'{}'")))
        batch.add_column(sa.Column("baseline_public", sa.Boolean(), nullable=False, server_default=sa.true()))


def downgrade() -> None:
    with op.batch_alter_table("competitions") as batch:
        batch.drop_column("baseline_public")
        batch.drop_column("mode_quotas")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("priority")
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("mode")
