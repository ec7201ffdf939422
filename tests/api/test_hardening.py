"""What a security review found, each closed (headers, boundary, 422 shape)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api.store.db import Database
from api.store.stats import row_counts
from tests.api.conftest import Contest

pytestmark = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)


def test_boundary_of_257_characters_is_422_not_500(client: TestClient, contest: Contest, database: Database) -> None:
    with database.session(write=False) as session:
        before = row_counts(session)
    boundary = "b" * 257
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"problem\"\r\n\r\nadd_mul_relu\r\n"
            f"--{boundary}--\r\n").encode()  # fmt: skip
    response = client.post("/api/v1/submissions", content=body, headers={
        **contest.auth("alpha"), "Content-Type": f"multipart/form-data; boundary={boundary}"})
    assert response.status_code == 422, response.text
    assert "malformed" in response.json()["detail"] and "257" in response.json()["detail"]
    with database.session(write=False) as session:
        assert row_counts(session) == before


def _detail_types(client: TestClient) -> set[str]:
    """The JSON types the OpenAPI schema allows for a 422's `detail`."""
    schema = client.get("/openapi.json").json()
    detail = schema["components"]["schemas"]["HTTPValidationError"]["properties"]["detail"]
    return {option["type"] for option in detail.get("anyOf", [detail])}


def test_422_answers_match_the_schema(client: TestClient, contest: Contest) -> None:
    allowed = _detail_types(client)
    # Valid JSON the store refuses: detail is the reason, a string.
    refused = client.put("/api/v1/admin/competitions/cup/freeze", json={"freeze_at": 0}, headers=contest.auth("admin"))
    assert refused.status_code == 422 and isinstance(refused.json()["detail"], str)
    # Invalid JSON: detail is the list of failing fields.
    invalid = client.put("/api/v1/admin/competitions/cup/freeze", json={"freeze_at": "soon"},
                         headers=contest.auth("admin"))  # fmt: skip
    assert invalid.status_code == 422 and isinstance(invalid.json()["detail"], list)
    assert allowed == {"string", "array"}


def test_json_answers_are_not_stored_and_not_sniffed(client: TestClient, contest: Contest) -> None:
    me = client.get("/api/v1/me", headers=contest.auth("alpha"))
    assert me.status_code == 200
    assert me.headers["cache-control"] == "no-store" and me.headers["x-content-type-options"] == "nosniff"
    refused = client.get("/api/v1/me")
    assert refused.status_code == 401 and refused.headers["cache-control"] == "no-store"
    # The public board chose its own caching (no-cache with an ETag): kept, with nosniff added.
    board = client.get("/api/v1/competitions/cup/leaderboard")
    assert board.status_code == 200 and board.headers["cache-control"] == "no-cache"
    assert board.headers["x-content-type-options"] == "nosniff"
