"""docs/organisers.md's walkthrough, run block by block as written, through the API."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

from fastapi.testclient import TestClient

from tests.api.conftest import Clock, Contest

GUIDE = Path(__file__).parents[2] / "docs/organisers.md"
BLOCK = re.compile(r"```http\n\s*(?P<method>[A-Z]+) (?P<path>\S+)\n(?P<body>.*?)\n\s*```", re.S)


def steps() -> list[tuple[str, str, str]]:
    section = GUIDE.read_text().split("## Running a competition, step by step", 1)[1].split("\n## ", 1)[0]
    found = [(m["method"], m["path"], m["body"].strip()) for m in BLOCK.finditer(section)]
    assert len(found) == 7, "the walkthrough's steps changed: update this test with them"
    return found


def test_the_organisers_walkthrough_works_as_written(client: TestClient, contest: Contest, clock: Clock) -> None:
    admin = contest.auth("admin")
    clock.now = datetime(2027, 2, 1, tzinfo=UTC)  # a month before the guide's competition
    values: dict[str, str] = {}
    answers = []
    for index, (method, path, body) in enumerate(steps(), start=1):
        if path.endswith("/final"):
            clock.now = datetime(2027, 3, 4, tzinfo=UTC)  # the guide publishes after the end
        for name, value in values.items():
            body = body.replace(f"<{name}>", value)
        response = client.request(method, path, headers=admin, json=json.loads(body))
        assert response.status_code in (200, 201), f"step {index}: {method} {path}: {response.text}"
        answers.append(response.json())
        if path.endswith("/teams"):
            values["team id"] = str(response.json()["team"]["id"])
    created, attached, team, reviewer, finalists, frozen, published = answers
    assert "30 minutes before the end" in created["notes"][0]
    assert attached["problems"][0]["slug"] == "sparse_flash_attention_grad"
    assert attached["problems"][0]["backends"] == ["cpu"]
    assert team["token"]["token"].startswith("opj_team_") and reviewer["token"]["token"]
    assert [t["name"] for t in finalists if t["finalist"]] == ["alpha"]
    assert frozen["freeze_at"].startswith("2027-03-03T16:00")
    assert published["final_published"] is True
