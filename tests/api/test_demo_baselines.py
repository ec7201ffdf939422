"""`opjudge serve --seed-demo --judge-baselines`: the demo starts with the CPU baselines submitted."""

from __future__ import annotations

from api.serve import _submit_baselines
from api.settings import Settings
from api.store.db import Database
from api.store.seed import seed_demo
from api.store.submissions import list_submissions


def test_each_demo_team_submits_one_baseline_once(settings: Settings, database: Database) -> None:
    with database.session() as session:
        demo = seed_demo(session, settings)
    _submit_baselines(settings, demo)
    with database.session() as session:
        stored = list_submissions(session, limit=10)
    assert sorted((s.team_name, s.problem) for s in stored) == [
        ("alpha", "sparse_flash_attention_grad"), ("bravo", "add_mul_relu")]
    assert all(s.file_count == 1 and s.backend == "cpu" for s in stored)
    _submit_baselines(settings, demo)  # a re-seeded demo submits nothing again
    with database.session() as session:
        assert len(list_submissions(session, limit=10)) == 2
