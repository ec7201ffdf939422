"""Bad input: each bad request gets the right status and a clear reason, and changes nothing."""

from __future__ import annotations

import html
from collections.abc import Iterator
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient

from api.settings import Settings
from api.store.competitions import update_competition
from api.store.db import Database
from api.store.errors import InvalidInputError
from api.store.reviews import list_reviews
from api.store.stats import row_counts
from api.web.app import create_app
from api.web.pages.auth import TOKEN_COOKIE, csrf_token
from tests.api.conftest import START, Clock, Contest, RecordingDispatcher
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
                assert "needs an admin token" in _detail(response)
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
        response = upload(client, contest.auth("alpha"), backend="")  # a clear reason, not "unknown backend ''"
        assert response.status_code == 422 and "the 'backend' field is missing; backends: cpu" in _detail(response)

    def test_the_problem_page_words_the_stopping_rule_as_the_rules_do(self) -> None:
        """The page said "standard error under 0.5 % of the mean", the rules the ratio's interval."""
        from pathlib import Path

        root = Path(__file__).parents[2]
        page = (root / "api/web/templates/problem.html").read_text()
        assert "until the 95 % interval of the case's ratio to the baseline is within" in page
        assert "standard error" not in page
        rules = (root / "docs/rules.md").read_text()
        assert "until the 95 % interval of your case's ratio (below) is within 0.5 % of it" in rules


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


# ---- values out of range, unrenderable input, and what the pages answer for bad input ------------------------

HUGE = (2**31, 2**63, 10**20)  # past int4 (PostgreSQL's ids), int8, and any integer column
FULL_MARKS = {"design": 40, "code_quality": 30, "presentation": 30}
NOT_A_STRING = "\ud800"  # a lone surrogate: valid in JSON text, yet no Unicode string


def _json(client: TestClient, method: str, url: str, headers: dict[str, str], text: str):  # type: ignore[no-untyped-def]
    """A request with a hand-written JSON body (NaN and Infinity are no JSON a client library writes)."""
    return client.request(method, url, headers={**headers, "Content-Type": "application/json"}, content=text)


def _items(response) -> list[dict[str, object]]:  # type: ignore[no-untyped-def]
    """The 422's list of problems; each names where, what and which kind, and never echoes the input."""
    assert response.status_code == 422, response.text
    items = response.json()["detail"]
    assert items and all(set(item) == {"loc", "msg", "type"} for item in items), items
    return items


