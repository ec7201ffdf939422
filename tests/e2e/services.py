"""Real processes for end-to-end tests: `opjudge serve`, `opjudge worker`, and throwaway
PostgreSQL and Redis servers the fault tests may stop and start at will.

Every process runs in its own session so it can be killed with everything it started;
every wait is bounded, and failures show the process's log.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[2]
OPJUDGE = [sys.executable, "-c", "from api.cli import main; main()"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until(what: str, check: Callable[[], Any], *, timeout_s: float, interval_s: float = 0.2,
               log: Callable[[], str] | None = None) -> Any:
    """Poll `check` until it returns something truthy; fail with `what` (and a log) after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = check()
            if value:
                return value
        except (httpx.HTTPError, OSError) as exc:
            last_error = exc
        time.sleep(interval_s)
    detail = f" (last error: {last_error})" if last_error else ""
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}{detail}\n{log() if log else ''}")


class Process:
    """A child process in its own session, its output in a log file."""

    def __init__(self, name: str, argv: list[str], *, env: dict[str, str], log_dir: Path,
                 user: str | None = None) -> None:
        self.name = name
        self.log_path = log_dir / f"{name}.log"
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        if user is not None:
            argv = ["runuser", "-u", user, "--", *argv]
        self.popen = subprocess.Popen(argv, env=env, cwd=REPO, stdout=self._log, stderr=subprocess.STDOUT,
                                      start_new_session=True)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def log(self) -> str:
        return f"--- {self.name} log ---\n" + self.log_path.read_text(errors="replace")[-6000:]

    def alive(self) -> bool:
        return self.popen.poll() is None

    def kill_group(self, sig: int = signal.SIGKILL) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, sig)

    def stop(self, timeout_s: float = 20.0) -> None:
        """SIGTERM the whole group, SIGKILL what is left after `timeout_s`."""
        if self.alive():
            self.kill_group(signal.SIGTERM)
            try:
                self.popen.wait(timeout_s)
            except subprocess.TimeoutExpired:
                pass
        self.kill_group(signal.SIGKILL)  # stragglers of the group, e.g. a pool child
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(5)
        self._log.close()


def children(pid: int) -> list[int]:
    """Direct children of `pid` (Linux /proc)."""
    found: list[int] = []
    for task in glob.glob(f"/proc/{pid}/task/*/children"):
        with contextlib.suppress(OSError):
            found += [int(p) for p in Path(task).read_text().split()]
    return found


@dataclass
class DemoTokens:
    teams: dict[str, str]
    reviewer: str
    admin: str


def parse_demo_tokens(log: str) -> DemoTokens | None:
    teams = dict(re.findall(r"^\s+team (\S+)\s+(opj_\S+)$", log, re.M))
    reviewer = re.search(r"^\s+reviewer\s+(opj_\S+)$", log, re.M)
    admin = re.search(r"^\s+admin\s+(opj_\S+)$", log, re.M)
    if len(teams) < 3 or not reviewer or not admin:
        return None
    return DemoTokens(teams, reviewer.group(1), admin.group(1))


