"""The team CLI: `opjudge login`, `submit`, `status`, `board` (and `problems`, `problem` from
api/client/problems.py), registered on the one Typer app.

Server URL and token come from --url/--token, else OPJUDGE_URL/OPJUDGE_TOKEN,
else the config file `opjudge login` writes. `submit` uploads, then follows the
run through its steps to the verdict and the per-case table. Every command takes
`--json` (one JSON object on stdout, for scripts and agents) and exits with the
codes in `ExitCode` (docs/automation.md).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from enum import IntEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.live import Live
from rich.table import Table

from api.client.config import TOKEN_ENV, ConfigError, resolve, write_config_file
from api.client.http import ClientError, OpjudgeClient
from api.client.render import (
    board_table,
    compact_table,
    is_finished,
    live_run,
    progress,
    queue_line,
    shown_run,
    step_line,
    steps_of,
    verdict_view,
)
from judge.errors import UserFacingError


class ExitCode(IntEnum):
    """What every team command's exit status means (docs/automation.md)."""

    OK = 0  # done; for submit and status: the verdict is AC, or the run is still being judged
    NOT_ACCEPTED = 1  # judged with another verdict, or the server refused the request (4xx)
    USAGE = 2  # a usage or configuration error (no token, bad option)
    TRY_LATER = 75  # quota or interval (429), server unavailable (503) or unreachable: try again later
    INTERRUPTED = 130  # stopped following with Ctrl-C; the run goes on


UrlOption = Annotated[str | None, typer.Option("--url", help="server URL (else OPJUDGE_URL, else the saved one)")]
JsonOption = Annotated[bool, typer.Option("--json", help="print one JSON object on stdout (for scripts)")]
TokenOption = Annotated[str | None, typer.Option("--token", help="API token (else OPJUDGE_TOKEN, else the saved one)")]
POLL_S = 1.0
MAX_POLL_FAILURES = 10  # consecutive failed polls before giving up on following a run


def register(app: typer.Typer) -> None:
    """Add the team commands to `app`."""
    from api.client import problems  # noqa: PLC0415 - it imports this module's helpers

    app.command("login")(login_command)
    app.command("submit")(submit_command)
    app.command("status")(status_command)
    app.command("board")(board_command)
    problems.register(app)


def emit(data: Any) -> None:
    """One JSON document on stdout (`--json`)."""
    print(json.dumps(data, indent=2, default=str))


@contextmanager
def errors(as_json: bool = False) -> Iterator[None]:
    """Refusals and configuration problems as one clear line on stderr, not a traceback; with
    `as_json` also as `{"error": ..., "status": ..., "retry_after_s": ...}` on stdout."""
    try:
        yield
    except ConfigError as error:
        _fail(error, ExitCode.USAGE, as_json)
    except ClientError as error:
        later = error.status in (429, 503) or error.status is None
        _fail(error, ExitCode.TRY_LATER if later else ExitCode.NOT_ACCEPTED, as_json,
              status=error.status, retry_after_s=error.retry_after_s)  # fmt: skip
    except UserFacingError as error:
        _fail(error, ExitCode.NOT_ACCEPTED, as_json)


def _fail(error: Exception, code: ExitCode, as_json: bool, **extra: Any) -> None:
    print(f"error: {error}", file=sys.stderr)
    if as_json:
        emit({"error": str(error), "exit_code": int(code), **extra})
    raise typer.Exit(int(code)) from None



def login_command(url: UrlOption = None, token: TokenOption = None, as_json: JsonOption = False) -> None:
    """Check a token with the server and save it with the URL (~/.config/opjudge/config.toml, mode 0600)."""
    with errors(as_json):
        config = resolve(url=url, token=None, need_token=False)
        secret = (token or os.environ.get(TOKEN_ENV) or typer.prompt("token", hide_input=True)).strip()
        with OpjudgeClient(config.url, secret) as client:
            try:
                me = client.me()
                who = f"team {me['team_name']} of competition {me['competition']}"
            except ClientError as error:
                if error.status != 403:
                    raise
                who = "an organiser or reviewer (`submit` needs a team token)"
        path = write_config_file(url=config.url, token=secret)
    if as_json:
        emit({"url": config.url, "who": who, "config": str(path)})
        return
    print(f"logged in to {config.url} as {who}; saved to {path}")


def submit_command(
    files: Annotated[list[Path], typer.Argument(help="source files of the submission", exists=True, dir_okay=False)],
    problem: Annotated[str, typer.Option(help="problem slug, e.g. add_mul_relu")],
    backend: Annotated[str, typer.Option(help="cpu, cuda or npu")] = "cpu",
    mode: Annotated[str, typer.Option(help="test (tests only), benchmark (also timed) or ranked (counts)")] = "ranked",
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="follow the run to its verdict")] = True,
    timeout: Annotated[float, typer.Option(help="give up following after this many seconds")] = 1800.0,
    url: UrlOption = None,
    token: TokenOption = None,
    as_json: JsonOption = False,
) -> None:
    """Upload FILES for PROBLEM on BACKEND in MODE and follow the run: exit 0 on AC, 1 on another verdict."""
    console = Console(stderr=as_json)
    if mode not in ("test", "benchmark", "ranked"):
        with errors(as_json):
            raise ConfigError(f"--mode must be test, benchmark or ranked, not {mode!r}")
    with errors(as_json):
        config = resolve(url=url, token=token)
        with OpjudgeClient(config.url, config.token) as client:
            created = client.submit(files, problem=problem, backend=backend, mode=mode)
            submission_id = str(created["id"])
            console.print(f"submission [bold]{submission_id}[/] ({created.get('mode', mode)} run) "
                          f"{created.get('message', 'stored')}")  # fmt: skip
            if created.get("queue"):
                console.print(queue_line(created["queue"]), highlight=False)
            console.print(f"report: {config.url}/s/{submission_id}", highlight=False)
            if not wait:
                if as_json:
                    emit(created)
                return
            detail = follow(client, submission_id, console, timeout_s=timeout)
    if as_json:
        emit(detail)
    else:
        console.print(verdict_view(detail, width=console.width))
    raise typer.Exit(_exit_code(detail))