@pytest.mark.usefixtures("unchanged")
class TestOutOfRange:
    def test_ids_past_the_columns_are_unknown(self, client: TestClient, contest: Contest) -> None:
        admin, reviewer = contest.auth("admin"), contest.auth("reviewer")
        for huge in HUGE:
            calls = [
                ("get", f"/api/v1/submissions/{huge}", admin, None, "no submission"),
                ("get", f"/api/v1/submissions/{huge}/sources", admin, None, "no submission"),
                ("put", f"/api/v1/review/teams/{huge}", reviewer, {"marks": FULL_MARKS}, "no team"),
                ("get", f"/api/v1/admin/teams/{huge}/tokens", admin, None, "no team"),
                ("post", f"/api/v1/admin/teams/{huge}/tokens", admin, None, "no team"),
                ("delete", f"/api/v1/admin/tokens/{huge}", admin, None, "no token"),
                ("delete", f"/api/v1/admin/reviewers/{huge}", admin, None, "no reviewer"),
                ("post", f"/api/v1/admin/submissions/{huge}/disqualify", admin, {"reason": "x"}, "no submission"),
                ("post", "/api/v1/admin/competitions/cup/rejudge", admin, {"submission_id": huge}, "no submission"),
                ("post", "/api/v1/admin/competitions/cup/rejudge", admin, {"team_id": huge}, "no team"),
            ]
            for method, url, headers, body, reason in calls:
                response = client.request(method, url, headers=headers, json=body)
                assert response.status_code == 404 and reason in _detail(response), (url, response.text)

    def test_cursors_and_filters_past_the_columns_are_refused(self, client: TestClient, contest: Contest) -> None:
        for huge in HUGE:
            # A team pages by a submission's public id: a number names nothing (404, with the reason).
            response = client.get(f"/api/v1/submissions?before_id={huge}", headers=contest.auth("alpha"))
            assert response.status_code == 404 and "not by a number" in _detail(response)
            for url, who in ((f"/api/v1/admin/competitions/cup/submissions?before_id={huge}", "admin"),
                             (f"/api/v1/admin/competitions/cup/submissions?team_id={huge}", "admin"),
                             (f"/api/v1/admin/audit?before_id={huge}", "admin")):  # fmt: skip
                items = _items(client.get(url, headers=contest.auth(who)))
                assert "less than or equal to 2147483647" in items[0]["msg"], url
            response = client.put("/api/v1/admin/competitions/cup/finalists", headers=contest.auth("admin"),
                                  json={"team_ids": [huge]})  # fmt: skip
            assert _items(response)[0]["loc"] == ["body", "team_ids", 0]

    @pytest.mark.parametrize(
        ("changes", "field"),
        [
            ({"max_in_flight": 10**20}, "max_in_flight"),
            ({"quota_per_day": 3_000_000_000}, "quota_per_day"),  # fits SQLite, not PostgreSQL's int4
            ({"max_in_flight": 0}, "max_in_flight"),  # teams would wait forever
            ({"quota_per_day": 0}, "quota_per_day"),
            ({"min_interval_s": 10**20}, "min_interval_s"),
        ],
    )
    def test_settings_out_of_range(self, client: TestClient, contest: Contest, changes: dict[str, int],
                                   field: str) -> None:  # fmt: skip
        response = client.patch("/api/v1/admin/competitions/cup", headers=contest.auth("admin"), json=changes)
        assert _items(response)[0]["loc"] == ["body", field]

    def test_the_store_refuses_zero_quotas_too(self, session, contest: Contest) -> None:  # type: ignore[no-untyped-def]
        for field in ("quota_per_day", "max_in_flight"):
            with pytest.raises(InvalidInputError, match=f"{field} must be a whole number from 1"):
                update_competition(session, slug="cup", changes={field: 0}, actor=None, now=START)
            session.rollback()

    @pytest.mark.parametrize(
        ("changes", "reason"),
        [
            ({"starts_at": "0001-01-01T00:00:00+05:00"}, "starts_at: 0001-01-01T00:00:00+05:00 is outside the years"),
            ({"ends_at": "9999-12-31T23:59:59-05:00"}, "ends_at: 9999-12-31T23:59:59-05:00 is outside the years"),
            ({"freeze_at": "0001-01-01T00:00:00+05:00"}, "freeze_at: 0001-01-01T00:00:00+05:00 is outside"),
        ],
    )
    def test_dates_at_the_calendars_edge(self, client: TestClient, contest: Contest, changes: dict[str, str],
                                         reason: str) -> None:  # fmt: skip
        edit = client.patch("/api/v1/admin/competitions/cup", headers=contest.auth("admin"), json=changes)
        assert edit.status_code == 422 and reason in _detail(edit), edit.text
        new = {"slug": "edge", "title": "Edge", "starts_at": "2030-01-01T00:00:00Z", "ends_at": "2030-01-02T00:00:00Z"}
        created = client.post("/api/v1/admin/competitions", headers=contest.auth("admin"), json=new | changes)
        assert created.status_code == 422 and reason in _detail(created), created.text

    def test_as_of_needs_a_zone_and_a_utc_form(self, client: TestClient, contest: Contest) -> None:
        url = "/api/v1/competitions/cup/leaderboard"
        naive = client.get(url, params={"as_of": "2030-05-01T14:00:00"}, headers=contest.auth("admin"))
        assert _items(naive)[0]["loc"] == ["query", "as_of"] and "timezone" in _items(naive)[0]["msg"]
        edge = client.get(url, params={"as_of": "0001-01-01T00:00:00+05:00"}, headers=contest.auth("admin"))
        assert "outside the years 1 to 9999" in str(_items(edge)[0]["msg"])
        assert client.get(url, params={"as_of": "2030-05-01T14:00:00+02:00"}, headers=contest.auth("admin")).is_success

    def test_a_value_the_database_refuses_is_a_422_not_a_500(self, client: TestClient, contest: Contest) -> None:
        # No bound covers a NUL in a query string: PostgreSQL refuses it, SQLite finds nothing.
        response = client.get("/api/v1/admin/competitions/cup/submissions?problem=add%00mul",
                              headers=contest.auth("admin"))  # fmt: skip
        assert response.status_code in (200, 422), response.text
        if response.status_code == 422:
            assert "cannot be stored or looked up" in _detail(response)