def service_env(**overrides: str) -> dict[str, str]:
    """The environment of a served/worker process: fast test knobs, quotas out of the way."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPJUDGE_")}
    env.update({
        "OPJUDGE_JUDGE_SECRET": "e2e-judge-secret-0123456789",
        "OPJUDGE_TOKEN_PEPPER": "e2e-token-pepper-0123456789",
        "OPJUDGE_MIN_INTERVAL_S": "0",
        "OPJUDGE_MAX_IN_FLIGHT": "20",
        "OPJUDGE_QUOTA_PER_DAY": "500",
        "OPJUDGE_REAPER_INTERVAL_S": "1",
        "OPJUDGE_HEARTBEAT_INTERVAL_S": "2",
        "OPJUDGE_DISPATCH_GRACE_S": "1",
        "OPJUDGE_CASE_TIME_BUDGET_S": "0.2",
        # Timing phases this short are "disturbed" on any host (a few pairs, a wide interval): no re-timing.
        "OPJUDGE_DISTURBED_TIMING_ATTEMPTS": "1",
        "OPJUDGE_MARK_DISTURBED_RUNS": "0",
        "OPJUDGE_DB_POOL_TIMEOUT_S": "5",
        "PYTHONUNBUFFERED": "1",
    })  # fmt: skip
    env.update(overrides)
    return env


def start_api(env: dict[str, str], log_dir: Path, *, seed: bool = True,
              name: str = "api") -> tuple[Process, str, DemoTokens | None]:
    """`opjudge serve` on a free port; waits until it answers (and printed the demo tokens)."""
    port = free_port()
    argv = [*OPJUDGE, "serve", "--port", str(port), "--log-level", "warning", *(["--seed-demo"] if seed else [])]
    api = Process(name, argv, env=env, log_dir=log_dir)
    base = f"http://127.0.0.1:{port}"

    def ready() -> bool:
        if not api.alive():
            raise AssertionError(f"{name} exited with {api.popen.returncode}\n{api.log()}")
        return httpx.get(f"{base}/api/v1/competitions/demo", timeout=5).status_code in (200, 404)

    wait_until(f"{name} to answer on {base}", ready, timeout_s=90, log=api.log)
    tokens = parse_demo_tokens(api.log_path.read_text()) if seed else None
    if seed and tokens is None:
        raise AssertionError(f"no demo tokens printed\n{api.log()}")
    return api, base, tokens


def start_worker(env: dict[str, str], log_dir: Path, *, name: str) -> Process:
    """`opjudge worker --queue judge.cpu` under `name`; waits for Celery's "ready"."""
    argv = [*OPJUDGE, "worker", "--queue", "judge.cpu", "--name", name, "--loglevel", "info"]
    worker = Process(name.replace("@", "-"), argv, env=env, log_dir=log_dir)

    def ready() -> bool:
        if not worker.alive():
            raise AssertionError(f"worker exited with {worker.popen.returncode}\n{worker.log()}")
        return f"{name} ready." in worker.log_path.read_text(errors="replace")

    wait_until(f"worker {name} to be ready", ready, timeout_s=120, log=worker.log)
    return worker


class ThrowawayPostgres:
    """A PostgreSQL cluster of our own (initdb) on a free port, to stop and start at will.

    PostgreSQL refuses to run as root, so as root the cluster belongs to `postgres`.
    """

    def __init__(self) -> None:
        bindir = _postgres_bindir()
        self._initdb, self._pg_ctl = str(bindir / "initdb"), str(bindir / "pg_ctl")
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="opjudge-pg-"))
        self._user = "postgres" if os.geteuid() == 0 else None
        if self._user:
            shutil.chown(self.dir, self._user)
        self.data = self.dir / "data"
        self._run([self._initdb, "-D", str(self.data), "-U", "postgres", "--auth=trust", "--no-sync",
                   "-E", "UTF8"], timeout_s=120)  # fmt: skip
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.dir} -c fsync=off"
        self._run([self._pg_ctl, "start", "-w", "-t", "60", "-D", str(self.data), "-l", str(self.dir / "pg.log"),
                   "-o", options], timeout_s=90)  # fmt: skip

    def stop(self) -> None:
        self._run([self._pg_ctl, "stop", "-w", "-t", "60", "-m", "fast", "-D", str(self.data)], timeout_s=90)

    def destroy(self) -> None:
        with contextlib.suppress(Exception):
            self._run([self._pg_ctl, "stop", "-w", "-t", "30", "-m", "immediate", "-D", str(self.data)],
                      timeout_s=60, check=False)
        shutil.rmtree(self.dir, ignore_errors=True)

    def _run(self, argv: list[str], *, timeout_s: float, check: bool = True) -> None:
        if self._user:
            argv = ["runuser", "-u", self._user, "--", *argv]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, cwd=self.dir)
        if check and done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed:\n{done.stdout}\n{done.stderr}")


def _postgres_bindir() -> Path:
    found = shutil.which("pg_ctl")
    if found and Path(found).resolve().parent.joinpath("initdb").exists():
        return Path(found).resolve().parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if not candidates:
        raise FileNotFoundError("pg_ctl and initdb not found (apt-get install postgresql)")
    return Path(candidates[-1]).parent


class ThrowawayRedis:
    """A redis-server of our own on a free port, without persistence, to stop and start at will."""

    def __init__(self, log_dir: Path) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._log_dir = log_dir
        self._process: Process | None = None

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise FileNotFoundError("redis-server not found (apt-get install redis-server)")
        argv = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self._process = Process(f"redis-{self.port}", argv, env=dict(os.environ), log_dir=self._log_dir)
        wait_until("redis-server to answer", self._answers, timeout_s=30, log=self._process.log)

    def stop(self) -> None:
        if self._process is not None:
            self._process.stop(timeout_s=10)
            self._process = None

    def _answers(self) -> bool:
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
