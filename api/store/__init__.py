"""The store: the only code that imports SQLAlchemy. Functions take keyword arguments only.

This package re-exports nothing: every import names the submodule that defines the name
(`from api.store.runs import claim_run`), so there is one way to import each name and the
import says where it lives.

Mutating functions commit before they return and leave no transaction open;
readers never commit, so end their transaction soon (close the session or
roll back): on SQLite an open transaction of a write session holds the
database's write lock. Workers use:

    from api.store.db import Database
    from api.store.runs import claim_run

    db = Database(settings)
    with db.session() as session:
        claimed = claim_run(session, run_id=run_id, worker=name)

The submodules:

- Foundations: `db` (engine, `Database`, `Session`, migrations), `models` and `models_organisers`
  (tables), `types` (column types, `utcnow`), `enums` (`Role`, `RunStatus`, `RunKind`, ...),
  `errors` (`StoreError` and its kinds), `views` (the frozen dataclasses every function returns).
- Contests: `competitions`, `teams` (teams and reviewers), `tokens` (API tokens, `authenticate`),
  `page_sessions`, `rules` (upload rules), `modes` (quotas and queue priorities), `judge_settings`.
- Submissions and runs: `submissions`, `submission_refs`, `public_ids`, `runs` (the workers' side:
  claim, progress, finish, dispatch, reap), `results` (case rows), `workers`, `queueinfo`,
  `rejudge`, `reproduction`, `disturbed`.
- Boards: `standings`, `standings_cache`, `ranking` (leaderboards to render), `finals`, `finals_pool`.
- Organisers: `audit`, `reviews`, `finalist_reads`, `final_ranking`, `final_codec`, `exports`,
  `data_release`, `jobs`, `similarity`, `seed` (the demo), `stats` (row counts),
  `page_queries` and `metrics_queries` (reads for the pages and /metrics).
"""
