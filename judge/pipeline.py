"""One judge run, stage by stage (docs/rules.md, "What happens to a submission"; docs/architecture.md)."""

from __future__ import annotations

import contextlib
import logging
import os
import platform
import shutil
import signal
import time
import uuid
from pathlib import Path

from judge.backends import Backend, CaseSet, Isolation, Stage
from judge.baseline_check import BASELINE_KERNEL, BaselineNames
from judge.builds import BuiltKernels, build_kernels
from judge.checker import OracleChecker, conduct
from judge.determinism import set_deterministic
from judge.errors import JudgeError, SandboxUnavailableError
from judge.host import HostConfig
from judge.modes import RunMode
from judge.oracle_cache import OracleCache
from judge.problem import Case
from judge.profiling.context import ProfileContext
from judge.profiling.passes import profile_cases
from judge.request import JudgeRequest, Reporter
from judge.results import CaseResult, JudgeResult
from judge.retime import DISTURBED, RetimePolicy, time_until_calm
from judge.runner.baseline import BaselineFailed, BaselineRunner
from judge.runner.failures import FailureKind, RunnerFailed, SubmissionBrokeRunner, allocation_failed
from judge.runner.protocol import ProtocolViolation
from judge.runner.session import WITHHELD_OUTPUT_NOTE, RunnerDied, RunnerSession, RunnerStartFailed
from judge.runner.spec import REPO_ROOT, SessionSpec
from judge.sandbox.base import Sandbox, SandboxLimits
from judge.sandbox.memcg import memory_root
from judge.scoring import case_score_vs_baseline, online_score
from judge.seeds import mixed_seed
from judge.timing_phase import TimingPhase, time_cases
from judge.tracks import Track, get_track
from judge.verdict import Verdict, worst

log = logging.getLogger("opjudge.judge")
CORRECTNESS_LATE_PROBE_MS = 150  # correctness calls are untimed: look longer for late writes
PROFILE_BUDGET_S = 1.0  # wall time of one case's profiled pass on the CPU (a device tool takes a multiple)


def run_pipeline(request: JudgeRequest, *, host: HostConfig, reporter: Reporter) -> JudgeResult:
    track = get_track(request.backend)
    result = JudgeResult(verdict=Verdict.AC, problem=request.problem.slug, backend=request.backend, message="",
                         mode=request.mode)
    workdir = host.work_root / f"run-{uuid.uuid4().hex[:12]}"
    workdir.mkdir(parents=True)
    try:
        sandbox = _make_sandbox(host)
        result.isolation = sandbox.isolation
        built = build_kernels(request, host=host, track=track, sandbox=sandbox, workdir=workdir,
                              reporter=reporter, result=result)
        if built is not None:
            _run_cases(request, host=host, track=track, sandbox=sandbox, built=built, workdir=workdir,
                       reporter=reporter, result=result)
    except SandboxUnavailableError as exc:
        _internal(result, f"sandbox unavailable: {exc}")
    except JudgeError as exc:
        log.exception("judge run failed")
        _internal(result, f"{type(exc).__name__}: {exc}")
    finally:
        if not host.extra.get("keep_workdir"):
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


