"""`opjudge serve --seed-demo --judge-baselines`: the demo starts with the CPU baselines submitted."""

from __future__ import annotations

from api.store.submissions import list_submissions
from workers.serve import _submit_baselines


def test_each_demo_team_submits_one_baseline_once(ctx, demo):
    _submit_baselines(ctx.settings, demo)
    with ctx.db.session() as session:
        stored = list_submissions(session, limit=10)
    assert sorted((s.team_name, s.problem) for s in stored) == [
        ("alpha", "sparse_flash_attention_grad"), ("bravo", "add_mul_relu")]
    assert all(s.file_count == 1 and s.backend == "cpu" for s in stored)
    _submit_baselines(ctx.settings, demo)  # a re-seeded demo submits nothing again
    with ctx.db.session() as session:
        assert len(list_submissions(session, limit=10)) == 2
