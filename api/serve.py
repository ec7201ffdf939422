"""`opjudge serve`: migrations, the demo seed, a dispatcher, the reaper, and uvicorn.

Embedded default (the memory broker): a SQLite file under var/ and an in-process
worker thread; `make run` needs nothing else. With OPJUDGE_BROKER_URL=redis://...
runs go to Celery and separate `opjudge worker` processes judge them (`--worker`
starts one beside the server for convenience).

It lives in api/ beside the command line (api/cli.py, api/service_commands.py) because it
starts the API process; it is also where that process takes parts from workers/: the reaper,
the in-process worker and, with a broker, the Celery dispatcher (imported only then).
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import subprocess
import sys
from pathlib import Path

from api.settings import Settings
from api.store.db import Database, upgrade_database
from api.store.seed import DEMO_PROBLEMS, DemoSeed, seed_demo
from workers.context import WorkerContext
from workers.reaper import WorkerMonitor
from workers.settings import WorkerSettings

log = logging.getLogger("opjudge.serve")

SECRET_FIELDS = ("judge_secret", "token_pepper")
INPROCESS_QUEUE = "judge.cpu"


def serve_settings() -> WorkerSettings:
    """Settings from the environment; an embedded SQLite server keeps its own secrets file.

    Production (PostgreSQL) must be given OPJUDGE_JUDGE_SECRET and OPJUDGE_TOKEN_PEPPER.
    A SQLite server without them generates both once, into `secrets.json` beside the
    database (mode 0600), so tokens stay valid across restarts of `make run`.
    """
    probe = WorkerSettings(dev_mode=True)  # never refuses missing secrets
    missing = [f for f in SECRET_FIELDS if not os.environ.get(f"OPJUDGE_{f.upper()}")]
    if missing and probe.is_sqlite:
        local = _local_secrets(_sqlite_path(probe.database_url).parent / "secrets.json")
        return WorkerSettings(**{field: local[field] for field in missing})
    return WorkerSettings()


def serve(settings: WorkerSettings, *, host: str, port: int, demo: bool, worker: bool, log_level: str,
          judge_baselines: bool = False, new_demo_tokens: bool = False) -> None:
    """Run the API until interrupted (blocks)."""
    import uvicorn

    from api.web.app import create_app
    from api.web.http_server import ServerLimits, uvicorn_options

    upgrade_database(settings)
    if demo:
        seed = _seed(settings, reissue=new_demo_tokens)
        print_demo(seed, baselines=judge_baselines)
        if judge_baselines and not seed.kept:
            _submit_baselines(settings, seed)
    embedded = settings.broker_url.startswith("memory://")
    monitor_ctx = WorkerContext(settings)
    inprocess = None
    worker_process = None
    if embedded:
        from workers.inprocess import InProcessDispatcher

        inprocess = InProcessDispatcher(WorkerContext(settings, name=monitor_ctx.name))
        dispatcher = inprocess
        inprocess.start()
        log.info("embedded mode: runs are judged in this process (%s)", monitor_ctx.name)
    else:
        from workers.celery_app import CeleryDispatcher, make_celery

        dispatcher = CeleryDispatcher(make_celery(settings, publisher=True))
        if worker:
            worker_process = _start_worker_process(settings)
    # The reaper runs here too, so runs whose enqueue failed reach the broker even with no worker up.
    monitor = WorkerMonitor(monitor_ctx, dispatcher=dispatcher,
                            queue=INPROCESS_QUEUE if embedded else None,
                            info={"host": os.uname().nodename, "mode": "in-process"})
    monitor.start()
    try:
        uvicorn.run(create_app(settings, dispatcher), host=host, port=port, log_level=log_level,
                    proxy_headers=True, forwarded_allow_ips=settings.forwarded_allow_ips,
                    **uvicorn_options(ServerLimits.from_settings(settings)))
    finally:
        monitor.stop()
        if inprocess is not None:
            inprocess.stop()
        if worker_process is not None:
            worker_process.terminate()
            worker_process.wait(timeout=60)
        monitor_ctx.close()


def print_demo(seed: DemoSeed, *, baselines: bool = False) -> None:
    """The demo tokens, printed once: the store keeps only their HMAC. A kept demo prints none."""
    if seed.kept:
        print(f"demo competition {seed.competition!r} exists: its tokens are unchanged (printed when it was "
              "created); lost them? restart with --new-demo-tokens (the old ones are revoked, audited)", flush=True)
        return
    lines = [f"demo competition {seed.competition!r}; tokens (shown once, keep them):"]
    lines += [f"  team {name:<10} {token}" for name, token in seed.team_tokens.items()]
    lines += [f"  reviewer   {seed.reviewer_token}", f"  admin      {seed.admin_token}"]
    if baselines:
        lines.append("  (alpha and bravo have just submitted the CPU baselines: their next ranked submission is "
                     "allowed after the minimum interval; charlie can submit at once)")
    print("\n".join(lines), flush=True)


def _seed(settings: WorkerSettings, *, reissue: bool = False) -> DemoSeed:
    db = Database(settings)
    try:
        with db.session() as session:
            return seed_demo(session, settings, reissue=reissue)
    finally:
        db.dispose()


def _submit_baselines(settings: Settings, seed: DemoSeed) -> None:
    """Give the demo judged entries: each demo team in turn submits one problem's CPU baseline.

    The runs are stored pending; the reaper below hands them to the worker within seconds,
    as it does for any upload whose enqueue failed. A team that already has a submission
    (a re-seeded demo) submits nothing again.
    """
    from api.dispatch import queue_for
    from api.store.submissions import create_submission, list_submissions
    from api.store.tokens import authenticate
    from api.store.types import utcnow
    from judge.backends import Backend
    from judge.problem import load_problem

    db = Database(settings)
    try:
        with db.session() as session:
            for (team, token), slug in zip(seed.team_tokens.items(), DEMO_PROBLEMS, strict=False):
                team_id = authenticate(session, token=token, pepper=settings.pepper).team_id
                if team_id is None or list_submissions(session, team_id=team_id, limit=1):
                    continue
                baseline = load_problem(slug, settings.problems_dir, settings.reference_dir).baselines[Backend.CPU]
                create_submission(session, team_id=team_id, problem=slug, backend=Backend.CPU,
                                  files=[(baseline.name, baseline.read_bytes())],
                                  queue=queue_for(Backend.CPU, settings), now=utcnow())
                log.info("demo: team %s submitted the %s CPU baseline", team, slug)
    finally:
        db.dispose()


def _start_worker_process(settings: WorkerSettings) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    for field in SECRET_FIELDS:  # secrets generated by serve_settings must reach the child
        value = getattr(settings, field)
        if value is not None:
            env[f"OPJUDGE_{field.upper()}"] = value.get_secret_value()
    code = "from api.cli import main; main()"
    return subprocess.Popen([sys.executable, "-c", code, "worker", "--queue", INPROCESS_QUEUE], env=env)


def _sqlite_path(url: str) -> Path:
    return Path(url.split("///", 1)[-1].split("?", 1)[0]).resolve()


def _local_secrets(path: Path) -> dict[str, str]:
    if path.is_file():
        stored: dict[str, str] = json.loads(path.read_text())
        if all(stored.get(f) for f in SECRET_FIELDS):
            return stored
    path.parent.mkdir(parents=True, exist_ok=True)
    fresh = {field: secrets.token_urlsafe(32) for field in SECRET_FIELDS}
    # Created 0600 from the start: the pepper would let anyone who reads it forge token digests.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump(fresh, out)
    log.info("generated the judge secret and token pepper in %s", path)
    return fresh
