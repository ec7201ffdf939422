"""Initial schema: every table of the first store (see api/store/models.py).

Revision ID: 0001
Revises: none
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "competitions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("slug", sa.String(length=64), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("starts_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ends_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("freeze_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("quota_per_day", sa.Integer(), nullable=False),
        sa.Column("min_interval_s", sa.Integer(), nullable=False),
        sa.Column("max_in_flight", sa.Integer(), nullable=False),
        sa.Column("online_weight", sa.Float(), nullable=False),
        sa.Column("reviewer_weight", sa.Float(), nullable=False),
        sa.Column("relative_to", sa.String(length=16), nullable=False),
        sa.Column("ranked_by", sa.String(length=16), nullable=False),
        sa.Column("score_cap", sa.Float(), nullable=False),
        sa.Column("rubric", sa.JSON(), nullable=False),
        sa.Column("reproduction_tolerance", sa.Float(), nullable=False),
        sa.Column("final_published", sa.Boolean(), nullable=False),
        sa.Column("board_version", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_competitions")),
        sa.UniqueConstraint("slug", name=op.f("uq_competitions_slug")),
    )
    op.create_table(
        "problems",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("slug", sa.String(length=64), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("backends", sa.JSON(), nullable=False),
        sa.Column("definition_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_problems")),
        sa.UniqueConstraint("slug", "version", name="uq_problems_slug_version"),
    )
    op.create_table(
        "workers",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("queue", sa.String(length=64), nullable=False),
        sa.Column("info", sa.JSON(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_workers")),
        sa.UniqueConstraint("name", name=op.f("uq_workers_name")),
    )
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("competition_id", sa.Integer(), nullable=True),
        sa.Column("actor_token_id", sa.Integer(), nullable=True),
        sa.Column("actor", sa.String(length=120), nullable=False),
        sa.Column("action", sa.String(length=64), nullable=False),
        sa.Column("target", sa.String(length=200), nullable=False),
        sa.Column("details", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["competition_id"], ["competitions.id"], name=op.f("fk_audit_log_competition_id_competitions")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_log")),
    )
    op.create_index(op.f("ix_audit_log_competition_id"), "audit_log", ["competition_id"], unique=False)

    op.create_table(
        "competition_problems",
        sa.Column("competition_id", sa.Integer(), nullable=False),
        sa.Column("problem_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("backends", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["competition_id"], ["competitions.id"], name=op.f("fk_competition_problems_competition_id_competitions")
        ),
        sa.ForeignKeyConstraint(
            ["problem_id"], ["problems.id"], name=op.f("fk_competition_problems_problem_id_problems")
        ),
        sa.PrimaryKeyConstraint("competition_id", "problem_id", name=op.f("pk_competition_problems")),
    )
    op.create_table(
        "reviewers",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("competition_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["competition_id"], ["competitions.id"], name=op.f("fk_reviewers_competition_id_competitions")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reviewers")),
        sa.UniqueConstraint("competition_id", "name", name="uq_reviewers_competition_name"),
    )
    op.create_index(op.f("ix_reviewers_competition_id"), "reviewers", ["competition_id"], unique=False)

    op.create_table(
        "teams",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("competition_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("finalist", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["competition_id"], ["competitions.id"], name=op.f("fk_teams_competition_id_competitions")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_teams")),
        sa.UniqueConstraint("competition_id", "name", name="uq_teams_competition_name"),
    )
    op.create_index(op.f("ix_teams_competition_id"), "teams", ["competition_id"], unique=False)

    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("prefix", sa.String(length=32), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("team_id", sa.Integer(), nullable=True),
        sa.Column("reviewer_id", sa.Integer(), nullable=True),
        sa.Column("label", sa.String(length=100), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["reviewer_id"], ["reviewers.id"], name=op.f("fk_api_tokens_reviewer_id_reviewers")),
        sa.ForeignKeyConstraint(["team_id"], ["teams.id"], name=op.f("fk_api_tokens_team_id_teams")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_tokens")),
        sa.UniqueConstraint("digest", name=op.f("uq_api_tokens_digest")),
    )
    op.create_index(op.f("ix_api_tokens_reviewer_id"), "api_tokens", ["reviewer_id"], unique=False)
    op.create_index(op.f("ix_api_tokens_team_id"), "api_tokens", ["team_id"], unique=False)

    op.create_table(
        "reviews",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("competition_id", sa.Integer(), nullable=False),
        sa.Column("reviewer_id", sa.Integer(), nullable=False),
        sa.Column("team_id", sa.Integer(), nullable=False),
        sa.Column("marks", sa.JSON(), nullable=False),
        sa.Column("total", sa.Float(), nullable=False),
        sa.Column("comment", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("is_current", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["competition_id"], ["competitions.id"], name=op.f("fk_reviews_competition_id_competitions")
        ),
        sa.ForeignKeyConstraint(["reviewer_id"], ["reviewers.id"], name=op.f("fk_reviews_reviewer_id_reviewers")),
        sa.ForeignKeyConstraint(["team_id"], ["teams.id"], name=op.f("fk_reviews_team_id_teams")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reviews")),
    )
    op.create_index(op.f("ix_reviews_competition_id"), "reviews", ["competition_id"], unique=False)
    op.create_index(op.f("ix_reviews_team_id"), "reviews", ["team_id"], unique=False)
    op.create_index(
        "uq_reviews_current",
        "reviews",
        ["reviewer_id", "team_id"],
        unique=True,
        sqlite_where=sa.text("is_current"),
        postgresql_where=sa.text("is_current"),
    )

    op.create_table(
        "standings",
        sa.Column("competition_id", sa.Integer(), nullable=False),
        sa.Column("case_set", sa.String(length=16), nullable=False),
        sa.Column("team_id", sa.Integer(), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=True),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("tie_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("disqualified", sa.Boolean(), nullable=False),
        sa.Column("last_submission_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("latest_verdict", sa.String(length=16), nullable=True),
        sa.Column("entries", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["competition_id"], ["competitions.id"], name=op.f("fk_standings_competition_id_competitions")
        ),
        sa.ForeignKeyConstraint(["team_id"], ["teams.id"], name=op.f("fk_standings_team_id_teams")),
        sa.PrimaryKeyConstraint("competition_id", "case_set", "team_id", name=op.f("pk_standings")),
    )
    op.create_table(
        "submissions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("competition_id", sa.Integer(), nullable=False),
        sa.Column("team_id", sa.Integer(), nullable=False),
        sa.Column("problem_id", sa.Integer(), nullable=False),
        sa.Column("backend", sa.String(length=16), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("verdict", sa.String(length=16), nullable=True),
        sa.Column("score", sa.Float(), nullable=True),
        sa.Column("charged", sa.Boolean(), nullable=False),
        sa.Column("scored_run_id", sa.Integer(), nullable=True),
        sa.Column("file_count", sa.Integer(), nullable=False),
        sa.Column("total_bytes", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("disqualified_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("disqualify_reason", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["competition_id"], ["competitions.id"], name=op.f("fk_submissions_competition_id_competitions")
        ),
        sa.ForeignKeyConstraint(["problem_id"], ["problems.id"], name=op.f("fk_submissions_problem_id_problems")),
        sa.ForeignKeyConstraint(["team_id"], ["teams.id"], name=op.f("fk_submissions_team_id_teams")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_submissions")),
    )
    op.create_index("ix_submissions_competition_problem", "submissions", ["competition_id", "problem_id"], unique=False)
    op.create_index("ix_submissions_team_created", "submissions", ["team_id", "created_at"], unique=False)

    op.create_table(
        "runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("queue", sa.String(length=64), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("claimed_by", sa.String(length=200), nullable=True),
        sa.Column("deadline", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("pending_since", sa.DateTime(timezone=True), nullable=True),
        sa.Column("queued_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("stage", sa.String(length=32), nullable=True),
        sa.Column("stage_times", sa.JSON(), nullable=False),
        sa.Column("verdict", sa.String(length=16), nullable=True),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("compile_log", sa.Text(), nullable=False),
        sa.Column("kernel_output", sa.Text(), nullable=False),
        sa.Column("findings", sa.JSON(), nullable=False),
        sa.Column("score", sa.Float(), nullable=True),
        sa.Column("worker_host", sa.String(length=200), nullable=True),
        sa.Column("device", sa.String(length=200), nullable=True),
        sa.Column("toolchain", sa.String(length=200), nullable=True),
        sa.Column("driver", sa.String(length=200), nullable=True),
        sa.Column("isolation", sa.String(length=16), nullable=True),
        sa.Column("worker_info", sa.JSON(), nullable=False),
        sa.Column("seed_salt", sa.String(length=64), nullable=False),
        sa.Column("reproduction_of", sa.Integer(), nullable=True),
        sa.Column("flagged", sa.Boolean(), nullable=False),
        sa.Column("flag_reason", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["reproduction_of"], ["runs.id"], name=op.f("fk_runs_reproduction_of_runs")),
        sa.ForeignKeyConstraint(["submission_id"], ["submissions.id"], name=op.f("fk_runs_submission_id_submissions")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_runs")),
    )
    op.create_index("ix_runs_status_deadline", "runs", ["status", "deadline"], unique=False)
    op.create_index("ix_runs_status_pending_since", "runs", ["status", "pending_since"], unique=False)
    op.create_index(op.f("ix_runs_submission_id"), "runs", ["submission_id"], unique=False)

    op.create_table(
        "submission_files",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("content", sa.LargeBinary(), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["submissions.id"],
            name=op.f("fk_submission_files_submission_id_submissions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_submission_files")),
        sa.UniqueConstraint("submission_id", "name", name="uq_submission_files_submission_name"),
    )
    op.create_table(
        "case_results",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("case_set", sa.String(length=16), nullable=False),
        sa.Column("passed", sa.Boolean(), nullable=False),
        sa.Column("verdict", sa.String(length=16), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("errors", sa.JSON(), nullable=False),
        sa.Column("sizes", sa.JSON(), nullable=False),
        sa.Column("median_ns", sa.Float(), nullable=True),
        sa.Column("mean_ns", sa.Float(), nullable=True),
        sa.Column("min_ns", sa.Float(), nullable=True),
        sa.Column("std_ns", sa.Float(), nullable=True),
        sa.Column("count", sa.Integer(), nullable=True),
        sa.Column("baseline_median_ns", sa.Float(), nullable=True),
        sa.Column("ratio", sa.Float(), nullable=True),
        sa.Column("gflops", sa.Float(), nullable=True),
        sa.Column("gbytes_per_s", sa.Float(), nullable=True),
        sa.Column("flops", sa.Float(), nullable=False),
        sa.Column("checked_calls", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_case_results_run_id_runs"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_case_results")),
    )
    op.create_index("ix_case_results_run_set", "case_results", ["run_id", "case_set"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_case_results_run_set", table_name="case_results")

    op.drop_table("case_results")
    op.drop_table("submission_files")
    op.drop_index(op.f("ix_runs_submission_id"), table_name="runs")
    op.drop_index("ix_runs_status_pending_since", table_name="runs")
    op.drop_index("ix_runs_status_deadline", table_name="runs")

    op.drop_table("runs")
    op.drop_index("ix_submissions_team_created", table_name="submissions")
    op.drop_index("ix_submissions_competition_problem", table_name="submissions")

    op.drop_table("submissions")
    op.drop_table("standings")
    op.drop_index(
        "uq_reviews_current",
        table_name="reviews",
        sqlite_where=sa.text("is_current"),
        postgresql_where=sa.text("is_current"),
    )
    op.drop_index(op.f("ix_reviews_team_id"), table_name="reviews")
    op.drop_index(op.f("ix_reviews_competition_id"), table_name="reviews")

    op.drop_table("reviews")
    op.drop_index(op.f("ix_api_tokens_team_id"), table_name="api_tokens")
    op.drop_index(op.f("ix_api_tokens_reviewer_id"), table_name="api_tokens")

    op.drop_table("api_tokens")
    op.drop_index(op.f("ix_teams_competition_id"), table_name="teams")

    op.drop_table("teams")
    op.drop_index(op.f("ix_reviewers_competition_id"), table_name="reviewers")

    op.drop_table("reviewers")
    op.drop_table("competition_problems")
    op.drop_index(op.f("ix_audit_log_competition_id"), table_name="audit_log")

    op.drop_table("audit_log")
    op.drop_table("workers")
    op.drop_table("problems")
    op.drop_table("competitions")