def _run_cases(request: JudgeRequest, *, host: HostConfig, track: Track, sandbox: Sandbox, built: BuiltKernels,
               workdir: Path, reporter: Reporter, result: JudgeResult) -> None:
    problem, limits = request.problem, host.limits
    cases = problem.cases_for(request.backend, list(request.judged_sets))
    if track.deterministic_generation:  # the child does the same: both make every input
        set_deterministic(True, warn_only=True)
    checker = OracleChecker(problem, _oracle_cache(host), generation_device=track.generation_device,
                            oracle_device=track.oracle_device, oracle_threads=limits.oracle_threads)
    run_dir = workdir / "run"
    run_dir.mkdir()
    threads = limits.threads or len(os.sched_getaffinity(0))
    # GOMP_SPINCOUNT: OpenMP's idle threads spin for about 10 us (the default is some 300k spins,
    # hundreds of us) before they sleep. A pool spinning after one kernel's call slows the wake-up
    # of the next call on a small host, and the worker's bracket around that call (timing.py,
    # the CPU track's clock) would charge it to whichever kernel comes next.
    env = {"OMP_NUM_THREADS": str(threads), "GOMP_SPINCOUNT": "10000",
           "PYTHONPATH": str(REPO_ROOT), "PYTHONDONTWRITEBYTECODE": "1",
           "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **track.runner_env(host)}
    memory_cgroups = memory_root(host.memory_cgroup)
    box_limits = SandboxLimits(
        cpu_time_s=runner_cpu_seconds(limits.run_time_limit_s, threads),
        max_processes=runner_process_limit(limits.max_processes, threads),
        address_space_mib=_address_space_mib(track, request.backend, memory_cgroups is not None),
        max_file_size_bytes=limits.max_file_size_bytes, max_open_files=limits.max_open_files,
        devices=tuple(track.device_nodes(host)),
        # Shared memory and tmpfs files count too; no IPC objects on the CPU track, whose seal
        # refuses them as well (the device runtimes need shared memory). docs/security.md, "Memory".
        memory_mib=limits.child_memory_mib or None, ipc_limits=request.backend is Backend.CPU,
    )
    runtime_options = track.runtime_options(host)
    reference_dir = host.reference_dir or REPO_ROOT / "reference_kernels"
    readonly = [p for p in track.readonly_paths(host) if p.exists()]

    def runner(role: str, library: Path, folder: Path, *, python_baseline: bool = False,
               deterministic: bool = track.deterministic_generation,
               command_prefix: tuple[str, ...] = ()) -> RunnerSession:
        folder.mkdir(exist_ok=True)
        adapter = reference_dir / problem.slug / request.backend.value  # the vendor operator's adapter
        extra = [adapter] if python_baseline and adapter.exists() else []
        child_env, child_options = {**env, "HOME": str(folder)}, runtime_options
        if command_prefix and track.under_profiler is not None:
            child_env, child_options = track.under_profiler(host, child_env, runtime_options)
        return RunnerSession(SessionSpec(
            sandbox=sandbox, problem=problem, backend=request.backend.value, libraries={role: library},
            reference_dir=reference_dir, runtime_options=child_options, workdir=folder,
            sandbox_limits=box_limits, env=child_env,
            workspace_limit_bytes=limits.workspace_limit_bytes, stdout_limit_bytes=limits.stdout_limit_bytes,
            lockdown=sandbox.isolation is not Isolation.OFF, runtime_rules=track.runtime_rules,
            readonly_paths=(*readonly, *extra),
            python_baseline=python_baseline, generation_device=track.generation_device,
            deterministic=deterministic, command_prefix=command_prefix,
            call_guard=host.extra.get("call_guard", "on") != "off",  # off: bench/timing_stability.py only
            memory_root=memory_cgroups,
        ))

    reporter.stage(Stage.CHECKING)
    session = runner("submission", built.submission, run_dir)
    # The baseline never shares the submission's process (judge/runner/baseline.py). Its child is
    # launched first and is ready before the submission's first call. Only the submission's child
    # makes inputs the worker compares with its own, so only it needs deterministic generation
    # (which could also slow a vendor operator down). The vendor adapter's folder is its alone.
    baseline = BaselineRunner(runner("baseline", built.baseline, workdir / "baseline-run",
                                     python_baseline=track.python_baseline is not None, deterministic=False))
    timing_wanted = any(c.case_set.timed for c in cases)
    case_results: list[CaseResult] = []
    result.cases = case_results
    current: Case | None = None  # the case being checked or timed, for a death's report
    started = time.monotonic()
    stage_s = {"correctness": 0.0, "timing": 0.0}  # summed over the public and the private child
    disturbed: list[str] = []  # each group's timing that stayed disturbed (retime.py)

    def judge_group(child: RunnerSession, group: list[Case], *, public: bool) -> bool:
        """Check `group`'s cases, then time its timed ones (and profile them, public cases only) in
        `child`; whether every case passed."""
        nonlocal current, started
        with child:
            if public:
                result.host.update(child.device_info, host=platform.node())
            started = time.monotonic()  # the children's start-up is the judge's time, not the run's
            checking_started, oracle_before = time.monotonic(), checker.oracle_seconds
            first = len(case_results)
            for case in group:
                current = case
                _within_run_time(started, limits.run_time_limit_s, checker.oracle_seconds)
                case_results.append(_check_case(child, case, request, checker, limits.call_time_limit_s,
                                                limits.workspace_limit_bytes))
                reporter.note(f"checked {case.name}")
            stage_s["correctness"] += time.monotonic() - checking_started - (checker.oracle_seconds - oracle_before)
            result.stage_times_s["correctness"] = stage_s["correctness"]
            mine = case_results[first:]
            timed = [(r, c) for r, c in zip(mine, group, strict=True) if c.case_set.timed]
            if timed and all(c.passed for c in case_results):
                reporter.stage(Stage.TIMING)
                _time_group(child, timed)
            if public and host.extra.get("profile", "on") != "off" and all(c.passed for c in case_results):
                profile_cases(result, timed, lambda case: profile_context(child, case))
        if public:  # after the child has exited (and flushed its C stdio buffers) and the drains have ended
            result.kernel_output = child.output_text() + result.kernel_output
        return all(c.passed for c in case_results)

    def _time_group(child: RunnerSession, timed: list[tuple[CaseResult, Case]]) -> None:
        timing_started, oracle_before = time.monotonic(), checker.oracle_seconds
        # The timing phase's attempts after the first (retime.py) are the judge's time: from the end
        # of the first attempt on, the clock of the run's time limit stands still.
        first_done: float | None = None

        def judge_time() -> float:
            return time.monotonic() - first_done if first_done is not None else 0.0

        def before_case(case: Case) -> None:
            nonlocal current
            current = case
            _within_run_time(started + judge_time(), limits.run_time_limit_s, checker.oracle_seconds)

        for case_result, case in timed:  # which baseline times each case, for the report and CSV
            case_result.baseline = result.host[f"baseline:{case.name}"] = names(case)
        phase = TimingPhase(child, baseline, checker, host, runtime_options, track.host_clock, baseline_names=names)

        def time_phase() -> None:
            nonlocal first_done
            time_cases(phase, timed, result, before_case=before_case,
                       after_case=lambda c: reporter.note(f"timed {c.name}"))
            first_done = first_done if first_done is not None else time.monotonic()

        def room_for(seconds: float) -> bool:  # the whole run, the judge's time too, stays in its limit
            return time.monotonic() - started - checker.oracle_seconds + seconds < limits.run_time_limit_s

        time_until_calm(time_phase, result,
                        RetimePolicy(limits.disturbed_timing_attempts, limits.disturbed_backoff_s),
                        room_for=room_for, passed=lambda: all(r.passed for r, _ in timed))
        if DISTURBED in result.host:
            disturbed.append(result.host[DISTURBED])
        for case_result, case in timed:  # the vendor operator failed on it: the kernel timed it
            if case.name in baseline.vendor_failures:
                case_result.baseline = result.host[f"baseline:{case.name}"] = BASELINE_KERNEL
                result.host[f"baseline_note:{case.name}"] = (
                    "the vendor operator failed on this case; the baseline kernel timed it (the judge's "
                    "concern, reported to the organisers)")
        for case_result, case in timed:  # for the CSV export, with the baseline's name
            for key, count in (("launches", case_result.launches),
                               ("baseline_launches", case_result.baseline_launches)):
                if count is not None:
                    result.host[f"{key}:{case.name}"] = str(count)
        stage_s["timing"] += time.monotonic() - timing_started - (checker.oracle_seconds - oracle_before)
        result.stage_times_s["timing"] = stage_s["timing"]

    def profile_context(child: RunnerSession, case: Case) -> ProfileContext:
        nonlocal current
        current = case
        folder = workdir / "profile" / case.name
        folder.mkdir(parents=True, exist_ok=True)
        return ProfileContext(
            case=case, session=child, threads=threads,
            call_timeout_s=limits.call_time_limit_s, folder=folder,
            budget_s=min(PROFILE_BUDGET_S, limits.case_time_budget_s),  # never more than timing
            start_runner=lambda prefix, run_folder: runner("submission", built.submission, run_folder,
                                                           command_prefix=tuple(prefix)),
        )  # fmt: skip

    # Private cases stay private (docs/rules.md): the public cases are checked, timed and profiled in
    # one child, and only once every public figure is final does a fresh child, which has never seen
    # a public case's report go out, check and time the private ones. A kernel that remembers the
    # private sizes it saw has no public case left to write them into (a red team's kernel did, in
    # the max_abs_err of a public WA, when one child ran every case).
    public_cases = [c for c in cases if c.case_set is not CaseSet.PRIVATE]
    private_cases = [c for c in cases if c.case_set is CaseSet.PRIVATE]
    try:
        with contextlib.ExitStack() as children:
            children.callback(checker.close)  # its oracle thread ends with the run
            if timing_wanted:
                children.enter_context(baseline)
                if track.early_submission_start and public_cases:
                    children.callback(session.__exit__)  # ends it should the baseline fail to start
                    session.start()  # its runtime loads beside the baseline's; the hello waits
                result.host.update({f"baseline_{k}": v for k, v in baseline.ready().items()
                                    if k.endswith("overhead_ns") or k == "python_baseline"})
            names = BaselineNames(result.host.get("baseline_python_baseline", ""),
                                  reference_dir / problem.slug / request.backend.value,
                                  cann_version=runtime_options.get("cann_version"))
            # The roof of the report's chart, recorded with the run since workers differ.
            for key in ("peak_flops", "peak_bytes_per_s"):
                if runtime_options.get(key):
                    result.host[key] = str(runtime_options[key])
            passed = judge_group(session, public_cases, public=True) if public_cases else True
            if passed and private_cases:
                private = runner("submission", built.submission, workdir / "private-run")
                if public_cases:  # all of the private child's output is
                    result.kernel_output += WITHHELD_OUTPUT_NOTE  # withheld (it writes to its file only)
                session = private  # a death's report reads the child that died
                judge_group(private, private_cases, public=not public_cases)
        if disturbed:
            result.host[DISTURBED] = "; ".join(disturbed)
    except RunnerStartFailed as exc:
        _internal(result, str(exc))
        return
    except BaselineFailed as exc:
        _internal(result, str(exc))
        result.kernel_output = session.output_text()
        return
    except RunOutOfTime as exc:
        _record_failure(case_results, current or cases[0], Verdict.TLE, str(exc))
    except RunnerDied as exc:
        _record_death(result, case_results, current or cases[0], exc)
    except ProtocolViolation as exc:
        result.verdict, result.message = Verdict.SV, f"the result channel was tampered with: {exc}"
        return
    except SubmissionBrokeRunner as exc:  # never IE once the submission's code has run (docs/security.md, layer 5)
        log.warning("the submission's runner failed after its code ran: %s", exc.detail[-4000:])
        _record_failure(case_results, current or cases[0], Verdict.MLE if exc.memory else Verdict.RE, str(exc))
    except RunnerFailed as exc:
        if exc.kind == FailureKind.KERNEL:  # the device faulted in the call: RE on that case, like a crash
            # A hang the device's watchdog ended is TLE (the NPU's faults.py marks it "[device timeout]").
            verdict = Verdict.TLE if "[device timeout]" in str(exc) else Verdict.RE
            _record_failure(case_results, current or cases[0], verdict, str(exc))
        elif exc.kind == FailureKind.LOAD:
            verdict = Verdict.CE if "kernel_run" in str(exc) else Verdict.RE
            result.verdict, result.message = verdict, str(exc)
            return
        else:
            _internal(result, f"the runner failed: {exc}")
            return
    result.stage_times_s["oracle"] = checker.oracle_seconds
    reporter.stage(Stage.SCORING)
    _conclude(result)


def _check_case(session: RunnerSession, case: Case, request: JudgeRequest, checker: OracleChecker,
                call_timeout_s: float, workspace_limit: int) -> CaseResult:
    session.set_case(case, timeout_s=call_timeout_s)
    seed = _case_seed(request, case)
    checker.prefetch(case, seed, cacheable=True)  # the oracle beside the untimed call (judge/checker.py)
    outcome = session.call("submission", seed, timeout_s=call_timeout_s, recheck_ms=CORRECTNESS_LATE_PROBE_MS)
    check = conduct(case, outcome, workspace_limit)
    if check.verdict is Verdict.AC:
        outputs = session.fetch_outputs(call_timeout_s)
        check = checker.check(case, seed, outcome, outputs, cacheable=True, after_kernel=session.kernel_calls > 1)
    flops, min_bytes = checker.module.work(case, checker.inputs(case, seed))
    public = case.case_set is not CaseSet.PRIVATE
    return CaseResult(
        name=case.name, case_set=case.case_set, passed=check.verdict is Verdict.AC, outputs=check.outputs,
        verdict=check.verdict, message=check.message, flops=float(flops), min_bytes=float(min_bytes),
        checked_calls=1,
        sizes={"dtype": case.dtype, **case.params} if public else {},
    )


def _case_seed(request: JudgeRequest, case: Case) -> int:
    return mixed_seed(request.secret, request.problem.slug, case.case_set.value, case.name, case.seed)


class RunOutOfTime(Exception):
    """The run as a whole passed its time limit (docs/rules.md: TLE for the run)."""


def _within_run_time(started: float, limit_s: float, oracle_s: float) -> None:
    """Raise RunOutOfTime once the cases have run for longer than the run's limit (wall clock).

    Checked before each case: one case is bounded by its call limit and timing budget. The
    oracle's time is the judge's own work, not the submission's, and is left out.
    """
    spent = time.monotonic() - started - oracle_s
    if spent > limit_s:
        raise RunOutOfTime(f"the run as a whole took {spent:.0f} s, over its limit of {limit_s:.0f} s; "
                           "this case and the ones after it were not run")


def runner_cpu_seconds(run_time_limit_s: float, threads: int) -> float:
    """RLIMIT_CPU of the runner child: the run's limit for each thread it may keep busy.

    The kernel's OpenMP pool (and a device's spinning synchronisation) all count towards one
    RLIMIT_CPU; a limit of the run's seconds alone would stop a 64-thread kernel after 10 s.
    The wall-clock limit of the run is `_within_run_time`'s; this one only stops runaway CPU use.
    The child's start-up (Python, torch, the cases) is not charged to the run's wall clock, so it
    gets CPU seconds of its own: without them a loaded host hit this limit before the run's.
    """
    return run_time_limit_s * max(1, threads) + RUNNER_START_CPU_S


RUNNER_START_CPU_S = 30.0


def runner_process_limit(max_processes: int, threads: int) -> int:
    """RLIMIT_NPROC of the runner children: `max_processes` beyond the threads the run needs.

    The limit counts every thread of the user the children run as, not one process's: the
    worker's (its oracle may use every core), the submission's child and the baseline's child,
    each with an OpenMP pool of `threads`. A fixed 256 would stop the baseline's child on a
    large host (two pools of 128 threads), and that is the judge's failure. Forks are killed by
    the runner's lockdown anyway; this limit only bounds threads.
    """
    return max_processes + 3 * max(1, threads)


def _record_death(result: JudgeResult, case_results: list[CaseResult], case: Case, exc: RunnerDied) -> None:
    """The case during which the child died gets the verdict (its timing, or a new row if unchecked)."""
    verdict, reason = classify_death(exc)
    if case.case_set is CaseSet.PRIVATE and result.kernel_output:
        pass  # the private child died: the public child's output, kept already, is what the team sees
    else:
        result.kernel_output = exc.stderr[-4096:]
    if exc.withheld_stderr and WITHHELD_OUTPUT_NOTE not in result.kernel_output:
        result.kernel_output += WITHHELD_OUTPUT_NOTE
    _record_failure(case_results, case, verdict, reason)


def _record_failure(case_results: list[CaseResult], case: Case, verdict: Verdict, reason: str) -> None:
    row = next((r for r in case_results if r.name == case.name), None)
    if row is None:
        row = CaseResult(name=case.name, case_set=case.case_set, passed=False)
        case_results.append(row)
    row.passed, row.verdict, row.message = False, verdict, f"case {case.name}: {reason}"


def classify_death(exc: RunnerDied) -> tuple[Verdict, str]:
    """Verdict for a child that ended during a call (docs/rules.md: TLE, MLE, RE, SV).

    Never IE: by now the launcher has exec'd the child and the submission is loaded, so a launcher
    failure would have been `RunnerStartFailed`. The launcher's exit status and stderr line are
    easy for a kernel to forge, and an IE is retried and never charged.
    """
    if exc.memory_limit_mib is not None:
        return Verdict.MLE, (f"memory limit exceeded: the process's memory (shared memory and files in /tmp "
                             f"included) reached {exc.memory_limit_mib} MiB and the kernel ended it")
    if exc.timed_out:
        return Verdict.TLE, f"{exc} (the call time limit); the process was killed"
    code = exc.returncode
    text = exc.stderr + exc.withheld_stderr
    if code is not None and 128 < code < 128 + 65:
        code = 128 - code  # a sandbox's init reports its child's death by signal N as status 128 + N
    if code is not None and code < 0:
        sig = signal.Signals(-code)
        if sig is signal.SIGSYS:
            return Verdict.SV, "a forbidden system call was made (killed by the sandbox's seccomp filter)"
        if sig is signal.SIGXCPU:
            return Verdict.TLE, "CPU time limit exceeded"
        if sig in (signal.SIGKILL, signal.SIGABRT) and ("MemoryError" in text or "bad_alloc" in text):
            return Verdict.MLE, "memory limit exceeded (an allocation failed)"
        if sig is signal.SIGXFSZ:
            return Verdict.RE, "wrote more than the file size limit"
        return Verdict.RE, f"the process died with {sig.name}"
    if allocation_failed(text):
        return Verdict.MLE, "memory limit exceeded (an allocation failed)"
    return Verdict.RE, f"the process exited with status {code} inside kernel_run"


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


def _address_space_mib(track: Track, backend: Backend, memory_cgroup: bool) -> int | None:
    """RLIMIT_AS of a CPU runner child. With a memory cgroup the group is the memory limit and the
    address space only a backstop (four times the limit): reserved but untouched address space is
    no memory, and OpenMP threads' stacks and glibc's 64 MiB malloc arenas reserve a lot of it on a
    many-core host. Without a group the address space is the limit (docs/security.md, "Memory")."""
    if backend is not Backend.CPU or not track.limits.memory_limit_mib:
        return None
    return track.limits.memory_limit_mib * (4 if memory_cgroup else 1)


def _oracle_cache(host: HostConfig) -> OracleCache | None:
    if not host.cache_dir:
        return None
    return OracleCache(host.cache_dir / "oracle", max_bytes=host.oracle_cache_max_bytes,
                       max_age_s=host.oracle_cache_max_age_s)  # fmt: skip
