"""Runs timed on a disturbed host that stayed disturbed after re-timing: the reason, shown on the
report, the boards, the API and the exports, and left out of a final ranking (docs/rules.md, "Disturbed hosts").

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Empty for every earlier run: its host figures stay in worker_info, unjudged as to disturbance.
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("disturbed", sa.Text(), nullable=False, server_default=sa.text("''")))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("disturbed")
