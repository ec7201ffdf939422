"""Organisers (docs/organisers.md): final ranking snapshots, chosen finals, organiser jobs, similar pairs.

Revision ID: 0003
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("competitions") as batch:
        batch.add_column(sa.Column("finals_limit", sa.Integer(), server_default="2", nullable=False))
    op.create_table(
        "final_rankings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("competition_id", sa.Integer(), nullable=False),
        sa.Column("taken_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor", sa.String(length=120), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("override", sa.Boolean(), nullable=False),
        sa.Column("current", sa.Boolean(), nullable=False),
        sa.Column("board", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["competition_id"], ["competitions.id"], name=op.f("fk_final_rankings_competition_id_competitions")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_final_rankings")),
    )
    op.create_index(op.f("ix_final_rankings_competition_id"), "final_rankings", ["competition_id"], unique=False)
    op.create_table(
        "final_choices",
        sa.Column("team_id", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("problem_id", sa.Integer(), nullable=False),
        sa.Column("chosen_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["team_id"], ["teams.id"], name=op.f("fk_final_choices_team_id_teams")),
        sa.ForeignKeyConstraint(
            ["submission_id"], ["submissions.id"], name=op.f("fk_final_choices_submission_id_submissions")
        ),
        sa.ForeignKeyConstraint(["problem_id"], ["problems.id"], name=op.f("fk_final_choices_problem_id_problems")),
        sa.PrimaryKeyConstraint("team_id", "submission_id", name=op.f("pk_final_choices")),
    )
    op.create_table(
        "organiser_jobs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("competition_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("result", sa.JSON(), nullable=False),
        sa.Column("error", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["competition_id"], ["competitions.id"], name=op.f("fk_organiser_jobs_competition_id_competitions")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_organiser_jobs")),
    )
    op.create_index(op.f("ix_organiser_jobs_competition_id"), "organiser_jobs", ["competition_id"], unique=False)
    op.create_table(
        "similar_pairs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("competition_id", sa.Integer(), nullable=False),
        sa.Column("problem_id", sa.Integer(), nullable=False),
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("submission_a", sa.Integer(), nullable=False),
        sa.Column("submission_b", sa.Integer(), nullable=False),
        sa.Column("similarity", sa.Float(), nullable=False),
        sa.Column("regions", sa.JSON(), nullable=False),
        sa.Column("decision", sa.String(length=16), nullable=True),
        sa.Column("decided_by", sa.String(length=120), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("note", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["competition_id"], ["competitions.id"], name=op.f("fk_similar_pairs_competition_id_competitions")
        ),
        sa.ForeignKeyConstraint(["problem_id"], ["problems.id"], name=op.f("fk_similar_pairs_problem_id_problems")),
        sa.ForeignKeyConstraint(
            ["submission_a"], ["submissions.id"], name=op.f("fk_similar_pairs_submission_a_submissions")
        ),
        sa.ForeignKeyConstraint(
            ["submission_b"], ["submissions.id"], name=op.f("fk_similar_pairs_submission_b_submissions")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_similar_pairs")),
        sa.UniqueConstraint("submission_a", "submission_b", name="uq_similar_pairs_submission_a"),
    )
    op.create_index(
        "ix_similar_pairs_competition_similarity", "similar_pairs", ["competition_id", "similarity"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_similar_pairs_competition_similarity", table_name="similar_pairs")
    op.drop_table("similar_pairs")
    op.drop_index(op.f("ix_organiser_jobs_competition_id"), table_name="organiser_jobs")
    op.drop_table("organiser_jobs")
    op.drop_table("final_choices")
    op.drop_index(op.f("ix_final_rankings_competition_id"), table_name="final_rankings")
    op.drop_table("final_rankings")
    with op.batch_alter_table("competitions") as batch:
        batch.drop_column("finals_limit")
