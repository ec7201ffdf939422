"""Issue 4 "Bad input tests": each bad request gets the right status and a clear reason, and changes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient

from api.store import Database, row_counts
from tests.api.conftest import START, Clock, Contest
from tests.api.helpers import KERNEL, upload


@pytest.fixture
def unchanged(database: Database, contest: Contest, client: TestClient) -> Iterator[None]:
    """Fails the test if any table's row count moved during it (after the fixtures' setup)."""
    with database.session(write=False) as session:
        before = row_counts(session)
    yield
    with database.session(write=False) as session:
        assert row_counts(session) == before


def _detail(response) -> str:  # type: ignore[no-untyped-def]
    return str(response.json()["detail"])


@pytest.mark.usefixtures("unchanged")
class TestCredentials:
    def test_no_token(self, client: TestClient, contest: Contest) -> None:
        for response in (upload(client, {}), client.get("/api/v1/submissions"), client.get("/api/v1/admin/audit")):
            assert response.status_code == 401
            assert "missing token" in _detail(response) and response.headers["www-authenticate"] == "Bearer"

    def test_wrong_token(self, client: TestClient, contest: Contest) -> None:
        for token in ("opj_team_thisisnotarealtoken", "not-even-ours"):
            response = upload(client, {"Authorization": f"Bearer {token}"})
            assert response.status_code == 401
            assert "unknown token" in _detail(response) or "not an opjudge token" in _detail(response)

    def test_wrong_roles(self, client: TestClient, contest: Contest) -> None:
        admin_calls = [
            ("get", "/api/v1/admin/audit", None),
            ("post", "/api/v1/admin/competitions/cup/rejudge", {"problem": "add_mul_relu"}),
            ("post", "/api/v1/admin/competitions/cup/teams", {"name": "sneaky"}),
            ("get", "/api/v1/admin/competitions/cup/export/submissions.csv", None),
        ]
        for who in ("reviewer", "alpha"):
            for method, url, body in admin_calls:
                response = client.request(method, url, headers=contest.auth(who), json=body)
                assert response.status_code == 403, (who, url)
                assert "needs a admin token" in _detail(response)
        assert client.get("/api/v1/review/teams", headers=contest.auth("alpha")).status_code == 403
        response = upload(client, contest.auth("reviewer"))
        assert response.status_code == 403 and "team token" in _detail(response)


def test_revoked_token(client: TestClient, contest: Contest, database: Database) -> None:
    tokens = client.get(f"/api/v1/admin/teams/{contest.team_ids['alpha']}/tokens", headers=contest.auth("admin")).json()
    revoked = client.delete(f"/api/v1/admin/tokens/{tokens[0]['token_id']}", headers=contest.auth("admin"))
    assert revoked.status_code == 200 and revoked.json()["revoked_at"]
    with database.session(write=False) as session:
        before = row_counts(session)
    response = upload(client, contest.auth("alpha"))
    assert response.status_code == 401 and "revoked" in _detail(response)
    assert client.get("/api/v1/me", headers=contest.auth("alpha")).status_code == 401
    with database.session(write=False) as session:
        assert row_counts(session) == before
    audit = client.get("/api/v1/admin/audit", headers=contest.auth("admin")).json()
    assert audit[0]["action"] == "token.revoke" and audit[0]["target"] == tokens[0]["prefix"]


@pytest.mark.usefixtures("unchanged")
class TestUploads:
    def test_oversized_body_declared(self, client: TestClient, contest: Contest, settings) -> None:  # type: ignore[no-untyped-def]
        big = b"x" * (settings.max_body_bytes + 1)
        response = upload(client, contest.auth("alpha"), files=[("kernel.cpp", big)])
        assert response.status_code == 413 and "over the limit" in _detail(response)

    def test_oversized_body_chunked(self, client: TestClient, contest: Contest, settings) -> None:  # type: ignore[no-untyped-def]
        def chunks() -> Iterator[bytes]:
            for _ in range(5):
                yield b"y" * (settings.max_body_bytes // 4)

        response = client.post("/api/v1/submissions", headers={**contest.auth("alpha"),
                               "Content-Type": "multipart/form-data; boundary=xyz"}, content=chunks())  # fmt: skip
        assert response.status_code == 413 and "grew over the limit" in _detail(response)

    def test_fifty_files(self, client: TestClient, contest: Contest) -> None:
        files = [(f"part{i}.cpp", b"int x;\n") for i in range(50)]
        response = upload(client, contest.auth("alpha"), files=files)
        assert response.status_code == 413 and "too many files: at most 16" in _detail(response)

    def test_one_file_too_big(self, client: TestClient, contest: Contest, settings) -> None:  # type: ignore[no-untyped-def]
        response = upload(client, contest.auth("alpha"), files=[("kernel.cpp", b"/" * (settings.max_file_bytes + 1))])
        assert response.status_code == 413 and "per file" in _detail(response)

    @pytest.mark.parametrize(
        ("name", "reason"),
        [
            ("../kernel.cpp", "contains a path"),
            ("src/kernel.cpp", "contains a path"),
            ("..\\..\\kernel.cpp", "kernel.cpp"),  # some parsers drop a Windows path: either refused or plain
            (".bashrc.cpp", "hidden"),
            ("ker..nel.cpp", "without folders or '..'"),
            ("ker nel.cpp", "may use only letters"),
            ("kérnel.cpp", "may use only letters"),
            ("kernel.so", "not a source file"),
        ],
    )
    def test_bad_file_names(self, client: TestClient, contest: Contest, name: str, reason: str) -> None:
        response = upload(client, contest.auth("alpha"), files=[(name, KERNEL)])
        assert response.status_code == 422 and reason in _detail(response), response.text

    def test_duplicate_and_missing_files(self, client: TestClient, contest: Contest) -> None:
        response = upload(client, contest.auth("alpha"), files=[("k.cpp", KERNEL), ("k.cpp", KERNEL)])
        assert response.status_code == 422 and "appears twice" in _detail(response)
        response = client.post("/api/v1/submissions", headers=contest.auth("alpha"),
                               data={"problem": "add_mul_relu", "backend": "cpu"},
                               files=[("other", ("x.txt", b"", "text/plain"))])  # fmt: skip
        assert response.status_code == 422 and "send source files as 'files'" in _detail(response)
        response = client.post("/api/v1/submissions", headers=contest.auth("alpha"), json={"problem": "x"})
        assert response.status_code == 415 and "multipart/form-data" in _detail(response)

    def test_unknown_problem_or_backend(self, client: TestClient, contest: Contest) -> None:
        response = upload(client, contest.auth("alpha"), problem="matmul")
        assert response.status_code == 422
        assert "not part of competition 'cup'" in _detail(response) and "add_mul_relu" in _detail(response)
        response = upload(client, contest.auth("alpha"), backend="tpu")
        assert response.status_code == 422 and "unknown backend 'tpu'" in _detail(response)
        response = upload(client, contest.auth("alpha"), backend="cuda")
        assert response.status_code == 422 and "not judged on backend 'cuda'" in _detail(response)


@pytest.mark.usefixtures("unchanged")
class TestWindow:
    def test_before_the_start(self, client: TestClient, contest: Contest, clock: Clock) -> None:
        clock.now = START - timedelta(minutes=5)
        response = upload(client, contest.auth("alpha"))
        assert response.status_code == 403 and "opens at 2030-05-01 08:00:00 UTC" in _detail(response)

    def test_after_the_end(self, client: TestClient, contest: Contest, clock: Clock) -> None:
        clock.now = START + timedelta(days=1)
        response = upload(client, contest.auth("alpha"))
        assert response.status_code == 403 and "closed at" in _detail(response)


class TestQuotas:
    def _set(self, client: TestClient, contest: Contest, **quotas: int) -> None:
        response = client.patch("/api/v1/admin/competitions/cup", headers=contest.auth("admin"), json=quotas)
        assert response.status_code == 200, response.text

    def _refused(self, client: TestClient, contest: Contest, database: Database, phrase: str) -> int:
        with database.session(write=False) as session:
            before = row_counts(session)
        response = upload(client, contest.auth("alpha"))
        assert response.status_code == 429 and phrase in _detail(response), response.text
        with database.session(write=False) as session:
            assert row_counts(session) == before
        return int(response.headers["retry-after"])

    def test_daily_quota(self, client: TestClient, contest: Contest, clock: Clock, database: Database) -> None:
        self._set(client, contest, quota_per_day=2, min_interval_s=0, max_in_flight=10)
        assert upload(client, contest.auth("alpha")).status_code == 202
        clock.advance(600)
        assert upload(client, contest.auth("alpha")).status_code == 202
        clock.advance(600)
        retry = self._refused(client, contest, database, "daily quota spent: 2 submissions")
        assert retry == 24 * 3600 - 1200  # the first one leaves the 24-hour window then
        assert upload(client, contest.auth("bravo")).status_code == 202  # quotas are per team

    def test_minimum_interval(self, client: TestClient, contest: Contest, clock: Clock, database: Database) -> None:
        self._set(client, contest, quota_per_day=50, min_interval_s=90, max_in_flight=10)
        assert upload(client, contest.auth("alpha")).status_code == 202
        clock.advance(30)
        assert self._refused(client, contest, database, "wait 60 s more") == 60
        clock.advance(60)
        assert upload(client, contest.auth("alpha")).status_code == 202

    def test_runs_in_flight(self, client: TestClient, contest: Contest, clock: Clock, database: Database) -> None:
        self._set(client, contest, quota_per_day=50, min_interval_s=0, max_in_flight=1)
        assert upload(client, contest.auth("alpha")).status_code == 202
        clock.advance(5)
        assert self._refused(client, contest, database, "1 runs still in flight (limit 1)") > 0
