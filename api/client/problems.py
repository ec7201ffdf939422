"""`opjudge problems` and `opjudge problem <slug> [--header]`: the problems as the server shows them.

`opjudge problems` lists the server's problems when a server is configured
(--url, OPJUDGE_URL or `opjudge login`), and this checkout's problem packages
(for `opjudge judge`, the local judge) when none is, or with `--local`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table

from api.client.commands import JsonOption, TokenOption, UrlOption, emit, errors
from api.client.config import ConfigError, resolve
from api.client.http import OpjudgeClient
from judge.backends import CaseSet
from judge.problem import list_problems, load_problem


def register(app: typer.Typer) -> None:
    # `problems` replaces the engine's local-only listing; --local keeps it.
    app.registered_commands = [c for c in app.registered_commands if c.name != "problems"]
    app.command("problems")(problems_command)
    app.command("problem")(problem_command)


def problems_command(
    local: Annotated[bool, typer.Option("--local", help="this checkout's problem packages, not the server's")] = False,
    url: UrlOption = None,
    token: TokenOption = None,
    as_json: JsonOption = False,
) -> None:
    """List the server's problems (your competition's), or this checkout's with --local or no server set."""
    with errors(as_json):
        config = resolve(url=url, token=token, need_token=False)
        if local or config.url_from == "default":
            listed = _local_problems()
            if not as_json and not local:
                print("no server configured (--url, OPJUDGE_URL or `opjudge login`): this checkout's problems",
                      file=sys.stderr)  # fmt: skip
        else:
            with OpjudgeClient(config.url, config.token) as client:
                listed = client.problems()
    if as_json:
        emit(listed)
        return
    table = Table(header_style="bold")
    for column in ("problem", "title", "backends", "where"):
        table.add_column(column, overflow="fold")
    for p in listed:
        where = ", ".join(p.get("competitions", [])) or p.get("where", "")
        table.add_row(p["slug"], p["title"], ", ".join(p["backends"]), where)
    Console().print(table)


def problem_command(
    slug: Annotated[str, typer.Argument(help="the problem's slug, e.g. add_mul_relu")],
    header: Annotated[bool, typer.Option("--header", help="write the C header to the current folder")] = False,
    backend: Annotated[str | None, typer.Option(help="the statement for this backend (default: the first)")] = None,
    url: UrlOption = None,
    token: TokenOption = None,
    as_json: JsonOption = False,
) -> None:
    """The problem from the server: statement, public cases, tolerances, timing; --header saves the header."""
    with errors(as_json):
        config = resolve(url=url, token=token, need_token=False)
        with OpjudgeClient(config.url, config.token) as client:
            body = client.problem(slug)
        chosen = _backend(body, backend)
        saved = _save_header(body) if header else None
    if as_json:
        emit({**body, **({"header_saved": str(saved)} if saved else {})})
        return
    if saved is not None:
        print(f"wrote {saved}")
        return
    console = Console()
    console.print(Markdown(chosen["statement_markdown"]))
    console.print(_cases_table(chosen))
    console.print(f"rules: {config.url}{body['rules']} · page: {config.url}/p/{slug}", highlight=False)


def _backend(body: dict[str, Any], backend: str | None) -> dict[str, Any]:
    backends = body["backends"]
    if backend is None:
        return dict(backends[0])
    for entry in backends:
        if entry["backend"] == backend:
            return dict(entry)
    raise ConfigError(f"problem {body['slug']!r} has no backend {backend!r} here; "
                      f"backends: {', '.join(b['backend'] for b in backends)}")  # fmt: skip


def _save_header(body: dict[str, Any]) -> Path:
    path = Path.cwd() / body["header_name"]
    path.write_text(body["header"], encoding="utf-8")
    return path


def _cases_table(backend: dict[str, Any]) -> Table:
    table = Table(title=f"public cases on {backend['backend']} (+{backend['private_cases']} private)",
                  title_justify="left", header_style="bold")  # fmt: skip
    for column in ("case", "set", "dtype", "sizes"):
        table.add_column(column, overflow="fold")
    for case in backend["cases"]:
        sizes = " ".join(f"{k}={v}" for k, v in case["sizes"].items())
        flags = f" [{', '.join(case['flags'])}]" if case["flags"] else ""
        table.add_row(case["name"], case["case_set"], case["dtype"], sizes + flags)
    return table


def _local_problems() -> list[dict[str, Any]]:
    listed = []
    for slug in list_problems():
        problem = load_problem(slug)
        counts = {b.value: {s.value: len(problem.cases_for(b, [s])) for s in CaseSet} for b in problem.backends}
        listed.append({"slug": slug, "title": problem.title, "version": problem.version,
                       "backends": [b.value for b in problem.backends], "where": "this checkout",
                       "cases": counts})  # fmt: skip
    return listed
