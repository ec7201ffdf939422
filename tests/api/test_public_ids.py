"""Teams see and pass random public submission ids, never the database's sequential ones
(docs/security.md, "Submission ids"): two of a team's ids must say nothing of how many
submissions other teams made between them, even while the board is frozen."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Any

import pytest
from alembic import command
from fastapi.testclient import TestClient
from sqlalchemy import select

from api.settings import Settings
from api.store.db import Database, alembic_config
from api.store.models import Standing, Submission
from api.store.public_ids import PATTERN
from api.store.runs import claim_run, finish_run
from api.store.stats import row_counts
from api.web.app import create_app
from api.web.pages.auth import TOKEN_COOKIE
from tests.api.conftest import Clock, Contest, RecordingDispatcher
from tests.api.helpers import judge_run_id, result, stored_id, upload
from tests.api.judging import open_quotas


@pytest.fixture
def pages(settings: Settings, database: Database, dispatcher: RecordingDispatcher, clock: Clock,
          contest: Contest) -> Iterator[TestClient]:  # fmt: skip
    app = create_app(settings, dispatcher, database=database, clock=clock)
    with TestClient(app) as client:
        yield client


def _interleaved(client: TestClient, contest: Contest, database: Database, clock: Clock) -> list[dict[str, Any]]:
    """alpha uploads, bravo uploads three times, alpha uploads again; every run is judged. alpha's answers."""
    with database.session() as session:
        open_quotas(session, contest, clock)
    answers = []
    for team in ("alpha", "bravo", "bravo", "bravo", "alpha"):
        created = upload(client, contest.auth(team))
        assert created.status_code == 202, created.text
        with database.session() as session:
            run_id = judge_run_id(session, created.json()["id"])
            claim_run(session, run_id=run_id, worker="w", now=clock.now)
            finish_run(session, run_id=run_id, result=result(benchmarks={"b1": 0.5}), worker_info={}, now=clock.now)
        clock.advance(60)
        if team == "alpha":
            answers.append(created.json())
    return answers


def _numbers(value: Any, key: str = "") -> list[tuple[str, int]]:
    """Every integer under a key that names something (`id`, `run_id`, ...) in a JSON answer."""
    if isinstance(value, dict):
        return [n for k, v in value.items() for n in _numbers(v, k)]
    if isinstance(value, list):
        return [n for v in value for n in _numbers(v, key)]
    named = key == "id" or key.endswith("_id") or key.endswith("_of")
    return [(key, value)] if named and isinstance(value, int) and not isinstance(value, bool) else []


def test_a_teams_ids_say_nothing_of_other_teams_uploads(
    client: TestClient, contest: Contest, database: Database, clock: Clock
) -> None:
    first, second = _interleaved(client, contest, database, clock)
    with database.session() as session:
        stored = [stored_id(session, first["id"]), stored_id(session, second["id"])]
    assert stored[1] - stored[0] == 4  # the database counted bravo's three uploads in between
    for created in (first, second):
        assert isinstance(created["id"], str) and PATTERN.fullmatch(created["id"]), created["id"]
        assert not created["id"].isdigit() and created["run_id"] == 1
        assert created["status_url"] == f"/api/v1/submissions/{created['id']}"
    assert first["id"] != second["id"]

    alpha = contest.auth("alpha")
    listed = client.get("/api/v1/submissions", headers=alpha).json()
    assert [s["id"] for s in listed] == [second["id"], first["id"]]
    details = [client.get(c["status_url"], headers=alpha).json() for c in (first, second)]
    assert [d["submission"]["id"] for d in details] == [first["id"], second["id"]]
    # Runs are numbered within their submission: the database's run ids count every team's runs too.
    assert [(d["runs"][0]["id"], d["scored_run_id"]) for d in details] == [(1, 1), (1, 1)]
    me = client.get("/api/v1/me", headers=alpha).json()
    finals = client.get("/api/v1/finals", headers=alpha).json()
    board = client.get(f"/api/v1/competitions/{contest.slug}/leaderboard", headers=alpha).json()
    alpha_row = next(r for r in board["rows"] if r["team_name"] == "alpha")
    assert alpha_row["submission_ids"] == {"add_mul_relu": second["id"]}
    assert set(finals["counting"].values()) <= {second["id"]}
    # Nothing a team reads names a submission or a run by a number but the run numbers and team ids.
    seen = _numbers([first, second, listed, details, finals, board, me])
    assert {k for k, v in seen if k != "team_id"} <= {"id", "run_id", "scored_run_id"}
    assert {v for k, v in seen if k != "team_id"} == {1}


