"""Judge settings per competition: the NPU track's clock (events or profiler device time) and its
cap on launches per timed call (docs/npu-worker.md, "How a call is judged and timed").

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Empty: every earlier competition keeps the worker's default clock (NPU events).
    with op.batch_alter_table("competitions") as batch:
        batch.add_column(sa.Column("judge_settings", sa.JSON(), nullable=False, server_default=sa.text("'{}'")))


def downgrade() -> None:
    with op.batch_alter_table("competitions") as batch:
        batch.drop_column("judge_settings")
