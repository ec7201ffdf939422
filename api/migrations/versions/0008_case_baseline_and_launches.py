"""Each case row holds what timed its baseline, why the baseline kernel did, and the launches one
timed call made (NPU device timing). Runs judged before kept them in `runs.worker_info` under
prefixed keys (`baseline:<case>`, `baseline_note:<case>`, `launches:<case>`,
`baseline_launches:<case>`); they are copied into the case rows here, so no reader parses them.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

_TEXT = ("baseline", "baseline_note")
_COUNTS = ("launches", "baseline_launches")


def upgrade() -> None:
    # Added in place, like 0007: a batch rebuild of a table under foreign keys is what SQLite would do.
    for name in _TEXT:
        op.add_column("case_results", sa.Column(name, sa.Text(), nullable=False, server_default=""))
    for name in _COUNTS:
        op.add_column("case_results", sa.Column(name, sa.Integer(), nullable=True))
    bind = op.get_bind()
    runs = sa.table("runs", sa.column("id", sa.Integer), sa.column("worker_info", sa.JSON))
    cases = sa.table("case_results", sa.column("run_id", sa.Integer), sa.column("name", sa.String),
                     *(sa.column(n, sa.Text) for n in _TEXT), *(sa.column(n, sa.Integer) for n in _COUNTS))
    for run_id, info in bind.execute(sa.select(runs.c.id, runs.c.worker_info)).all():
        per_case: dict[str, dict[str, object]] = {}
        for key, value in (info or {}).items():
            field, _, case = str(key).partition(":")
            if not case or field not in _TEXT + _COUNTS:
                continue
            if field in _COUNTS:
                if not (isinstance(value, str) and value.isdigit()):
                    continue  # as the readers before this migration did: no count
                value = int(value)
            per_case.setdefault(case, {})[field] = value
        for case, values in per_case.items():
            bind.execute(sa.update(cases).where(cases.c.run_id == run_id, cases.c.name == case).values(**values))


def downgrade() -> None:
    for name in (*_TEXT, *_COUNTS):
        op.drop_column("case_results", name)
