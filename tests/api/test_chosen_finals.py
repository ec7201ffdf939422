"""Chosen finals, ranked_by `chosen` (docs/organisers.md): a team marks up to N ranked submissions per
problem; the final ranking takes the best of those on the private set, its latest until it marks any."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

import api.client.finals as finals_cli
from api.cli import build_app
from api.client.http import OpjudgeClient
from api.store.db import Session
from api.store.ranking import leaderboard
from api.store.submissions import disqualify_submission
from tests.api.conftest import START, Clock, Contest
from tests.api.helpers import public_id
from tests.api.judging import judged, open_quotas


class _Forward(httpx.BaseTransport):
    """The CLI's httpx requests, answered by the test client (whichever httpx it is built on)."""

    def __init__(self, client: TestClient) -> None:
        self.client = client

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        answer = self.client.request(request.method, str(request.url), headers=dict(request.headers),
                                     content=request.read())  # fmt: skip
        headers = {k: v for k, v in answer.headers.items()
                   if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")}  # fmt: skip
        return httpx.Response(answer.status_code, headers=headers, content=answer.content)


def _ranks(session: Session, contest: Contest, team: str, *, final: bool) -> int:
    board = leaderboard(session, competition=contest.slug, final=final)
    session.rollback()
    (row,) = [r for r in board.rows if r.team_name == team]
    return row.submission_ids["add_mul_relu"]


def _choose(client: TestClient, session: Session, contest: Contest, ids: list[int], team: str = "alpha") -> Any:
    """PUT the finals, naming the submissions by their public ids as a team does."""
    return client.put("/api/v1/finals", headers=contest.auth(team),
                      json={"submission_ids": [public_id(session, i) for i in ids]})  # fmt: skip


def test_the_final_takes_the_best_of_the_chosen_and_the_latest_until_then(
    client: TestClient, session: Session, contest: Contest, clock: Clock
) -> None:
    open_quotas(session, contest, clock, ranked_by="chosen", finals_limit=2)
    good = judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5}, private={"p1": 0.5})
    slow = judged(session, contest, clock, "alpha", benchmarks={"b1": 0.9}, private={"p1": 0.9})
    latest = judged(session, contest, clock, "alpha", benchmarks={"b1": 0.8}, private={"p1": 0.8})
    bravo = judged(session, contest, clock, "bravo", benchmarks={"b1": 0.6}, private={"p1": 0.6})
    assert _ranks(session, contest, "alpha", final=True) == latest  # nothing chosen: the latest counts

    chosen = _choose(client, session, contest, [slow, good])
    assert chosen.status_code == 200, chosen.text
    # Which of the two the final ranking takes is a private result: the answer names the marked set
    # only, until the final ranking is published.
    assert set(chosen.json()["chosen"]) == {public_id(session, slow), public_id(session, good)}
    assert chosen.json()["counting"] == {}
    assert _ranks(session, contest, "alpha", final=True) == good  # the best of the two on the private set
    assert _ranks(session, contest, "alpha", final=False) == latest  # the public board ranks the latest

    disqualify_submission(session, submission_id=good, reason="reads the timer", actor=None, now=clock.now)
    assert _ranks(session, contest, "alpha", final=True) == slow  # the other final
    assert _choose(client, session, contest, []).status_code == 200
    assert _ranks(session, contest, "alpha", final=True) == latest

    too_many = _choose(client, session, contest, [slow, latest, good])
    assert too_many.status_code == 422 and "disqualified" in too_many.json()["detail"]
    three = judged(session, contest, clock, "alpha", benchmarks={"b1": 0.7}, private={"p1": 0.7})
    over = _choose(client, session, contest, [slow, latest, three])
    assert over.status_code == 422 and "at most 2 finals per problem" in over.json()["detail"]
    others = _choose(client, session, contest, [bravo])
    assert others.status_code == 404 and "among your team's submissions" in others.json()["detail"]

    clock.now = START + timedelta(days=1)
    closed = _choose(client, session, contest, [slow])
    assert closed.status_code == 403 and "until the window ended" in closed.json()["detail"]


def test_no_finals_to_choose_unless_the_competition_ranks_chosen(
    client: TestClient, session: Session, contest: Contest, clock: Clock
) -> None:
    open_quotas(session, contest, clock)
    one = judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5}, private={"p1": 0.5})
    refused = _choose(client, session, contest, [one])
    assert refused.status_code == 422 and "no finals to choose" in refused.json()["detail"]
    bad = client.patch(f"/api/v1/admin/competitions/{contest.slug}", headers=contest.auth("admin"),
                       json={"finals_limit": 0})  # fmt: skip
    assert bad.status_code == 422


def test_the_cli_shows_and_chooses_finals(
    client: TestClient, session: Session, contest: Contest, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_quotas(session, contest, clock, ranked_by="chosen", finals_limit=1)
    first = judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5}, private={"p1": 0.5})
    judged(session, contest, clock, "alpha", benchmarks={"b1": 0.8}, private={"p1": 0.8})
    transport = _Forward(client)  # the app in this process, without a server
    monkeypatch.setattr(finals_cli, "OpjudgeClient",
                        lambda url, token: OpjudgeClient(url, token, transport=transport))  # fmt: skip
    monkeypatch.setenv("XDG_CONFIG_HOME", "/nonexistent")
    args = ["--url", "http://testserver", "--token", contest.tokens["alpha"]]
    runner = CliRunner()
    shown = runner.invoke(build_app(), ["finals", "show", *args])  # type: ignore[arg-type]
    assert shown.exit_code == 0, shown.output
    assert "latest submission per problem counts" in shown.output
    done = runner.invoke(build_app(), ["finals", "choose", public_id(session, first), *args])  # type: ignore[arg-type]
    assert done.exit_code == 0, done.output
    assert _ranks(session, contest, "alpha", final=True) == first
    refused = runner.invoke(build_app(), ["finals", "choose", "999999", *args])  # type: ignore[arg-type]
    assert refused.exit_code == 1 and "999999" in refused.output


def test_the_finals_answer_is_no_oracle_on_the_private_cases(
    client: TestClient, session: Session, contest: Contest, clock: Clock
) -> None:
    """A team marks a variant better on the public cases and one 6x faster on a private one: nothing it
    is told before publication may say which the private cases prefer."""
    open_quotas(session, contest, clock, ranked_by="chosen", finals_limit=2)
    public_winner = judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5}, private={"p1": 0.9})
    private_winner = judged(session, contest, clock, "alpha", benchmarks={"b1": 0.9}, private={"p1": 0.15})
    answer = _choose(client, session, contest, [public_winner, private_winner]).json()
    assert public_id(session, private_winner) not in answer["counting"].values()
    shown = client.get("/api/v1/finals", headers=contest.auth("alpha")).json()
    assert shown["counting"] == {}
    assert set(shown["chosen"]) == {public_id(session, public_winner), public_id(session, private_winner)}

    open_quotas(session, contest, clock, ranked_by="best", finals_limit=2)  # no marking needed under best
    best = client.get("/api/v1/finals", headers=contest.auth("alpha")).json()
    assert best["counting"] == {}
    assert _ranks(session, contest, "alpha", final=True) == private_winner  # the final ranking still knows
