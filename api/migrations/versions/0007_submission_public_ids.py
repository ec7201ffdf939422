"""Submissions get a random public id, the one teams see and pass instead of the sequential id
(docs/security.md, "Submission ids"). Existing submissions get one here.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from api.store.public_ids import new_public_id

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

_BATCH = 1000


def upgrade() -> None:
    # SQLite: no batch rebuild of `submissions`. Rebuilding drops the old table, and with foreign keys
    # on, that deletes every submission's files through ON DELETE CASCADE. The column is added in place
    # with an empty default instead (every insert sets it).
    bind = op.get_bind()
    sqlite = bind.dialect.name == "sqlite"
    op.add_column("submissions", sa.Column("public_id", sa.String(16), nullable=False, server_default=""))
    submissions = sa.table("submissions", sa.column("id", sa.Integer), sa.column("public_id", sa.String))
    given: set[str] = set()
    while True:
        ids = bind.execute(
            sa.select(submissions.c.id).where(submissions.c.public_id == "").order_by(submissions.c.id)
            .limit(_BATCH)
        ).scalars().all()  # fmt: skip
        if not ids:
            break
        for submission_id in ids:
            public_id = new_public_id()
            while public_id in given:  # the unique index below would refuse a repeat
                public_id = new_public_id()
            given.add(public_id)
            bind.execute(sa.update(submissions).where(submissions.c.id == submission_id).values(public_id=public_id))
    if not sqlite:
        op.alter_column("submissions", "public_id", server_default=None)
    op.create_index("ix_submissions_public_id", "submissions", ["public_id"], unique=True)
    _backfill_boards(bind, submissions)


def _backfill_boards(bind: sa.Connection, submissions: sa.TableClause) -> None:
    """The cached standings and the published final rankings name the submission that ranks: they get
    its public id too, so boards show it at once, not after the next recompute."""
    public = {int(i): str(p) for i, p in bind.execute(sa.select(submissions.c.id, submissions.c.public_id))}
    standings = sa.table("standings", sa.column("competition_id", sa.Integer), sa.column("case_set", sa.String),
                         sa.column("team_id", sa.Integer), sa.column("entries", sa.JSON))  # fmt: skip
    for row in bind.execute(sa.select(standings)).all():
        entries = {slug: {**e, "public_id": public.get(int(e["submission_id"]), "")} for slug, e in row.entries.items()}
        bind.execute(sa.update(standings).where(
            standings.c.competition_id == row.competition_id, standings.c.case_set == row.case_set,
            standings.c.team_id == row.team_id).values(entries=entries))  # fmt: skip
    finals = sa.table("final_rankings", sa.column("id", sa.Integer), sa.column("board", sa.JSON))
    for row in bind.execute(sa.select(finals)).all():
        rows = [{**r, "public_ids": {p: public[int(i)] for p, i in r.get("submission_ids", {}).items()
                                     if int(i) in public}} for r in row.board.get("rows", [])]  # fmt: skip
        bind.execute(sa.update(finals).where(finals.c.id == row.id).values(board={**row.board, "rows": rows}))


def downgrade() -> None:
    op.drop_index("ix_submissions_public_id", table_name="submissions")
    if op.get_bind().dialect.name == "sqlite":
        op.execute("ALTER TABLE submissions DROP COLUMN public_id")  # in place, as upgrade() explains
    else:
        op.drop_column("submissions", "public_id")
