"""A run's conditions (judge/conditions.py: toolchain, baseline's vendor operator and clock overheads,
peak rates, re-timing on a disturbed host) are typed fields kept under `runs.worker_info["conditions"]`.
Runs judged before kept them as flat strings beside the host's description (`retimed_attempts: "3"`,
`disturbed_attempt_1`, `baseline_python_baseline`, `peak_flops`, ...); they are converted here, so no
reader parses them (docs/architecture.md). Downgrading writes the flat strings back.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

from judge.conditions import CONDITIONS_KEY, conditions_from_host, is_legacy_key

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    _rewrite(_nested)


def downgrade() -> None:
    _rewrite(_flat)


def _rewrite(convert: Any) -> None:
    bind = op.get_bind()
    runs = sa.table("runs", sa.column("id", sa.Integer), sa.column("worker_info", sa.JSON))
    for run_id, info in bind.execute(sa.select(runs.c.id, runs.c.worker_info)).all():
        converted = convert(info or {})
        if converted is not None:
            bind.execute(sa.update(runs).where(runs.c.id == run_id).values(worker_info=converted))


def _nested(info: dict[str, Any]) -> dict[str, Any] | None:
    """The row with its flat entries moved into the typed record; None when it has one already."""
    if isinstance(info.get(CONDITIONS_KEY), dict):
        return None
    described = {k: v for k, v in info.items() if not is_legacy_key(str(k))}
    return {**described, CONDITIONS_KEY: conditions_from_host(info).to_dict()}


def _flat(info: dict[str, Any]) -> dict[str, Any] | None:
    """The row as the code before this migration wrote it; None when it is in that shape already."""
    conditions = info.get(CONDITIONS_KEY)
    if not isinstance(conditions, dict):
        return None
    flat = {k: v for k, v in info.items() if k != CONDITIONS_KEY}
    for key, name in (("toolchain", "toolchain"), ("python_baseline", "baseline_python_baseline"),
                      ("disturbed", "disturbed"), ("disturbed_unmarked", "disturbed_unmarked")):
        if conditions.get(key):
            flat[name] = str(conditions[key])
    for key in ("peak_flops", "peak_bytes_per_s", "retimed_attempts"):
        if conditions.get(key):
            flat[key] = str(conditions[key])
    for key, value in (conditions.get("baseline_overheads_ns") or {}).items():
        flat[f"baseline_{key}"] = f"{value:.0f}"
    for attempt, reason in enumerate(conditions.get("disturbed_attempts") or [], start=1):
        flat[f"disturbed_attempt_{attempt}"] = str(reason)
    return flat
