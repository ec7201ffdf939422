"""One judge run, stage by stage (docs/rules.md, "What happens to a submission"; docs/architecture.md)."""

from __future__ import annotations

import logging
import shutil
import uuid

from judge.backends import CaseSet, Isolation, Stage
from judge.builds import BuiltKernels, build_kernels
from judge.errors import JudgeError, SandboxUnavailableError
from judge.host_config import HostConfig
from judge.modes import RunMode
from judge.oracle_cache import OracleCache
from judge.request import JudgeRequest, Reporter
from judge.results import JudgeResult
from judge.run import Run
from judge.sandbox.base import Sandbox
from judge.scoring import case_score_vs_baseline, online_score
from judge.tracks import get_track
from judge.verdict import Verdict, worst

log = logging.getLogger("opjudge.judge")


def run_pipeline(request: JudgeRequest, *, host: HostConfig, reporter: Reporter) -> JudgeResult:
    track = get_track(request.backend)
    result = JudgeResult(verdict=Verdict.AC, problem=request.problem.slug, backend=request.backend, message="",
                         mode=request.mode)
    workdir = host.work_root / f"run-{uuid.uuid4().hex[:12]}"
    workdir.mkdir(parents=True)
    run: Run | None = None
    try:
        sandbox = _make_sandbox(host)
        result.isolation = sandbox.isolation

        def make_run(built: BuiltKernels) -> Run:
            nonlocal run
            run = Run(request, host=host, track=track, sandbox=sandbox, built=built, workdir=workdir,
                      reporter=reporter, result=result, oracle_cache=_oracle_cache(host))
            return run

        # Where the track allows it, the runner children start (import their runtime, and the
        # baseline's loads its library) while the submission compiles: on a 2-CPU host that is
        # most of their start-up off the judge's time. The submission's child gets its hello, and
        # loads the submission, only once every check of the build has passed (docs/rules.md).
        early = (lambda built: make_run(built).prestart()) if track.early_submission_start else None
        built = build_kernels(request, host=host, track=track, sandbox=sandbox, workdir=workdir,
                              reporter=reporter, result=result, before_compile=early)
        if built is not None:
            # Started early, the run was made with these very paths (build_kernels checks them).
            judged = run if run is not None else make_run(built)
            if judged.judge():
                reporter.stage(Stage.SCORING)
                _conclude(result)
    except SandboxUnavailableError as exc:
        _internal(result, f"sandbox unavailable: {exc}")
    except JudgeError as exc:
        log.exception("judge run failed")
        _internal(result, f"{type(exc).__name__}: {exc}")
    finally:
        if run is not None:
            run.close()  # children started early for a build that then failed, or a check refused
        if not host.keep_workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    if result.isolation is Isolation.OFF:
        result.message += " [sandbox off: development only, the submission was not isolated]"
    elif result.isolation is Isolation.DEGRADED:
        result.message += " [isolation degraded: no namespaces on this host]"
    reporter.stage(Stage.DONE)
    return result


def _internal(result: JudgeResult, message: str) -> None:
    result.verdict, result.message = Verdict.IE, message


def _make_sandbox(host: HostConfig) -> Sandbox:
    from judge.sandbox.select import make_sandbox

    return make_sandbox(host.sandbox_mode)


def _conclude(result: JudgeResult) -> None:
    failures = [c for c in result.cases if not c.passed]
    # A failure the submission earned stands: an IE on a later case cannot turn it into a run that
    # is retried and never charged (a kernel could otherwise hide a wrong answer behind one).
    first_ie = next((i for i, c in enumerate(failures) if c.verdict is Verdict.IE), len(failures))
    earned = failures[:first_ie]
    result.verdict = worst([c.verdict for c in earned or result.cases] or [Verdict.AC])
    if failures:
        first = next(c for c in failures if c.verdict is result.verdict)
        result.message = first.message
        # A failed timed run scores 0; a test run is never scored, passed or not (docs/rules.md).
        result.score = None if result.mode is RunMode.TEST else 0.0
        return
    result.message = f"all {len(result.cases)} cases passed"
    for case_set in (CaseSet.BENCHMARKS, CaseSet.PRIVATE):
        ratios = [c.ratio for c in result.cases if c.case_set is case_set and c.ratio]
        if ratios:
            result.set_scores[case_set.value] = online_score([case_score_vs_baseline(r) for r in ratios], True)
    result.score = result.set_scores.get("benchmarks", result.set_scores.get("private"))


def _oracle_cache(host: HostConfig) -> OracleCache | None:
    if not host.cache_dir:
        return None
    return OracleCache(host.cache_dir / "oracle", max_bytes=host.oracle_cache_max_bytes,
                       max_age_s=host.oracle_cache_max_age_s)  # fmt: skip
