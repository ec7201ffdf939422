"""Page sessions: a login's cookie names a row that logging out revokes.

Revision ID: 0004
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "page_sessions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("token_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["token_id"], ["api_tokens.id"], name=op.f("fk_page_sessions_token_id_api_tokens"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_page_sessions")),
        sa.UniqueConstraint("digest", name=op.f("uq_page_sessions_digest")),
    )
    op.create_index(op.f("ix_page_sessions_token_id"), "page_sessions", ["token_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_page_sessions_token_id"), table_name="page_sessions")
    op.drop_table("page_sessions")
