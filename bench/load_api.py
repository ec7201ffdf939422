"""API load on loopback: leaderboard latency at 50 concurrent clients, and accepted uploads per second.

    .venv/bin/python bench/load_api.py [--teams 500] [--per-team 20] [--clients 50] [--requests 3000]
        [--raw-requests 20000] [--upload-seconds 10] [--page-path /c/bench] [--server-workers 1]
        [--state-dir DIR] [--database-url URL] [--json FILE]

Seeds a fresh database (SQLite in a temporary folder unless --database-url names
an empty one) through the store's own functions: one competition with both
problems on the CPU, `--teams` teams with `--per-team` judged submissions each
(the problems' real benchmark and private case names, deterministic ratios).
Then starts `uvicorn` on 127.0.0.1 in a subprocess and measures, with asyncio:
the leaderboard JSON (and `--page-path`, the HTML board, when given) at
`--clients` concurrent keep-alive clients, once with httpx and once with a
minimal HTTP/1.1 client on asyncio streams (httpx's own CPU per request is
several times the server's, and both share the two cores); and uploads accepted
per second by `--clients` teams uploading at once with httpx (quotas relaxed for
the bench competition; no worker runs, so the runs stay queued). It also reports
the CPU time the server and the client spent per request, which other load on
the machine does not inflate the way it inflates latencies. Targets:
leaderboard p99 < 100 ms, at least 50 uploads/s on a 2-core machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from functools import partial
from pathlib import Path

import httpx

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from api.settings import Settings  # noqa: E402
from api.store.competitions import attach_problem, create_competition  # noqa: E402
from api.store.db import Database, upgrade_database  # noqa: E402
from api.store.runs import claim_run, finish_run  # noqa: E402
from api.store.standings_cache import recompute_standings  # noqa: E402
from api.store.submissions import create_submission  # noqa: E402
from api.store.teams import create_team  # noqa: E402
from api.store.types import utcnow  # noqa: E402
from judge.backends import Backend, CaseSet  # noqa: E402
from judge.problem import load_problem  # noqa: E402
from judge.results import CaseResult, JudgeResult, TimingStats  # noqa: E402
from judge.verdict import Verdict  # noqa: E402

COMPETITION = "bench"
PROBLEMS = ("add_mul_relu", "sparse_flash_attention_grad")
KERNEL = b'#include "add_mul_relu.h"\nint kernel_run(void) { return 0; }\n' + b"// padding " + b"x" * 2000 + b"\n"
BENCH_SECRETS = {
    "OPJUDGE_JUDGE_SECRET": "bench-judge-secret-0123456789abcdef",
    "OPJUDGE_TOKEN_PEPPER": "bench-token-pepper-0123456789abcdef",
}


class AcceptingDispatcher:
    """The broker of the bench: takes every run, and no worker ever judges them."""

    def enqueue(self, run_id: int, queue: str, priority: int = 6) -> None:
        return None


def app_from_env():  # type: ignore[no-untyped-def]  # uvicorn --factory entry point
    from api.web.app import create_app

    return create_app(Settings(), AcceptingDispatcher())


def _result(problem: str, cases: list[tuple[str, CaseSet]], rng: random.Random, speed: float) -> JudgeResult:
    failed = rng.random() < 0.05
    out = []
    for name, case_set in cases:
        ratio = max(0.05, speed * rng.uniform(0.9, 1.1))
        passed = not (failed and case_set is CaseSet.BENCHMARKS)
        out.append(CaseResult(
            name=name, case_set=case_set, passed=passed, verdict=Verdict.AC if passed else Verdict.WA,
            timing=TimingStats(1e6 * ratio, 1e6 * ratio, 0.98e6 * ratio, 1e3, 40),
            baseline_timing=TimingStats(1e6, 1e6, 0.98e6, 1e3, 40), ratio=ratio, gflops=10 / ratio, flops=1e7,
        ))  # fmt: skip
    verdict = Verdict.WA if failed else Verdict.AC
    return JudgeResult(verdict=verdict, problem=problem, backend=Backend.CPU, message=verdict.description, cases=out)


def seed(settings: Settings, *, teams: int, per_team: int) -> list[str]:
    """The bench competition with `teams` x `per_team` judged submissions; returns the team tokens."""
    upgrade_database(settings)
    db = Database(settings)
    now = utcnow()
    rng = random.Random(20240601)
    with db.session() as session:
        create_competition(
            session, slug=COMPETITION, title="API load bench", starts_at=now - timedelta(days=2),
            ends_at=now + timedelta(days=2), actor=None, now=now, quota_per_day=10**9, min_interval_s=0,
            max_in_flight=10**9, options={"freeze_at": None},
        )  # fmt: skip
        cases = {}
        for slug in PROBLEMS:
            problem = load_problem(slug, settings.problems_dir, settings.reference_dir)
            attach_problem(session, competition=COMPETITION, problem=problem, backends=[Backend.CPU], actor=None,
                           now=now)  # fmt: skip
            timed = problem.cases_for(Backend.CPU, [CaseSet.BENCHMARKS, CaseSet.PRIVATE])
            cases[slug] = [(c.name, c.case_set) for c in timed]
        tokens, team_ids = [], []
        for i in range(teams):
            team, token = create_team(session, competition=COMPETITION, name=f"team-{i:04d}", pepper=settings.pepper,
                                      actor=None, now=now)  # fmt: skip
            tokens.append(token.token)
            team_ids.append(team.id)
        start = now - timedelta(hours=40)
        step = timedelta(hours=39) / max(1, teams * per_team)
        moment = start
        for round_ in range(per_team):
            for team_id in team_ids:
                slug = PROBLEMS[round_ % len(PROBLEMS)]
                created = create_submission(session, team_id=team_id, problem=slug, backend=Backend.CPU,
                                            files=[("kernel.cpp", KERNEL)], queue="judge.cpu", now=moment)  # fmt: skip
                claim_run(session, run_id=created.run_id, worker="bench", now=moment)
                speed = (0.3 + (team_id % 97) / 60) * (1 - round_ / (per_team * 3))
                finish_run(session, run_id=created.run_id, result=_result(slug, cases[slug], rng, speed),
                           worker_info={"host": "bench"}, now=moment, update_standings=False)  # fmt: skip
                moment += step
        comp_id = 1
        recompute_standings(session, competition_id=comp_id)
        session.commit()
    db.dispose()
    return tokens


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(env: dict[str, str], workers: int) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    command = [sys.executable, "-m", "uvicorn", "bench.load_api:app_from_env", "--factory", "--host", "127.0.0.1",
               "--port", str(port), "--workers", str(workers), "--log-level", "warning", "--no-access-log"]  # fmt: skip
    server = subprocess.Popen(command, cwd=REPO_ROOT, env=env)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode}")
        try:
            if httpx.get(f"{base}/api/v1/competitions/{COMPETITION}", timeout=2).status_code == 200:
                return server, base
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    server.terminate()
    raise SystemExit("the server did not answer within 60 s")


def server_cpu_s(server: subprocess.Popen[bytes]) -> float:
    """CPU seconds the server (and its worker processes) used so far: a figure the machine's load
    does not inflate, unlike latencies."""
    pids = [server.pid]
    children = Path(f"/proc/{server.pid}/task/{server.pid}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def _summary(latencies: list[float], elapsed: float, statuses: dict[int, int], size: int) -> dict[str, float]:
    ordered = sorted(latencies)
    return {
        "requests": len(ordered),
        "p50_ms": 1000 * ordered[len(ordered) // 2],
        "p99_ms": 1000 * ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))],
        "mean_ms": 1000 * statistics.fmean(ordered),
        "max_ms": 1000 * ordered[-1],
        "per_s": len(ordered) / elapsed,
        "bytes": size,
        "non_200": sum(n for code, n in statuses.items() if code != 200),
    }


async def measure_gets(base: str, path: str, *, clients: int, requests: int) -> dict[str, float]:
    """`requests` GETs of `path` spread over `clients` concurrent clients (after a warm-up)."""
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    size = 0
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=60) as client:
        await asyncio.gather(*(client.get(path) for _ in range(clients)))  # warm-up: connections and caches
        per_client = requests // clients

        async def one_client() -> None:
            nonlocal size
            for _ in range(per_client):
                started = time.perf_counter()
                # The body is received in full but not decompressed: the figure is the server's, and
                # httpx's pure-Python decoding would otherwise be most of the client's CPU.
                async with client.stream("GET", path, headers={"Accept-Encoding": "gzip"}) as response:
                    size = sum([len(chunk) async for chunk in response.aiter_raw()])
                latencies.append(time.perf_counter() - started)
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1

        began = time.perf_counter()
        await asyncio.gather(*(one_client() for _ in range(clients)))
        elapsed = time.perf_counter() - began
    return _summary(latencies, elapsed, statuses, size)


async def measure_gets_raw(base: str, path: str, *, clients: int, requests: int) -> dict[str, float]:
    """The same load from a minimal HTTP/1.1 keep-alive client on asyncio streams.

    httpx costs the client 2-3 ms of CPU per request on this machine, whatever the
    response, so with the server on the same two cores its figures measure httpx as
    much as the service; this client costs a few tens of microseconds.
    """
    host, port = base.removeprefix("http://").split(":")
    request = f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept-Encoding: gzip\r\n\r\n".encode()
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    size = 0

    async def one_client(count: int) -> None:
        nonlocal size
        reader, writer = await asyncio.open_connection(host, int(port))
        try:
            for _ in range(count):
                started = time.perf_counter()
                writer.write(request)
                head = await reader.readuntil(b"\r\n\r\n")
                status = int(head.split(b" ", 2)[1])
                length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length:"))  # fmt: skip
                size = len(await reader.readexactly(length))
                latencies.append(time.perf_counter() - started)
                statuses[status] = statuses.get(status, 0) + 1
        finally:
            writer.close()

    await asyncio.gather(*(one_client(1) for _ in range(clients)))  # warm-up
    latencies.clear()
    began = time.perf_counter()
    await asyncio.gather(*(one_client(requests // clients) for _ in range(clients)))
    return _summary(latencies, time.perf_counter() - began, statuses, size)


async def measure_uploads(base: str, tokens: list[str], *, clients: int, seconds: float) -> dict[str, float]:
    """`clients` teams uploading back to back for `seconds`; counts the 202s."""
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=60) as client:
        stop = time.perf_counter() + seconds

        async def one_team(token: str) -> None:
            headers = {"Authorization": f"Bearer {token}"}
            while time.perf_counter() < stop:
                started = time.perf_counter()
                response = await client.post(
                    "/api/v1/submissions", headers=headers, data={"problem": PROBLEMS[0], "backend": "cpu"},
                    files=[("files", ("kernel.cpp", KERNEL, "text/x-c++src"))],
                )  # fmt: skip
                latencies.append(time.perf_counter() - started)
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1

        began = time.perf_counter()
        await asyncio.gather(*(one_team(t) for t in tokens[:clients]))
        elapsed = time.perf_counter() - began
    summary = _summary(latencies, elapsed, {200 if k == 202 else k: v for k, v in statuses.items()}, 0)
    summary["accepted_per_s"] = statuses.get(202, 0) / elapsed
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--teams", type=int, default=500)
    parser.add_argument("--per-team", type=int, default=20)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=3000, help="GETs per board measured with httpx")
    parser.add_argument("--raw-requests", type=int, default=20000, help="GETs per board with the raw client")
    parser.add_argument("--upload-seconds", type=float, default=10.0)
    parser.add_argument("--board-path", default=f"/api/v1/competitions/{COMPETITION}/leaderboard")
    parser.add_argument("--page-path", default=None, help=f"the HTML board too, e.g. /c/{COMPETITION}")
    parser.add_argument("--server-workers", type=int, default=1)
    parser.add_argument("--database-url", default=None, help="an empty database (default: SQLite in a temp folder)")
    parser.add_argument(
        "--state-dir",
        type=Path,
        default=None,
        help="keep the seeded SQLite database and its tokens here and reuse them next time",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="opjudge-load-") as tmp:
        state = args.state_dir or Path(tmp)
        state.mkdir(parents=True, exist_ok=True)
        saved = state / f"tokens-{args.teams}x{args.per_team}.json"
        database = state / f"bench-{args.teams}x{args.per_team}.db"
        env = {**os.environ, **BENCH_SECRETS, "OPJUDGE_DATABASE_URL": args.database_url or f"sqlite:///{database}",
               "OPJUDGE_WORK_ROOT": str(Path(tmp) / "work"), "OPJUDGE_CACHE_DIR": str(Path(tmp) / "cache")}  # fmt: skip
        os.environ.update(env)
        began = time.perf_counter()
        if args.state_dir and saved.exists() and not args.database_url:
            tokens = json.loads(saved.read_text())
            print(f"reusing the seeded database in {state}", flush=True)
        else:
            tokens = seed(Settings(), teams=args.teams, per_team=args.per_team)
            saved.write_text(json.dumps(tokens))
            print(f"seeded {args.teams} teams x {args.per_team} submissions in {time.perf_counter() - began:.1f} s",
                  flush=True)  # fmt: skip
        seeded_s = time.perf_counter() - began
        server, base = start_server(env, args.server_workers)
        try:
            figures: dict[str, object] = {"seed_s": seeded_s, "teams": args.teams, "per_team": args.per_team,
                                          "clients": args.clients, "server_workers": args.server_workers}  # fmt: skip
            phases = []
            for name, path in (("leaderboard", args.board_path), ("page", args.page_path)):
                if path:
                    phases.append(
                        (
                            f"{name} (httpx)",
                            partial(measure_gets, base, path, clients=args.clients, requests=args.requests),
                        )
                    )
                    phases.append(
                        (
                            f"{name} (raw)",
                            partial(measure_gets_raw, base, path, clients=args.clients, requests=args.raw_requests),
                        )
                    )
            phases.append(
                ("uploads", partial(measure_uploads, base, tokens, clients=args.clients, seconds=args.upload_seconds))
            )
            for name, phase in phases:
                cpu_before, client_before = server_cpu_s(server), time.process_time()
                got = asyncio.run(phase())
                got["server_cpu_ms_per_request"] = 1000 * (server_cpu_s(server) - cpu_before) / got["requests"]
                got["client_cpu_ms_per_request"] = 1000 * (time.process_time() - client_before) / got["requests"]
                figures[name] = got
        finally:
            server.terminate()
            server.wait(timeout=30)
    _report(figures)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


def _report(figures: dict[str, object]) -> None:
    for name, got in figures.items():
        if isinstance(got, dict) and name != "uploads":
            verdict = "meets" if got["p99_ms"] < 100 and not got["non_200"] else "MISSES"
            print(f"{name:18s} p50 {got['p50_ms']:6.1f} ms  p99 {got['p99_ms']:6.1f} ms  max {got['max_ms']:6.1f} ms  "
                  f"{got['per_s']:6.0f} req/s  {got['bytes'] / 1024:.0f} KiB on the wire  non-200 {got['non_200']}  "
                  f"CPU server {got['server_cpu_ms_per_request']:.2f} client {got['client_cpu_ms_per_request']:.2f} "
                  f"ms/req  ({verdict} p99 < 100 ms)")  # fmt: skip
    up = figures["uploads"]
    assert isinstance(up, dict)
    verdict = "meets" if up["accepted_per_s"] >= 50 else "MISSES"
    print(f"{'uploads':18s} {up['accepted_per_s']:6.1f} accepted/s  p50 {up['p50_ms']:6.1f} ms  "
          f"p99 {up['p99_ms']:6.1f} ms  refused {up['non_200']}  "
          f"CPU server {up['server_cpu_ms_per_request']:.2f} client {up['client_cpu_ms_per_request']:.2f} ms/req  "
          f"({verdict} >= 50/s)")  # fmt: skip
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
