"""The store: the only code that imports SQLAlchemy. Functions take keyword arguments only.

Mutating functions commit before they return and leave no transaction open;
readers never commit, so end their transaction soon (close the session or
roll back): on SQLite an open transaction of a write session holds the
database's write lock. Workers use:

    db = Database(settings)
    with db.session() as session:
        claimed = claim_run(session, run_id=run_id, worker=name)
"""

from api.store.audit import list_audit, record_audit
from api.store.competitions import (
    attach_problem,
    create_competition,
    get_competition,
    list_competitions,
    set_final_published,
    update_competition,
)
from api.store.db import DB_UNAVAILABLE_ERRORS, Database, Session, db_unavailable_reason, upgrade_database
from api.store.enums import RankedBy, RelativeTo, Role, RunKind, RunStatus
from api.store.errors import (
    AuthError,
    ConflictError,
    ContestClosedError,
    InvalidInputError,
    NotFoundError,
    PermissionDeniedError,
    QuotaExceededError,
    StoreError,
)
from api.store.exports import ExportKind, csv_value, export_rows, log_export
from api.store.ranking import (
    BoardColumn,
    BoardState,
    Leaderboard,
    LeaderboardRow,
    board_state,
    for_viewer,
    leaderboard,
)
from api.store.rejudge import rejudge, start_reproductions
from api.store.reproduction import list_reproductions
from api.store.reviews import list_finalists, list_reviews, put_review, reviewer_marks, reviewer_scores
from api.store.runs import (
    claim_run,
    fail_run,
    finish_run,
    mark_queued,
    record_stage,
    requeue_run,
    runs_to_dispatch,
    stuck_runs,
)
from api.store.seed import DemoSeed, seed_demo
from api.store.standings import CaseCell, compute_standings
from api.store.standings_cache import recompute_standings
from api.store.stats import row_counts
from api.store.submissions import (
    create_submission,
    disqualify_submission,
    list_submissions,
    submission_detail,
    submission_sources,
    team_quota,
)
from api.store.teams import (
    add_reviewer,
    create_team,
    get_team,
    list_reviewers,
    list_teams,
    remove_reviewer,
    set_finalists,
)
from api.store.tokens import authenticate, hash_token, issue_token, list_tokens, revoke_token
from api.store.views import (
    AuditView,
    CaseView,
    ClaimedRun,
    CompetitionView,
    FileInfo,
    FinalistView,
    IssuedToken,
    NewSubmission,
    Principal,
    ProblemLink,
    QueueLoad,
    QuotaStatus,
    ReproductionView,
    ReviewerView,
    ReviewView,
    RunDispatch,
    RunView,
    StuckRun,
    SubmissionDetail,
    SubmissionSummary,
    TeamView,
    TokenInfo,
    WorkerView,
)
from api.store.workers import list_workers, queue_load, register_worker, worker_heartbeat

__all__ = [
    "AuditView",
    "AuthError",
    "BoardColumn",
    "BoardState",
    "CaseCell",
    "CaseView",
    "ClaimedRun",
    "CompetitionView",
    "ConflictError",
    "ContestClosedError",
    "DB_UNAVAILABLE_ERRORS",
    "Database",
    "DemoSeed",
    "ExportKind",
    "FileInfo",
    "FinalistView",
    "for_viewer",
    "InvalidInputError",
    "IssuedToken",
    "Leaderboard",
    "LeaderboardRow",
    "NewSubmission",
    "NotFoundError",
    "PermissionDeniedError",
    "Principal",
    "ProblemLink",
    "QueueLoad",
    "QuotaExceededError",
    "QuotaStatus",
    "RankedBy",
    "RelativeTo",
    "ReproductionView",
    "ReviewView",
    "ReviewerView",
    "Role",
    "RunDispatch",
    "RunKind",
    "RunStatus",
    "RunView",
    "Session",
    "StoreError",
    "StuckRun",
    "SubmissionDetail",
    "SubmissionSummary",
    "TeamView",
    "TokenInfo",
    "WorkerView",
    "add_reviewer",
    "attach_problem",
    "authenticate",
    "board_state",
    "claim_run",
    "compute_standings",
    "create_competition",
    "create_submission",
    "create_team",
    "csv_value",
    "db_unavailable_reason",
    "disqualify_submission",
    "export_rows",
    "fail_run",
    "finish_run",
    "get_competition",
    "get_team",
    "hash_token",
    "issue_token",
    "leaderboard",
    "list_audit",
    "list_competitions",
    "list_finalists",
    "list_reproductions",
    "list_reviewers",
    "list_reviews",
    "list_submissions",
    "list_teams",
    "list_tokens",
    "list_workers",
    "log_export",
    "mark_queued",
    "put_review",
    "queue_load",
    "recompute_standings",
    "record_audit",
    "record_stage",
    "register_worker",
    "rejudge",
    "remove_reviewer",
    "requeue_run",
    "reviewer_marks",
    "reviewer_scores",
    "revoke_token",
    "row_counts",
    "runs_to_dispatch",
    "seed_demo",
    "set_final_published",
    "set_finalists",
    "start_reproductions",
    "stuck_runs",
    "submission_detail",
    "submission_sources",
    "team_quota",
    "update_competition",
    "upgrade_database",
    "worker_heartbeat",
]