def test_a_team_route_refuses_the_database_id_with_the_reason(
    client: TestClient, pages: TestClient, contest: Contest, database: Database, clock: Clock
) -> None:
    first, _second = _interleaved(client, contest, database, clock)
    with database.session() as session:
        number = stored_id(session, first["id"])
    alpha = contest.auth("alpha")
    for url in (f"/api/v1/submissions/{number}", f"/api/v1/submissions/{number}/sources",
                f"/api/v1/submissions?before_id={number}"):  # fmt: skip
        refused = client.get(url, headers=alpha)
        assert refused.status_code == 404, (url, refused.text)
        assert "not by a number" in refused.json()["detail"] and "like" in refused.json()["detail"]
    put = client.put("/api/v1/finals", headers=alpha, json={"submission_ids": [str(number)]})
    assert put.status_code == 404 and "not by a number" in put.json()["detail"]
    # By its public id the same submission is found; a page past the newest lists the older one.
    assert client.get(f"/api/v1/submissions/{first['id']}/sources", headers=alpha).status_code == 200
    older = client.get("/api/v1/submissions", headers=alpha, params={"before_id": _second["id"]}).json()
    assert [s["id"] for s in older] == [first["id"]]
    # Another team's public id is not found, worded as for an id that does not exist.
    other = client.get(f"/api/v1/submissions/{first['id']}", headers=contest.auth("bravo"))
    assert other.status_code == 404 and "among your team's submissions" in other.json()["detail"]
    # Organisers keep the database id, and may use the public one.
    admin = contest.auth("admin")
    by_number = client.get(f"/api/v1/submissions/{number}", headers=admin)
    assert by_number.status_code == 200 and by_number.json()["submission"]["id"] == first["id"]
    assert client.get(f"/api/v1/submissions/{first['id']}", headers=admin).status_code == 200
    listed = client.get(f"/api/v1/admin/competitions/{contest.slug}/submissions", headers=admin).json()
    assert {(s["id"], s["public_id"]) for s in listed} >= {(number, first["id"])}

    pages.cookies.set(TOKEN_COOKIE, contest.tokens["alpha"])
    for url in (f"/s/{number}", f"/s/{number}/timeline.frag"):
        page = pages.get(url)
        assert page.status_code == 404 and "not by a number" in html.unescape(page.text), url
    report = pages.get(f"/s/{first['id']}")
    assert report.status_code == 200 and first["id"] in report.text
    team_page = pages.get("/team").text
    assert f'href="/s/{first["id"]}"' in team_page and f'href="/s/{number}"' not in team_page
    assert not re.search(r"#\d+\b", _text(team_page))  # no numbered submission on the team page
    assert not re.search(r"[Rr]un #\d+", _text(report.text))


def _text(page: str) -> str:
    """The page's visible text, roughly: tags, scripts and styles removed."""
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def test_the_migration_gives_every_stored_submission_a_public_id(
    client: TestClient, contest: Contest, database: Database, clock: Clock
) -> None:
    """Submissions stored before public ids existed get one, and the cached board names it at once."""
    _interleaved(client, contest, database, clock)
    with database.session() as session:
        before = row_counts(session)
    with database.engine.begin() as connection:
        command.downgrade(alembic_config(connection), "0006")
    with database.engine.begin() as connection:
        command.upgrade(alembic_config(connection), "head")
    with database.session() as session:
        ids = {i: p for i, p in session.execute(select(Submission.id, Submission.public_id))}
        assert row_counts(session) == before  # SQLite: no table rebuild cascaded away a submission's files
        assert len(ids) == 5 and len(set(ids.values())) == 5
        assert all(PATTERN.fullmatch(p) for p in ids.values())
        entries = [e for row in session.scalars(select(Standing)) for e in row.entries.values()]
        assert entries and all(e["public_id"] == ids[e["submission_id"]] for e in entries)
    # A new upload still gets its own, unique id.
    created = upload(client, contest.auth("charlie"))
    assert created.status_code == 202 and created.json()["id"] not in ids.values()
