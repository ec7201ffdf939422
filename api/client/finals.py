"""`opjudge finals show` and `opjudge finals choose ID...` (ranked_by `chosen`, docs/organisers.md)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from api.client.commands import JsonOption, TokenOption, UrlOption, emit, errors
from api.client.config import resolve
from api.client.http import OpjudgeClient

finals_app = typer.Typer(help="mark the submissions your final ranking takes the best of (ranked_by chosen)")


def register(app: typer.Typer) -> None:
    app.add_typer(finals_app, name="finals")


@finals_app.command("show")
def show_command(url: UrlOption = None, token: TokenOption = None, as_json: JsonOption = False) -> None:
    """Your finals, the submission each problem's final ranking scores now, and what you may mark."""
    with errors(as_json):
        config = resolve(url=url, token=token)
        with OpjudgeClient(config.url, config.token) as client:
            _show(client.finals(), as_json)


@finals_app.command("choose")
def choose_command(
    submission_ids: Annotated[list[str], typer.Argument(help="submission ids; none: your latest counts again")] = [],  # noqa: B006 - Typer reads the default
    url: UrlOption = None,
    token: TokenOption = None,
    as_json: JsonOption = False,
) -> None:
    """Replace your finals by these submissions (up to the competition's limit per problem)."""
    with errors(as_json):
        config = resolve(url=url, token=token)
        with OpjudgeClient(config.url, config.token) as client:
            _show(client.choose_finals(list(submission_ids)), as_json)


def _show(finals: dict[str, Any], as_json: bool) -> None:
    if as_json:
        emit(finals)
    else:
        _print(finals)


def _print(finals: dict[str, Any]) -> None:
    console = Console()
    if finals["ranked_by"] != "chosen":
        console.print(f"This competition ranks each team's {finals['ranked_by']} submission: no finals to choose.")
        return
    chosen, counting = set(finals["chosen"]), set(finals["counting"].values())
    table = Table(title=f"Finals: up to {finals['limit']} per problem, until {finals['open_until']}")
    for column in ("id", "problem", "verdict", "score", "final", "counts now"):
        table.add_column(column)
    for s in finals["choosable"]:
        score = "" if s["score"] is None else f"{s['score']:.2f}"
        table.add_row(str(s["id"]), s["problem"], s["verdict"] or "", score, "yes" if s["id"] in chosen else "",
                      "yes" if s["id"] in counting else "")  # fmt: skip
    console.print(table)
    if not chosen:
        console.print("No finals marked: your latest submission per problem counts.")
    else:
        console.print("Which of your marked finals counts is a private result: it is shown once the final "
                      "ranking is published.")
