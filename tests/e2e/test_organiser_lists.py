"""The organisers' lists and the report on the pages, without a browser: the organisers' recent submissions say
each one's competition and mode; a report's error cells are red only where that bound is passed."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from api.store.runs import claim_run, finish_run
from api.store.submissions import create_submission
from api.store.teams import list_teams
from api.store.types import utcnow
from judge.backends import Backend, CaseSet
from judge.modes import RunMode
from judge.results import CaseResult, JudgeResult, OutputCheck
from judge.verdict import Verdict
from tests.e2e.conftest_pages import AppClient, in_process_app, log_in_client

KERNEL = b'#include "add_mul_relu.h"\nextern "C" int kernel_run(const kernel_args* a) { return 0; }\n'


@pytest.fixture
def app_client(tmp_path: Path) -> Iterator[AppClient]:
    yield from in_process_app(tmp_path)


def _failed_on_max_error(client: AppClient) -> int:
    _, seed, database = client
    with database.session() as session:
        team = list_teams(session, competition=seed.competition)[0]
        created = create_submission(session, team_id=team.id, problem="add_mul_relu", backend=Backend.CPU,
                                    files=[("kernel.cpp", KERNEL)], queue="judge.cpu", now=utcnow(),
                                    mode=RunMode.TEST)  # fmt: skip
        claim_run(session, run_id=created.run_id, worker="w", now=utcnow())
        check = OutputCheck(passed=False, max_abs_err=0.5, mere=1.57e-08, mare=0.1, within_mixed_tol=0.99,
                            allowed_abs_err=0.01, allowed_mere=1.79e-07)  # fmt: skip
        case = CaseResult(name="t02_odd_f32", case_set=CaseSet.TESTS, passed=False, verdict=Verdict.WA,
                          outputs={"y": check}, message="y is wrong")  # fmt: skip
        result = JudgeResult(verdict=Verdict.WA, problem="add_mul_relu", backend=Backend.CPU, message="y is wrong",
                             cases=[case], mode=RunMode.TEST)  # fmt: skip
        finish_run(session, run_id=created.run_id, result=result, worker_info={}, now=utcnow())
        return created.submission_id


def test_recent_submissions_say_competition_and_mode(app_client: AppClient) -> None:
    client, seed, _ = app_client
    submission = _failed_on_max_error(app_client)
    assert seed.admin_token is not None
    log_in_client(client, seed.admin_token)
    page = client.get("/admin").text
    recent = page[page.index('id="recent"'):]
    assert "<th>Competition</th>" in recent and "<th>Mode</th>" in recent
    row = re.search(rf'<tr><td><a href="/s/{submission}">.*?</tr>', recent, re.S)
    assert row is not None and f"<td>{seed.competition}</td>" in row.group(0) and ">test</span>" in row.group(0)


def test_a_failing_rows_mere_within_its_allowance_is_not_red(app_client: AppClient) -> None:
    client, seed, _ = app_client
    submission = _failed_on_max_error(app_client)
    assert seed.admin_token is not None
    log_in_client(client, seed.admin_token)
    page = client.get(f"/s/{submission}").text
    row = page[page.index("data-case='t02_odd_f32'") if "data-case='t02_odd_f32'" in page
               else page.index('data-case="t02_odd_f32"'):]  # fmt: skip
    assert '<span class="over">0.5</span>' in row[:4000], row[:2000]  # max error: over
    assert re.search(r'<span class="under">1\.57e-08</span>', row[:4000]), row[:2000]  # MERE: within, not red