@pytest.mark.usefixtures("unchanged")
class TestUnrenderableInput:
    """NaN and lone surrogates once crashed FastAPI's own 422 answer (it echoes the input)."""

    @pytest.mark.parametrize(
        ("method", "url", "who", "body", "loc"),
        [
            ("put", "/api/v1/review/teams/1", "reviewer", '{"marks": {"design": 1}, "comment": NaN}', "comment"),
            ("put", "/api/v1/review/teams/1", "reviewer", '{"marks": {"design": NaN}}', "design"),
            ("patch", "/api/v1/admin/competitions/cup", "admin", '{"score_cap": NaN}', "score_cap"),
            ("patch", "/api/v1/admin/competitions/cup", "admin", '{"online_weight": Infinity}', "online_weight"),
            ("patch", "/api/v1/admin/competitions/cup", "admin", '{"reviewer_weight": Infinity}', "reviewer_weight"),
            ("patch", "/api/v1/admin/competitions/cup", "admin", '{"rubric": {"design": Infinity}}', "design"),
            ("patch", "/api/v1/admin/competitions/cup", "admin", '{"title": "\\ud800"}', "title"),
            ("post", "/api/v1/admin/tokens", "admin", '{"label": "\\ud800"}', "label"),
            ("post", "/api/v1/admin/competitions/cup/teams", "admin", '{"name": "\\ud800"}', "name"),
            ("post", "/api/v1/admin/submissions/1/disqualify", "admin", '{"reason": "\\ud800"}', "reason"),
            ("put", "/api/v1/review/teams/1", "reviewer", '{"marks": {}, "comment": "\\ud800"}', "comment"),
            ("put", "/api/v1/review/teams/1", "reviewer", '{"marks": {"\\ud800": 1}}', "[key]"),
            ("put", "/api/v1/review/teams/1", "reviewer", '{"marks": {"design": 1}', "json"),  # broken JSON
        ],
    )
    def test_answered_422_without_the_input(self, client: TestClient, contest: Contest, method: str, url: str,
                                            who: str, body: str, loc: str) -> None:  # fmt: skip
        items = _items(_json(client, method, url, contest.auth(who), body))
        assert any(loc in str(item["loc"]) + str(item["type"]) for item in items), items

    @pytest.mark.parametrize(
        ("url", "who", "body"),
        [
            ("/api/v1/review/teams/1", "reviewer", {"marks": FULL_MARKS, "comment": "a\x00b"}),
            ("/api/v1/admin/submissions/1/disqualify", "admin", {"reason": "a\x00b"}),
            ("/api/v1/admin/competitions/cup/teams", "admin", {"name": "a\x00b"}),
            ("/api/v1/admin/tokens", "admin", {"label": "a\x00b"}),
            ("/api/v1/admin/competitions", "admin", {"slug": "nul", "title": "a\x00b",
             "starts_at": "2030-01-01T00:00:00Z", "ends_at": "2030-01-02T00:00:00Z"}),
        ],
    )  # fmt: skip
    def test_nul_in_text_is_refused(self, client: TestClient, contest: Contest, url: str, who: str,
                                    body: dict[str, object]) -> None:  # fmt: skip
        method = "put" if url.startswith("/api/v1/review") else "post"
        items = _items(client.request(method, url, headers=contest.auth(who), json=body))
        assert "NUL character" in str(items[0]["msg"])