def status_command(
    submission_id: Annotated[
        str | None, typer.Argument(help="a submission's id, as `submit` and the list show it; none: your latest")
    ] = None,
    wait: Annotated[bool, typer.Option("--wait", help="follow the run until it has a verdict")] = False,
    limit: Annotated[int, typer.Option(help="how many submissions to list")] = 15,
    url: UrlOption = None,
    token: TokenOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show one submission's steps and results (exit 1 on a verdict other than AC), or list your latest."""
    console = Console(stderr=as_json)
    with errors(as_json):
        config = resolve(url=url, token=token)
        with OpjudgeClient(config.url, config.token) as client:
            if submission_id is None:
                listed = client.submissions(limit=limit)
                if as_json:
                    emit(listed)
                else:
                    console.print(_submissions_table(listed))
                return
            detail = client.submission(submission_id)
            if wait and not is_finished(live_run(detail)):
                detail = follow(client, submission_id, console, timeout_s=1800.0)
    if as_json:
        emit(detail)
        raise typer.Exit(_exit_code(detail))
    console.print(progress(detail))
    if detail.get("queue"):
        console.print(queue_line(detail["queue"]), highlight=False)
    console.print(verdict_view(detail, width=console.width))
    raise typer.Exit(_exit_code(detail))


def board_command(
    competition: Annotated[str | None, typer.Option(help="competition slug; default: your team's")] = None,
    final: Annotated[bool, typer.Option("--final", help="the final ranking, once published")] = False,
    url: UrlOption = None,
    token: TokenOption = None,
    as_json: JsonOption = False,
) -> None:
    """Print the leaderboard (your own row marked, and up to date while the board is frozen)."""
    with errors(as_json):
        config = resolve(url=url, token=token, need_token=competition is None)
        with OpjudgeClient(config.url, config.token) as client:
            slug = competition or client.me()["competition"]
            board = client.leaderboard(slug, final=final)
    if as_json:
        emit(board)
        return
    Console().print(board_table(board))


def follow(client: OpjudgeClient, submission_id: str, console: Console, *, timeout_s: float) -> dict[str, Any]:
    """Poll the submission until its run has finished, showing the steps as they happen."""
    deadline = time.monotonic() + timeout_s
    detail = client.submission(submission_id)
    try:
        if console.is_terminal:
            with Live(progress(detail), console=console, refresh_per_second=8) as live:
                while not is_finished(live_run(detail)):
                    detail = _poll(client, submission_id, detail, deadline)
                    live.update(progress(detail))
        else:
            printed: set[str] = set()
            while True:
                for step in steps_of(live_run(detail)):
                    if step.state in ("done", "current", "failed") and step.key not in printed:
                        printed.add(step.key)
                        console.print(step_line(step), highlight=False)
                if is_finished(live_run(detail)):
                    break
                detail = _poll(client, submission_id, detail, deadline)
    except KeyboardInterrupt:
        console.print(f"stopped following; the run goes on: `opjudge status {submission_id} --wait`")
        raise typer.Exit(int(ExitCode.INTERRUPTED)) from None
    return detail


def _poll(client: OpjudgeClient, submission_id: str, detail: dict[str, Any], deadline: float) -> dict[str, Any]:
    failures = 0
    while True:
        if time.monotonic() > deadline:
            raise ClientError(f"submission {submission_id} is still being judged; "
                              f"see `opjudge status {submission_id}`")
        time.sleep(POLL_S)
        try:
            return client.submission(submission_id)
        except ClientError as error:
            # A restarting server or a dropped connection: keep following for a while.
            failures += 1
            if (error.status is not None and error.status < 500) or failures >= MAX_POLL_FAILURES:
                raise


def _exit_code(detail: dict[str, Any]) -> int:
    run = shown_run(detail)
    if run is None or (not is_finished(live_run(detail)) and not run.get("verdict")):
        return int(ExitCode.OK)  # still being judged: nothing has failed yet
    return int(ExitCode.OK if run.get("verdict") == "AC" else ExitCode.NOT_ACCEPTED)


def _submissions_table(submissions: list[dict[str, Any]]) -> Table:
    table = compact_table("your latest submissions")
    for column in ("id", "problem", "backend", "mode", "submitted", "result", "score"):
        table.add_column(column, justify="right" if column == "score" else "left",
                         overflow="fold", no_wrap=column != "problem")  # fmt: skip
    for s in submissions:
        result = s.get("verdict") or s["status"]  # the verdict once judged, else where the run is
        table.add_row(str(s["id"]), s["problem"], s["backend"], s.get("mode", "ranked"),
                      s["created_at"][5:16].replace("T", " "), result,
                      "-" if s.get("score") is None else f"{s['score']:.2f}")  # fmt: skip
    return table
