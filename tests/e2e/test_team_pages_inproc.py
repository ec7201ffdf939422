"""The new team-facing parts of the pages without a browser: the queue position on a
waiting run's report, the mode on the report and the team page, the tie mark on the board, the
kernel-output box, and problem pages for a backend the competition does not judge."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from api.store.runs import claim_run, finish_run
from api.web.pages.report import kernel_output_view
from tests.api.helpers import judge_run_id, result
from tests.e2e.conftest_pages import AMR_BASELINE, AppClient, in_process_app, log_in_client


@pytest.fixture
def app_client(tmp_path: Path) -> Iterator[AppClient]:
    yield from in_process_app(tmp_path)


def upload(client, token: str, mode: str) -> dict:  # type: ignore[no-untyped-def]
    answer = client.post("/api/v1/submissions", headers={"Authorization": f"Bearer {token}"},
                         data={"problem": "add_mul_relu", "backend": "cpu", "mode": mode},
                         files=[("files", ("kernel.cpp", AMR_BASELINE.read_bytes(), "text/x-c++src"))])  # fmt: skip
    assert answer.status_code == 202, answer.text
    return dict(answer.json())


def test_a_waiting_runs_report_says_its_place_and_its_mode(app_client: AppClient) -> None:
    client, seed, _database = app_client
    ranked = upload(client, seed.team_tokens["alpha"], "ranked")  # runs stay queued here: no worker
    test = upload(client, seed.team_tokens["charlie"], "test")
    log_in_client(client, seed.team_tokens["alpha"])
    page = client.get(f"/s/{ranked['id']}").text
    assert 'id="queue-position">number 2</strong> in judge.cpu' in page  # charlie's test run goes first
    assert 'id="run-mode"' in page and "ranked run" in page and 'id="mode-note"' not in page
    frag = client.get(f"/s/{ranked['id']}/timeline.frag").text
    assert "number 2" in frag
    log_in_client(client, seed.team_tokens["charlie"])
    page = client.get(f"/s/{test['id']}").text
    assert "number 1</strong>" in page and "test run" in page and "does not count on the board" in page
    team = client.get("/team").text
    assert 'class="mode-test">test</td>' in team and 'id="quota-benchmark"' in team


def test_equal_scores_are_marked_as_a_tie(app_client: AppClient) -> None:
    client, seed, database = app_client
    for team in ("alpha", "bravo"):
        created = upload(client, seed.team_tokens[team], "ranked")
        with database.session() as session:
            run_id = judge_run_id(session, created["id"])
            claim_run(session, run_id=run_id, worker="w")
            outcome = result(benchmarks={"b01_4m_f32": 0.9, "b02_4m_bf16": 0.9})
            finish_run(session, run_id=run_id, result=outcome, worker_info={})
    board = client.get("/c/demo").text
    assert board.count("tie: earlier first") == 2


def test_the_kernel_output_box_only_shows_what_the_kernel_printed() -> None:
    note = "\n[output written from the first private case on is not shown]"
    assert kernel_output_view(note) == {"kernel_printed": "", "kernel_withheld": True}
    assert kernel_output_view("hello\n" + note) == {"kernel_printed": "hello\n", "kernel_withheld": True}
    assert kernel_output_view("") == {"kernel_printed": "", "kernel_withheld": False}


def test_problem_pages_refuse_a_backend_the_competition_does_not_judge(app_client: AppClient) -> None:
    client, _seed, _database = app_client
    assert client.get("/p/add_mul_relu").status_code == 200
    refused = client.get("/p/add_mul_relu?backend=npu")
    assert refused.status_code == 404 and "backends: cpu" in refused.text
    assert client.get("/p/no_such_problem").status_code == 404
    rules = client.get("/rules")
    assert rules.status_code == 200 and 'id="run-modes"' in rules.text


def test_the_pass_rule_and_the_report_explain_their_terms(app_client: AppClient) -> None:
    """Tolerances in words, not raw keys; MERE explained where the report shows it."""
    client, seed, database = app_client
    page = client.get("/p/sparse_flash_attention_grad").text
    table = page.split('id="tolerances"', 1)[1].split("</table>", 1)[0]
    assert "MERE floor: elements with |G| below it are left out of MERE" in table
    assert "mixed_tol</th>" not in table and "mere_floor</th>" not in table  # no raw key as a column
    assert table.count("</th>") == 4  # the row label and the three dtypes: the table is as wide as that
    created = upload(client, seed.team_tokens["alpha"], "test")
    with database.session() as session:
        run_id = judge_run_id(session, created["id"])
        assert claim_run(session, run_id=run_id, worker="w") is not None
        finish_run(session, run_id=run_id, result=result(), worker_info={})
    log_in_client(client, seed.team_tokens["alpha"])
    report = client.get(f"/s/{created['id']}").text
    assert 'id="cases-legend"' in report and "mean relative error" in report