@pytest.mark.usefixtures("unchanged")
class TestScoringSettings:
    def test_duplicate_backends(self, client: TestClient, contest: Contest) -> None:
        response = client.post("/api/v1/admin/competitions/cup/problems", headers=contest.auth("admin"),
                               json={"problem": "add_mul_relu", "backends": ["cpu", "cpu"]})  # fmt: skip
        assert response.status_code == 422 and "backend cpu is listed more than once" in _detail(response)

    def test_marks_are_strict_numbers(self, client: TestClient, contest: Contest) -> None:
        url = f"/api/v1/review/teams/{contest.team_ids['alpha']}"
        for mark in (True, "30"):
            body = {"marks": {**FULL_MARKS, "code_quality": mark}}
            items = _items(client.put(url, headers=contest.auth("reviewer"), json=body))
            assert items[0]["loc"] == ["body", "marks", "code_quality"] and "valid number" in str(items[0]["msg"])

    def test_the_store_refuses_what_the_edge_would(self, session, contest: Contest) -> None:  # type: ignore[no-untyped-def]
        for changes in ({"online_weight": float("inf")}, {"reviewer_weight": float("nan")},
                        {"rubric": {"design": float("inf")}}, {"rubric": {"design": True}}):  # fmt: skip
            with pytest.raises(InvalidInputError):
                update_competition(session, slug="cup", changes=changes, actor=None, now=START)
            session.rollback()


@pytest.mark.usefixtures("unchanged")
class TestSmaller:
    def test_an_empty_file_is_refused_by_name(self, client: TestClient, contest: Contest) -> None:
        response = upload(client, contest.auth("alpha"), files=[("kernel.cpp", KERNEL), ("empty.h", b"")])
        assert response.status_code == 422 and "'empty.h' is empty" in _detail(response)

    def test_a_long_file_name_is_told_the_limit(self, client: TestClient, contest: Contest) -> None:
        response = upload(client, contest.auth("alpha"), files=[("k" * 296 + ".cpp", KERNEL)])
        assert response.status_code == 422 and "300 characters long; the limit is 64" in _detail(response)

    def test_tokens_of_an_unknown_team(self, client: TestClient, contest: Contest) -> None:
        for method in ("get", "post"):
            response = client.request(method, "/api/v1/admin/teams/999/tokens", headers=contest.auth("admin"))
            assert response.status_code == 404 and "no team 999" in _detail(response)


# ---- the pages ------------------------------------------------------------------------------------------------


@pytest.fixture
def pages(settings: Settings, database: Database, dispatcher: RecordingDispatcher, clock: Clock,
          contest: Contest) -> Iterator[TestClient]:  # fmt: skip
    app = create_app(settings, dispatcher, database=database, clock=clock)
    with TestClient(app) as client:
        yield client


def _log_in(pages: TestClient, contest: Contest, settings: Settings, who: str) -> str:
    """Log `who` in by cookie; their CSRF token."""
    pages.cookies.set(TOKEN_COOKIE, contest.tokens[who])
    return csrf_token(settings, contest.tokens[who])


def _page(response, status: int, phrase: str) -> None:  # type: ignore[no-untyped-def]
    assert response.status_code == status, response.text[:500]
    assert response.headers["content-type"].startswith("text/html"), response.text[:500]
    assert phrase in html.unescape(response.text), response.text[:2000]


