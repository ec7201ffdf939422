"""The problem in the service: `/api/v1/problems`, `/api/v1/problems/<slug>`, the header."""

from __future__ import annotations

from fastapi.testclient import TestClient

from api.settings import Settings
from api.store.db import Session
from tests.api.conftest import Contest, make_contest


def test_the_list_names_the_competitions_problems(client: TestClient, contest: Contest) -> None:
    listed = client.get("/api/v1/problems").json()
    assert [p["slug"] for p in listed] == ["add_mul_relu", "sparse_flash_attention_grad"]
    assert listed[0]["backends"] == ["cpu"] and listed[0]["competitions"] == [contest.slug]
    assert listed[0]["page"] == "/p/add_mul_relu"
    assert client.get("/api/v1/problems", headers=contest.auth("alpha")).json() == listed  # the team's own
    missing = client.get("/api/v1/problems", params={"competition": "nope"})
    assert missing.status_code == 404


def test_a_problem_has_its_statement_cases_rules_and_baseline(client: TestClient, contest: Contest) -> None:
    body = client.get("/api/v1/problems/sparse_flash_attention_grad").json()
    assert body["header_name"] == "sparse_flash_attention_grad.h" and "kernel_run" in body["header"]
    (cpu,) = body["backends"]  # the competition judges it on the CPU only
    assert cpu["backend"] == "cpu"
    assert ">Sparse FlashAttention backward</h1>" in cpu["statement_html"].split("\n")[0]
    assert "<table>" in cpu["statement_html"] or "<pre>" in cpu["statement_html"]
    sets = {c["case_set"] for c in cpu["cases"]}
    assert sets == {"tests", "benchmarks"} and cpu["private_cases"] >= 1  # private ones only counted
    assert not any(c["name"].startswith("p0") for c in cpu["cases"])
    ragged = [c for c in cpu["cases"] if "ragged_topk" in c["flags"]]
    assert ragged and ragged[0]["sizes"]["D"] == 512
    assert body["tolerance"]["float16"]["atol"] == 1e-3
    assert cpu["timing"]["min_calls"] == 10 and cpu["timing"]["target_sem_percent"] == 0.5
    assert body["scoring"][0]["relative_to"] == "best" and body["rules"] == "/rules"
    (baseline,) = cpu["baseline"]
    assert baseline["name"] == "baseline.cpp" and "kernel_run" in baseline["content"]


def test_the_baseline_is_hidden_where_the_competition_says_so(client: TestClient, contest: Contest) -> None:
    changed = client.patch(f"/api/v1/admin/competitions/{contest.slug}", headers=contest.auth("admin"),
                           json={"baseline_public": False})  # fmt: skip
    assert changed.status_code == 200 and changed.json()["baseline_public"] is False
    body = client.get("/api/v1/problems/add_mul_relu").json()
    assert body["backends"][0]["baseline"] is None


def test_a_hidden_baseline_is_not_read_through_another_competition(
    client: TestClient, contest: Contest, session: Session, settings: Settings
) -> None:
    """A team of a contest that hides its baseline asked for the problem through another contest that
    shows it, and got the baseline source: its own contest decides for it."""
    assert client.patch(f"/api/v1/admin/competitions/{contest.slug}", headers=contest.auth("admin"),
                        json={"baseline_public": False}).status_code == 200  # fmt: skip
    make_contest(session, settings, slug="open-cup", teams=("zulu",))  # shows its baseline
    through_other = client.get("/api/v1/problems/add_mul_relu", params={"competition": "open-cup"},
                               headers=contest.auth("alpha"))  # fmt: skip
    assert through_other.status_code == 200
    assert through_other.json()["backends"][0]["baseline"] is None
    own = client.get("/api/v1/problems/add_mul_relu", headers=contest.auth("alpha")).json()
    assert own["backends"][0]["baseline"] is None
    anyone = client.get("/api/v1/problems/add_mul_relu", params={"competition": "open-cup"}).json()
    assert anyone["backends"][0]["baseline"] is not None  # that contest shows it to everyone


def test_the_header_downloads_and_unknown_problems_are_404(client: TestClient, contest: Contest) -> None:
    header = client.get("/api/v1/problems/add_mul_relu/header")
    assert header.status_code == 200 and header.headers["content-type"].startswith("text/x-c")
    assert 'filename="add_mul_relu.h"' in header.headers["content-disposition"]
    assert b"kernel_run" in header.content
    missing = client.get("/api/v1/problems/not_a_problem")
    assert missing.status_code == 404 and "not_a_problem" in missing.json()["detail"]


def test_statement_html_is_never_raw(client: TestClient, contest: Contest) -> None:
    from api.web.problem_info import render_markdown

    text = "# T\n<script>alert(1)</script>\n[x](javascript:alert(1))\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    html = render_markdown(text)
    assert "<script>" not in html and "&lt;script&gt;" in html  # shown as text
    assert 'href="javascript:' not in html and "<table>" in html
