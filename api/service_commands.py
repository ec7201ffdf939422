"""`opjudge serve`, `opjudge worker` and `opjudge admin-token`, registered on the one Typer app by api/cli.py.

`serve` runs api/serve.py; `worker` runs workers/worker.py. Each command imports what it runs only
when it runs, so building the command line loads neither uvicorn nor Celery.
"""

from __future__ import annotations

import logging
import sys
from typing import Annotated

import typer
from pydantic import ValidationError

from judge.errors import UserFacingError


def register(app: typer.Typer) -> None:
    """Add the service's process commands to `app`."""
    app.command("serve")(serve_command)
    app.command("worker")(worker_command)
    app.command("admin-token")(admin_token_command)


def serve_command(
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port to listen on")] = 8000,
    seed_demo: Annotated[bool, typer.Option("--seed-demo", help="create the demo and print its tokens")] = False,
    worker: Annotated[bool, typer.Option("--worker", help="with Redis, also start a judge.cpu worker")] = False,
    judge_baselines: Annotated[bool, typer.Option(
        "--judge-baselines", help="with --seed-demo: demo teams submit the CPU baselines, judged at once")] = False,
    new_demo_tokens: Annotated[bool, typer.Option(
        "--new-demo-tokens", help="with --seed-demo on an existing demo: revoke its tokens, print new ones")] = False,
    log_level: Annotated[str, typer.Option(help="debug, info, warning")] = "info",
) -> None:
    """Serve the API (migrations run first). Without OPJUDGE_BROKER_URL, runs are judged in this process."""
    from api.serve import serve, serve_settings

    _logging(log_level)
    try:
        settings = serve_settings()
    except ValidationError as exc:
        raise _config_error(exc) from None
    serve(settings, host=host, port=port, demo=seed_demo, worker=worker, log_level=log_level,
          judge_baselines=judge_baselines, new_demo_tokens=new_demo_tokens)


def worker_command(
    queue: Annotated[str, typer.Option(help="judge.cpu, judge.cuda.<gpu> or judge.npu.<soc>")] = "judge.cpu",
    name: Annotated[str | None, typer.Option(help="worker name; default <queue>@<host>.<pid>")] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="pool processes: one per device")] = 1,
    loglevel: Annotated[str, typer.Option(help="debug, info, warning")] = "info",
    reaper: Annotated[bool, typer.Option(help="also re-queue stuck runs and dispatch pending ones")] = True,
    device: Annotated[str | None, typer.Option(
        help="the one GPU (nvidia-smi index or UUID) or NPU id this worker judges on; default OPJUDGE_DEVICE")] = None,
) -> None:
    """Judge runs from QUEUE with a Celery worker; reports host, device and toolchain versions on start."""
    from workers.settings import WorkerSettings
    from workers.worker import run_worker

    _logging(loglevel)
    try:
        settings = WorkerSettings(**({"device": device} if device is not None else {}))
    except ValidationError as exc:
        raise _config_error(exc) from None
    try:
        run_worker(settings, queue=queue, name=name, concurrency=concurrency, loglevel=loglevel, reaper=reaper)
    except UserFacingError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(2) from None


def admin_token_command(
    label: Annotated[str, typer.Option(help="whose token this is, shown in the audit log")] = "operator",
) -> None:
    """Issue an organiser token straight into the database (the first one, or after a pepper change)."""
    from api.serve import serve_settings
    from api.store.db import Database, upgrade_database
    from api.store.enums import Role
    from api.store.tokens import issue_token
    from api.store.types import utcnow

    try:
        settings = serve_settings()
    except ValidationError as exc:
        raise _config_error(exc) from None
    upgrade_database(settings)
    db = Database(settings)
    try:
        with db.session() as session:
            issued = issue_token(session, pepper=settings.pepper, role=Role.ADMIN, actor=None, now=utcnow(),
                                 label=label)
    finally:
        db.dispose()
    print(issued.token)


def _logging(level: str) -> None:
    logging.basicConfig(level=level.upper(), stream=sys.stderr, force=True,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def _config_error(exc: ValidationError) -> typer.Exit:
    for error in exc.errors():
        print(f"error: {error['msg']}", file=sys.stderr)
    return typer.Exit(2)
