"""`opjudge judge`, `opjudge problems` and `opjudge doctor`: the engine alone from a terminal.

The service's commands (serve, worker, submit, ...) are added by api/cli.py on
top of this app, so judge/ stays free of web and database imports. This is the
edge where settings come from flags and environment variables; below it,
judge/ only sees the `HostConfig` built here.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from judge.backends import Backend, CaseSet
from judge.engine import JudgeRequest, judge_submission
from judge.errors import UserFacingError
from judge.host import host_from_env
from judge.host_config import HostConfig
from judge.modes import RunMode
from judge.problem import list_problems, load_problem
from judge.submission import read_sources
from judge.terminal_report import print_report
from judge.tracks import get_track
from judge.verdict import Verdict

app = typer.Typer(help="opjudge: judge kernel submissions.", no_args_is_help=True, add_completion=False)

SANDBOX_ENV = ["OPJUDGE_SANDBOX_MODE", "OPJUDGE_SANDBOX"]  # the service's name first
# Where the workers keep their cache unless OPJUDGE_CACHE_DIR says otherwise (api/settings.py).
DEFAULT_CACHE_DIR = Path(__file__).resolve().parent.parent / "var" / "cache"
# The registered tracks' backends (judge/tracks/__init__.py), as the flags' help names them.
BACKENDS = ", ".join(b.value for b in Backend)
CASE_CHOICES = {"tests": (CaseSet.TESTS,), "benchmarks": (CaseSet.BENCHMARKS,), "private": (CaseSet.PRIVATE,),
                "all": (CaseSet.TESTS, CaseSet.BENCHMARKS, CaseSet.PRIVATE)}


def usage_error(message: str) -> typer.Exit:
    print(f"error: {message}", file=sys.stderr)
    return typer.Exit(2)


def host_config(*, backend: Backend | None, sandbox: str, cache_dir: Path | None, work_root: Path) -> HostConfig:
    """The host as this machine's environment describes it (the CLI is the edge that may read it), with
    `backend`'s track's limits; None: a host that judges nothing (the doctor's), with HostConfig's own.

    A local run has no competition: the tracks' settings (the NPU clock, the CPU flush, ...) come
    from their variables (each track's `Track.settings`). A bad value is a usage error."""
    # A memory cgroup per runner child: auto, required or off (judge/sandbox/memcg.py).
    memory_cgroup = os.environ.get("OPJUDGE_MEMORY_CGROUP", "auto")
    try:
        limits = {} if backend is None else {"limits": get_track(backend).limits}
        return host_from_env(os.environ, backend=backend, work_root=work_root, sandbox_mode=sandbox,
                             memory_cgroup=memory_cgroup, cache_dir=cache_dir, **limits)
    except ValueError as exc:
        raise usage_error(str(exc)) from None


@app.command("judge")
def judge_command(
    files: Annotated[list[Path], typer.Argument(help="source files of the submission")],
    problem: Annotated[str, typer.Option(help="problem slug, see `opjudge problems`")],
    backend: Annotated[str, typer.Option(help=f"one of the registered backends: {BACKENDS}")] = "cpu",
    cases: Annotated[str, typer.Option(help="tests, benchmarks, private or all")] = "all",
    mode: Annotated[str, typer.Option(help="test, benchmark or ranked: narrows --cases like the service")] = "ranked",
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
    sandbox: Annotated[str, typer.Option(envvar=SANDBOX_ENV, help="strict, auto or off")] = "auto",
    secret: Annotated[str, typer.Option(envvar="OPJUDGE_JUDGE_SECRET", help="mixed into case seeds")] = "",
    cache_dir: Annotated[Path | None, typer.Option(envvar="OPJUDGE_CACHE_DIR")] = None,
) -> None:
    """Judge FILES as a submission to PROBLEM on BACKEND and print the report."""
    if cases not in CASE_CHOICES:
        raise usage_error(f"--cases must be one of {', '.join(CASE_CHOICES)}, not {cases!r}")
    if mode not in RunMode.__members__.values():
        raise usage_error(f"--mode must be one of {', '.join(m.value for m in RunMode)}, not {mode!r}")
    if sandbox not in ("strict", "auto", "off"):
        raise usage_error(f"--sandbox must be strict, auto or off, not {sandbox!r}")
    try:
        chosen_backend = Backend(backend)
    except ValueError:
        raise usage_error(f"unknown backend {backend!r}; backends: {BACKENDS}") from None
    try:
        loaded = load_problem(problem)
        loaded.cases_for(chosen_backend)
        host_limits = get_track(chosen_backend).limits
        sources = read_sources(files, host_limits, chosen_backend)
    except UserFacingError as exc:
        raise usage_error(str(exc)) from None
    request = JudgeRequest(problem=loaded, backend=chosen_backend, sources=sources,
                           case_sets=CASE_CHOICES[cases], mode=RunMode(mode),
                           secret=secret.encode() if secret else secrets.token_bytes(32))
    with tempfile.TemporaryDirectory(prefix="opjudge-") as work:
        host = host_config(backend=chosen_backend, sandbox=sandbox, cache_dir=cache_dir, work_root=Path(work))
        result = judge_submission(request, host=host)
    if as_json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print_report(result)
    if result.verdict is Verdict.IE:
        raise typer.Exit(1)


@app.command("problems")
def problems_command() -> None:
    """List problems with their backends and case counts."""
    for slug in list_problems():
        problem = load_problem(slug)
        print(f"{slug} (v{problem.version}): {problem.title}")
        for backend in problem.backends:
            counts = {s.value: len(problem.cases_for(backend, [s])) for s in CaseSet}
            print(f"  {backend.value:5} " + ", ".join(f"{k} {v}" for k, v in counts.items()))


@app.command("doctor")
def doctor_command(
    sandbox: Annotated[str, typer.Option(envvar=SANDBOX_ENV)] = "auto",
    cache_dir: Annotated[Path, typer.Option(envvar="OPJUDGE_CACHE_DIR", help="the workers' cache folder")] = (
        DEFAULT_CACHE_DIR),
    baselines: Annotated[str | None, typer.Option(
        help="a problem slug: run every timed case's baseline once and say which baseline times it")] = None,
    backend: Annotated[str, typer.Option(help=f"with --baselines: one of {BACKENDS}")] = "cpu",
) -> None:
    """Report toolchains, devices, sandbox and versions of every backend on this host.

    With --baselines PROBLEM: also run every timed case's baseline once on BACKEND (before a contest)."""
    from judge.doctor import doctor_report, render_doctor

    # One host for every track's checks: it judges nothing, so no track's limits (judge/doctor.py).
    host = host_config(backend=None, sandbox=sandbox, cache_dir=cache_dir, work_root=Path(tempfile.gettempdir()))
    print(render_doctor(doctor_report(host)))
    if baselines is None:
        return
    from judge.baseline_preflight import BaselineSourcesMissing, check_baselines

    try:
        chosen_backend = Backend(backend)
        loaded = load_problem(baselines)
        loaded.cases_for(chosen_backend)
    except (ValueError, UserFacingError) as exc:
        raise usage_error(str(exc)) from None
    print()
    with tempfile.TemporaryDirectory(prefix="opjudge-baselines-") as work:
        run_host = host_config(backend=chosen_backend, sandbox=sandbox, cache_dir=cache_dir, work_root=Path(work))
        try:
            report = check_baselines(loaded, chosen_backend, run_host)
        except BaselineSourcesMissing as exc:
            raise usage_error(str(exc)) from None
    print(report.render())
    if not report.ok:
        raise typer.Exit(1)


def main() -> None:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format='{"level":"%(levelname)s","logger":"%(name)s","msg":"%(message)s"}')
    app()


if __name__ == "__main__":
    main()