class TestPagesAnswerBadInputWithPages:
    def test_admin_forms(self, pages: TestClient, contest: Contest, settings: Settings, database: Database) -> None:
        csrf = _log_in(pages, contest, settings, "admin")
        with database.session(write=False) as session:
            before = row_counts(session)
        _page(pages.post("/admin/s/3/rejudge", data={}), 403, "security token is missing")
        _page(pages.post("/admin/s/3/disqualify", data={"reason": "copied"}), 403, "security token is missing")
        _page(pages.post("/admin/s/3/disqualify", data={"csrf": csrf}), 400, "reason: Field required")
        _page(pages.post("/admin/s/3/disqualify", data={"csrf": csrf, "reason": "a\x00b"}), 400, "NUL character")
        _page(pages.post("/admin/c/cup/final", data={"csrf": csrf}), 400, "published: Field required")
        _page(pages.post("/admin/c/cup/final", data={"csrf": csrf, "published": "maybe"}), 400, "published")
        _page(pages.post(f"/admin/s/{HUGE[2]}/rejudge", data={"csrf": csrf}), 404, f"no submission {HUGE[2]}")
        with database.session(write=False) as session:
            assert row_counts(session) == before

    def test_page_urls(self, pages: TestClient, contest: Contest, settings: Settings) -> None:
        _page(pages.get("/c/cup?hall=abc"), 400, "hall: Input should be a valid boolean")
        _page(pages.get("/c/cup?view=bogus"), 400, "view: String should match")
        _log_in(pages, contest, settings, "admin")
        _page(pages.get("/s/abc"), 404, "no submission abc")
        for huge in HUGE:
            _page(pages.get(f"/s/{huge}"), 404, f"no submission {huge}")
            _page(pages.get(f"/s/{huge}/timeline.frag"), 404, f"no submission {huge}")

    def test_review_urls(self, pages: TestClient, contest: Contest, settings: Settings) -> None:
        csrf = _log_in(pages, contest, settings, "reviewer")
        _page(pages.get("/review?saved=abc"), 400, "saved: Input should be a valid integer")
        _page(pages.post("/review/abc", data={"csrf": csrf}), 404, "there is no page at /review/abc")
        _page(pages.post(f"/review/{HUGE[1]}", data={"csrf": csrf}), 404, f"no team {HUGE[1]}")
        opened = pages.get("/review/abc")  # a form's target opened in the browser
        _page(opened, 405, "/review/abc takes a form, not a GET")
        assert opened.headers["allow"] == "POST"
        _page(pages.get("/no/such/page"), 404, "there is no page at /no/such/page")
        api = pages.get("/api/v1/no/such/thing")  # the JSON API keeps its JSON
        assert api.status_code == 404 and api.json() == {"detail": "Not Found"}

    def test_a_long_review_comment_is_refused_not_cut(self, pages: TestClient, contest: Contest, settings: Settings,
                                                     database: Database) -> None:  # fmt: skip
        csrf = _log_in(pages, contest, settings, "reviewer")
        team = contest.team_ids["alpha"]
        form = {"csrf": csrf, **{f"mark_{k}": str(v) for k, v in FULL_MARKS.items()}}
        refused = pages.post(f"/review/{team}", data=form | {"comment": "x" * 10_001})
        _page(refused, 422, "the comment has 10001 characters; the limit is 10000")
        assert "x" * 10_001 in refused.text, "the refused form must come back with what was typed"
        assert 'maxlength="10000"' in refused.text
        _page(pages.post(f"/review/{team}", data=form | {"comment": "a\x00b"}), 422, "NUL character")
        with database.session(write=False) as session:
            assert list_reviews(session, reviewer_id=contest.reviewer_id) == []
        saved = pages.post(f"/review/{team}", data=form | {"comment": "y" * 10_000}, follow_redirects=False)
        assert saved.status_code == 303, saved.text[:500]
        with database.session(write=False) as session:
            assert [len(r.comment) for r in list_reviews(session, reviewer_id=contest.reviewer_id)] == [10_000]
