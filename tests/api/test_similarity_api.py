"""Machine review through the admin API and the organisers' pages (docs/organisers.md)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.settings import Settings
from api.store.audit import list_audit
from api.store.db import Database
from api.store.models import Submission
from api.web.app import create_app
from tests.api.conftest import Clock, Contest, RecordingDispatcher
from tests.api.helpers import stored_id
from tests.api.test_organiser_jobs_api import worker_context
from tests.api.test_organiser_pages import _as
from tests.workers.test_similarity import INDEPENDENT, ORIGINAL, RENAMED
from workers.organiser_jobs import run_organiser_job

pytest.importorskip("copydetect")
BASELINE = Path(__file__).resolve().parents[2] / "reference_kernels" / "add_mul_relu" / "cpu" / "baseline.cpp"


@pytest.fixture
def pages(settings: Settings, database: Database, dispatcher: RecordingDispatcher, clock: Clock
          ) -> Iterator[TestClient]:  # fmt: skip
    with TestClient(create_app(settings, dispatcher, database=database, clock=clock)) as client:
        yield client


def _upload_judged(pages: TestClient, database: Database, contest: Contest, clock: Clock, team: str,
                   extra: str) -> int:  # fmt: skip
    files = [("files", ("kernel.cpp", BASELINE.read_bytes() + extra.encode(), "text/x-c++src"))]
    answer = pages.post("/api/v1/submissions", headers=contest.auth(team), data={"problem": "add_mul_relu",
                        "backend": "cpu"}, files=files)  # fmt: skip
    assert answer.status_code == 202, answer.text
    clock.advance(120)
    with database.session() as session:  # as if judged: machine review reads judged submissions
        row = session.get_one(Submission, stored_id(session, answer.json()["id"]))
        row.verdict, row.score = "AC", 100.0
        session.commit()
        return row.id  # the organisers' pages name it by its database id


def test_pairs_side_by_side_and_a_decision_per_pair(
    pages: TestClient, settings: Settings, database: Database, contest: Contest, clock: Clock, tmp_path: Path
) -> None:
    alpha = _upload_judged(pages, database, contest, clock, "alpha", ORIGINAL)
    bravo = _upload_judged(pages, database, contest, clock, "bravo", RENAMED)
    _upload_judged(pages, database, contest, clock, "charlie", INDEPENDENT)
    admin = contest.auth("admin")
    job = pages.post("/api/v1/admin/competitions/cup/similarity", headers=admin, json={"threshold": 0.5}).json()
    ctx = worker_context(settings, tmp_path)
    try:
        assert run_organiser_job(ctx, job["id"]) == "done"
    finally:
        ctx.close()
    (pair,) = pages.get("/api/v1/admin/competitions/cup/similar-pairs?minimum=0.5", headers=admin).json()
    assert (pair["submission_a"], pair["submission_b"], pair["team_a"], pair["team_b"]) == (alpha, bravo, "alpha",
                                                                                           "bravo")  # fmt: skip
    detail = pages.get(f"/api/v1/admin/similar-pairs/{pair['id']}", headers=admin).json()
    text_b = detail["files_b"][0]["content"]
    matched = "".join(text_b[start:end] for name, start, end in detail["pair"]["regions"]["b"] if name == "kernel.cpp")
    assert "+ 1.0f) * 2.0f" in matched and "Baseline CPU kernel" not in matched  # the copy, not the baseline
    refused = pages.put(f"/api/v1/admin/similar-pairs/{pair['id']}", headers=admin, json={"decision": "flagged"})
    assert refused.status_code == 422 and "say why" in refused.json()["detail"]
    cleared = pages.put(f"/api/v1/admin/similar-pairs/{pair['id']}", headers=admin,
                        json={"decision": "cleared", "note": "both from the public tutorial"})  # fmt: skip
    assert cleared.status_code == 200 and cleared.json()["decision"] == "cleared"
    assert pages.get("/api/v1/admin/similar-pairs/99999", headers=admin).status_code == 404

    csrf = _as(pages, settings, contest, "admin")
    listing = pages.get("/admin/c/cup/similarity?minimum=0.5")
    assert listing.status_code == 200 and f'href="/admin/similarity/{pair["id"]}"' in listing.text
    side = pages.get(f"/admin/similarity/{pair['id']}")
    assert side.status_code == 200 and side.text.count('<mark id="match-') >= 2 and "fast_path" in side.text
    assert 'href="#match-b-0"' in side.text  # a link jumps to each match
    flagged = pages.post(f"/admin/similarity/{pair['id']}", data={"csrf": csrf, "decision": "flagged",
                                                                  "note": "renamed copy"})  # fmt: skip
    assert flagged.status_code == 200 and "renamed copy" in flagged.text
    with database.session() as session:
        decisions = [e.details["decision"] for e in list_audit(session) if e.action == "similarity.decide"]
    assert decisions == ["flagged", "cleared"]  # newest first
