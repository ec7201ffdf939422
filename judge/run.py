"""The cases of one judge run: checked, timed and profiled in the runner children (docs/rules.md,
"What happens to a submission"; docs/architecture.md). `judge/pipeline.py` builds the kernels
before and scores the run after."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import platform
import time
from pathlib import Path

from judge.backends import CaseSet, Isolation, Stage
from judge.baseline_trust import BASELINE_KERNEL, BaselineNames
from judge.builds import BuiltKernels
from judge.call_check import OracleChecker, conduct
from judge.child_limits import address_space_mib, runner_cpu_seconds, runner_process_limit
from judge.conditions import overheads_ns, positive
from judge.determinism import set_deterministic
from judge.host_config import HostConfig
from judge.limits import child_memory_limit_mib, runtime_host_mib
from judge.oracle_cache import OracleCache
from judge.problem import Case
from judge.profiling.context import ProfileContext
from judge.profiling.passes import profile_cases
from judge.request import JudgeRequest, Reporter
from judge.results import CaseResult, JudgeResult
from judge.retime import RetimePolicy, time_until_calm
from judge.run_failures import FAILURES, RunOutOfTime, failure_of
from judge.runner.baseline_session import BaselineFailed, BaselineRunner
from judge.runner.failures import RunnerDied, SubmissionBrokeRunner
from judge.runner.session import WITHHELD_OUTPUT_NOTE, RunnerSession
from judge.runner.spec import REPO_ROOT, SessionSpec
from judge.sandbox.base import Sandbox, SandboxLimits
from judge.sandbox.memcg import memory_root
from judge.seeds import mixed_seed
from judge.timing_children import TimingChildren
from judge.timing_phase import TimingPhase, time_cases
from judge.tracks import Track
from judge.verdict import Verdict

log = logging.getLogger("opjudge.judge")
CORRECTNESS_LATE_PROBE_MS = 150  # correctness calls are untimed: look longer for late writes
PROFILE_BUDGET_S = 1.0  # wall time of one case's profiled pass on the CPU (a device tool takes a multiple)


class Run:
    """One run's cases, in the submission's children and the baseline's (docs/rules.md: private
    cases in a child of their own). `judge()` says whether the run is scored from its cases."""

    def __init__(self, request: JudgeRequest, *, host: HostConfig, track: Track, sandbox: Sandbox,
                 built: BuiltKernels, workdir: Path, reporter: Reporter, result: JudgeResult,
                 oracle_cache: OracleCache | None) -> None:
        self.request, self.host, self.track, self.built = request, host, track, built
        self.workdir, self.reporter, self.result = workdir, reporter, result
        self.problem, self.limits = request.problem, host.limits
        self.cases = self.problem.cases_for(request.backend, list(request.judged_sets))
        # Private cases in a child of their own (`_judge_groups`), the others in the run's first.
        self.public_cases = [c for c in self.cases if c.case_set is not CaseSet.PRIVATE]
        self.private_cases = [c for c in self.cases if c.case_set is CaseSet.PRIVATE]
        self.any_timed = any(c.case_set.timed for c in self.cases)  # the baseline's child is needed
        if track.deterministic_generation:  # the child does the same: both make every input
            set_deterministic(True, warn_only=True)
        self.checker = OracleChecker(self.problem, oracle_cache, generation_device=track.generation_device,
                                     oracle_device=track.oracle_device, oracle_threads=self.limits.oracle_threads)
        self.threads = self.limits.threads or len(os.sched_getaffinity(0))
        self.runtime_options = track.runtime_options(host)
        self.reference_dir = host.reference_dir or REPO_ROOT / "reference_kernels"
        self.spec = self._base_spec(sandbox)
        self.case_results: list[CaseResult] = []
        result.cases = self.case_results
        self.current: Case | None = None  # the case being checked or timed, for a death's report
        self.started = time.monotonic()  # the run's clock (`_within_run_time`), from each child's start
        self.first_timed: float | None = None  # when the timing phase's first attempt ended (retime.py)
        self.stage_s = {"correctness": 0.0, "timing": 0.0}  # summed over the public and the private child
        self.disturbed: list[str] = []  # each group's timing that stayed disturbed (retime.py)
        self.names: BaselineNames | None = None  # which baseline times each case, once the baseline is ready
        self.private_child: RunnerSession | None = None  # the private cases' child where `prestart` started it
        self.timing: tuple[TimingPhase, TimingChildren] | None = None  # the group being timed, and its children
        self.pairs_started = 0  # fresh pairs the timing phases started (judge/timing_children.py)
        self.child_start_s = 0.0  # and the seconds they took (the judge's, not the run's)
        (workdir / "run").mkdir()
        self.child = self._session("submission", built.submission, workdir / "run")  # a death's report reads it
        # The baseline never shares the submission's process (judge/runner/baseline_session.py). Its child is
        # launched first and is ready before the submission's first call. Only the submission's child
        # makes inputs the worker compares with its own, so only it needs deterministic generation
        # (which could also slow a vendor operator down). The vendor adapter's folder is its alone.
        self.baseline = self._baseline_runner(workdir / "baseline-run")

    def prestart(self) -> None:
        """Start the children while the submission compiles (`build_kernels`' `before_compile`, only
        where the track has `early_submission_start`):
        the baseline's is launched (its hello too: it loads only the baseline), the submission's
        process imports its runtime and waits for its hello, which `judge` sends once the build and
        its checks have passed. `close` ends both if the run goes no further."""
        if self.any_timed:
            self.baseline.__enter__()
        if self.public_cases:
            self.child.start()
        if self.private_cases:
            # The private cases' own child (`_judge_groups`): its process waits, idle and empty, for
            # a hello it gets only once every public figure is final; until then it holds no
            # submission code and no case, so nothing public can come from it.
            self.private_child = self._private_session()
            self.private_child.start()

    def close(self) -> None:
        """End whatever children of the run are still running (idempotent)."""
        for child in (self.child, self.private_child, self.baseline):
            if child is not None:
                child.__exit__()

    def _private_session(self) -> RunnerSession:
        return self._session("submission", self.built.submission, self.workdir / "private-run")

    def _baseline_runner(self, folder: Path) -> BaselineRunner:
        return BaselineRunner(self._session("baseline", self.built.baseline, folder,
                                            python_baseline=self.track.python_baseline is not None,
                                            deterministic=False))

    def _base_spec(self, sandbox: Sandbox) -> SessionSpec:
        """What every child of the run shares; `_session` sets each one's own fields."""
        host, track, limits, backend = self.host, self.track, self.limits, self.request.backend
        # GOMP_SPINCOUNT: OpenMP's idle threads spin for about 10 us (the default is some 300k spins,
        # hundreds of us) before they sleep. A pool spinning after one kernel's call slows the wake-up
        # of the next call on a small host, and the worker's bracket around that call (case_timing.py,
        # the CPU track's clock) would charge it to whichever kernel comes next.
        env = {"OMP_NUM_THREADS": str(self.threads), "GOMP_SPINCOUNT": "10000",
               "PYTHONPATH": str(REPO_ROOT), "PYTHONDONTWRITEBYTECODE": "1",
               "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **track.runner_env(host)}
        memory_cgroups = memory_root(host.memory_cgroup)
        group_mib = child_memory_limit_mib(limits, self.runtime_options)  # the team's and the judge's buffers
        box_limits = SandboxLimits(
            cpu_time_s=runner_cpu_seconds(limits.run_time_limit_s, self.threads),
            max_processes=runner_process_limit(limits.max_processes, self.threads),
            address_space_mib=address_space_mib(track, memory_cgroups is not None),
            max_file_size_bytes=limits.max_file_size_bytes, max_open_files=limits.max_open_files,
            devices=tuple(track.device_nodes(host)),
            # Shared memory and tmpfs files count too; no IPC objects on the CPU track, whose seal
            # refuses them as well (the device runtimes need shared memory). docs/security.md, "Memory".
            memory_mib=group_mib, ipc_limits=track.no_ipc,
        )
        return SessionSpec(
            sandbox=sandbox, problem=self.problem, backend=backend.value, libraries={},
            reference_dir=self.reference_dir, runtime_options=self.runtime_options, workdir=self.workdir,
            sandbox_limits=box_limits, env=env, workspace_limit_bytes=limits.workspace_limit_bytes,
            stdout_limit_bytes=limits.stdout_limit_bytes, lockdown=sandbox.isolation is not Isolation.OFF,
            runtime_rules=track.runtime_rules,
            readonly_paths=tuple(p for p in track.readonly_paths(host) if p.exists()),
            generation_device=track.generation_device, deterministic=track.deterministic_generation,
            call_guard=host.call_guard,  # off: bench/timing_stability.py only
            memory_root=memory_cgroups,
            judge_memory_mib=runtime_host_mib(self.runtime_options) if group_mib else 0,
        )

    def _session(self, role: str, library: Path, folder: Path, *, python_baseline: bool = False,
                 deterministic: bool | None = None, command_prefix: tuple[str, ...] = ()) -> RunnerSession:
        folder.mkdir(exist_ok=True)
        adapter = self.reference_dir / self.problem.slug / self.request.backend.value  # the vendor operator's
        extra = (adapter,) if python_baseline and adapter.exists() else ()
        env, options = {**self.spec.env, "HOME": str(folder)}, self.runtime_options
        if command_prefix and self.track.under_profiler is not None:
            env, options = self.track.under_profiler(self.host, env, self.runtime_options)
        return RunnerSession(dataclasses.replace(
            self.spec, libraries={role: library}, workdir=folder, env=env, runtime_options=options,
            readonly_paths=self.spec.readonly_paths + extra, python_baseline=python_baseline,
            deterministic=self.spec.deterministic if deterministic is None else deterministic,
            command_prefix=command_prefix))

    def judge(self) -> bool:
        """Check, time and profile the cases; whether the run is scored from them (False: a failure
        of the whole run has set its verdict)."""
        self.reporter.stage(Stage.CHECKING)
        try:
            self._judge_groups()
        except tuple(FAILURES) as exc:
            if not self._fail(exc):
                return False
        self.result.stage_times_s["oracle"] = self.checker.oracle_seconds
        return True

    def _judge_groups(self) -> None:
        # Private cases stay private (docs/rules.md): the public cases are checked, timed and profiled
        # in one child, and only once every public figure is final does a fresh child, which has never
        # seen a public case's report go out, get its hello and check and time the private ones (its
        # process may have been started, empty, with the others: `prestart`). A kernel that remembers
        # the private sizes it saw has no public case left to write them into (a red team's kernel
        # did, in the max_abs_err of a public WA, when one child ran every case).
        public_cases, private_cases = self.public_cases, self.private_cases
        result, options = self.result, self.runtime_options
        with contextlib.ExitStack() as children:
            children.callback(self.checker.close)  # its oracle thread ends with the run
            if self.any_timed:
                children.enter_context(self.baseline)  # launched already where `prestart` ran
                children.callback(lambda: self.baseline.__exit__())  # the timing's last, where it renewed them
                if self.track.early_submission_start and public_cases:
                    children.callback(self.child.__exit__)  # ends it should the baseline fail to start
                    if not self.child.started:
                        self.child.start()  # its runtime loads beside the baseline's; the hello waits
                described = self.baseline.ready()
                vendor = described.get("python_baseline") or None
                result.conditions = dataclasses.replace(result.conditions, python_baseline=vendor,
                                                        baseline_overheads_ns=overheads_ns(described))
            self.names = BaselineNames(result.conditions.python_baseline or "",
                                       self.reference_dir / self.problem.slug / self.request.backend.value,
                                       vendor_release=self.track.vendor_release(options))
            # The roof of the report's chart, recorded with the run since workers differ.
            result.conditions = dataclasses.replace(result.conditions, peak_flops=positive(options.get("peak_flops")),
                                                    peak_bytes_per_s=positive(options.get("peak_bytes_per_s")))
            passed = self._judge_group(self.child, public_cases, public=True) if public_cases else True
            if passed and private_cases:
                self.child = self.private_child or self._private_session()  # started early, or now
                if public_cases:  # all of the private child's output is
                    result.kernel_output += WITHHELD_OUTPUT_NOTE  # withheld (it writes to its file only)
                self._judge_group(self.child, private_cases, public=not public_cases)
        if self.disturbed:
            result.conditions = dataclasses.replace(result.conditions, disturbed="; ".join(self.disturbed))

    def _judge_group(self, child: RunnerSession, group: list[Case], *, public: bool) -> bool:
        """Check `group`'s cases, then time its timed ones (and profile them, public cases only) in
        `child`; whether every case passed."""
        result, checker, limits = self.result, self.checker, self.limits
        with child:
            if public:
                result.host.update(child.device_info, host=platform.node())
            self.started = time.monotonic()  # the children's start-up is the judge's time, not the run's
            checking_started, oracle_before = time.monotonic(), checker.oracle_seconds
            first = len(self.case_results)
            for case in group:
                self.current = case
                _within_run_time(self.started, limits.run_time_limit_s, checker.oracle_seconds)
                self.case_results.append(_check_case(child, case, self.request, checker, limits.call_time_limit_s,
                                                     limits.workspace_limit_bytes))
                self.reporter.note(f"checked {case.name}")
            self.stage_s["correctness"] += (time.monotonic() - checking_started
                                            - (checker.oracle_seconds - oracle_before))
            result.stage_times_s["correctness"] = self.stage_s["correctness"]
            mine = self.case_results[first:]
            timed = [(r, c) for r, c in zip(mine, group, strict=True) if c.case_set.timed]
            if timed and self._all_passed():
                self.reporter.stage(Stage.TIMING)
                self._time_group(child, timed, public=public)
            if public and self.host.profile and self._all_passed():  # in the timing's last child
                profile_cases(result, timed, lambda case: self._profile_context(self.child, case))
        self.child.__exit__()  # the timing's last child, where it started fresh ones
        if public:  # after the children have exited (and flushed their C stdio buffers) and the drains have ended
            output = self.timing[1].output_text() if self.timing is not None else child.output_text()
            result.kernel_output = output + result.kernel_output
        self.timing = None
        return self._all_passed()

    def _all_passed(self) -> bool:
        return all(c.passed for c in self.case_results)

    def _time_group(self, child: RunnerSession, timed: list[tuple[CaseResult, Case]], *, public: bool) -> None:
        result, checker, limits, names = self.result, self.checker, self.limits, self.names
        assert names is not None  # set before any group is judged
        timing_started, oracle_before = time.monotonic(), checker.oracle_seconds
        self.first_timed = None
        for case_result, case in timed:  # which baseline times each case, for the report and CSV
            case_result.baseline = names(case)
        phase = TimingPhase(child, self.baseline, checker, self.host, self.runtime_options, self.track.host_clock,
                            baseline_names=names)
        folder = "run" if public else "private-run"
        self.timing = phase, TimingChildren(
            child, self.baseline, every=limits.cases_per_timing_pair, public=public,
            new_child=lambda n: self._session("submission", self.built.submission, self.workdir / f"{folder}-{n}"),
            new_baseline=lambda n: self._baseline_runner(self.workdir / f"baseline-run-{self.pairs_started + 1}"))
        # Each attempt of this group replaces its own profile; the groups' profiles add up.
        earlier_groups, result.timing_profile_s = result.timing_profile_s, {}
        time_until_calm(lambda: self._time_phase(phase, timed), result,
                        RetimePolicy(limits.disturbed_timing_attempts, limits.disturbed_backoff_s),
                        room_for=self._room_for, passed=lambda: all(r.passed for r, _ in timed))
        result.timing_profile_s = {part: earlier_groups.get(part, 0.0) + result.timing_profile_s.get(part, 0.0)
                                   for part in earlier_groups.keys() | result.timing_profile_s.keys()}
        if result.conditions.disturbed:
            self.disturbed.append(result.conditions.disturbed)
        if limits.cases_per_timing_pair:  # where the timing's time went (bench/ranking_fidelity.py)
            result.timing_profile_s["child_starts"] = self.child_start_s
        for case_result, case in timed:  # the vendor operator failed on it: the kernel timed it
            if case.name in self.baseline.vendor_failures:
                case_result.baseline = BASELINE_KERNEL
                case_result.baseline_note = (
                    "the vendor operator failed on this case; the baseline kernel timed it (the judge's "
                    "concern, reported to the organisers)")
        self.stage_s["timing"] += time.monotonic() - timing_started - (checker.oracle_seconds - oracle_before)
        result.stage_times_s["timing"] = self.stage_s["timing"]

    def _time_phase(self, phase: TimingPhase, timed: list[tuple[CaseResult, Case]]) -> None:
        """One attempt of the timing phase (retime.py)."""
        if self.timing is not None:
            self.timing[1].begin_attempt()
        time_cases(phase, timed, self.result, before_case=self._before_timed_case,
                   after_case=lambda c: self.reporter.note(f"timed {c.name}"))
        self.first_timed = self.first_timed if self.first_timed is not None else time.monotonic()

    def _judge_time(self) -> float:
        """The timing phase's attempts after the first (retime.py) are the judge's time: from the end
        of the first attempt on, the clock of the run's time limit stands still."""
        return time.monotonic() - self.first_timed if self.first_timed is not None else 0.0

    def _before_timed_case(self, case: Case) -> bool:
        """Called before each timed case (and round); whether the case gets children started for it."""
        self.current = case
        fresh = self.timing is not None and self._renew_children(case)
        _within_run_time(self.started + self._judge_time(), self.limits.run_time_limit_s,
                         self.checker.oracle_seconds)
        return fresh

    def _renew_children(self, case: Case) -> bool:
        """A fresh pair of children for `case` where it is due (judge/timing_children.py); their
        start-up is the judge's time: the run's clock is moved past it."""
        assert self.timing is not None
        phase, children = self.timing
        before = children.seconds
        if not children.before(case):
            return False
        self.child, self.baseline = children.child, children.baseline
        phase.use(children.child, children.baseline)
        spent = children.seconds - before
        self.started += spent
        self.pairs_started += 1
        self.child_start_s += spent
        return True

    def _room_for(self, seconds: float) -> bool:
        """Whether another timing attempt of `seconds` keeps the whole run, the judge's time too, in its limit."""
        return (time.monotonic() - self.started - self.checker.oracle_seconds + seconds
                < self.limits.run_time_limit_s)

    def _profile_context(self, child: RunnerSession, case: Case) -> ProfileContext:
        self.current = case
        folder = self.workdir / "profile" / case.name
        folder.mkdir(parents=True, exist_ok=True)
        return ProfileContext(
            case=case, session=child, threads=self.threads,
            call_timeout_s=self.limits.call_time_limit_s, folder=folder,
            budget_s=min(PROFILE_BUDGET_S, self.limits.case_time_budget_s),  # never more than timing
            start_runner=lambda prefix, run_folder: self._session(
                "submission", self.built.submission, run_folder, command_prefix=tuple(prefix)),
        )  # fmt: skip

    def _fail(self, exc: Exception) -> bool:
        """Set what `exc` means for the run (FAILURES); whether the run is still scored from its cases.

        Three failures need more than their verdict, and the run's state that the table has not:
        what the team sees of the kernel's output (the failed baseline's: the submission's child's
        so far; a death's: the dead child's stderr) and the worker's log (the account a broken
        runner gives is never shown, docs/security.md, layer 5). That is done here, once."""
        failure = failure_of(exc)
        if isinstance(exc, BaselineFailed):
            self.result.kernel_output = self.child.output_text()
        elif isinstance(exc, RunnerDied):
            self._keep_death_output(exc)
        elif isinstance(exc, SubmissionBrokeRunner):
            log.warning("the submission's runner failed after its code ran: %s", exc.detail[-4000:])
        if not failure.on_case:
            self.result.verdict, self.result.message = failure.verdict, failure.message
            return False
        _record_failure(self.case_results, self.current or self.cases[0], failure.verdict, failure.message)
        return True

    def _keep_death_output(self, exc: RunnerDied) -> None:
        result = self.result
        if (self.current or self.cases[0]).case_set is CaseSet.PRIVATE and result.kernel_output:
            pass  # the private child died: the public child's output, kept already, is what the team sees
        else:
            result.kernel_output = exc.stderr[-4096:]
        if exc.withheld_stderr and WITHHELD_OUTPUT_NOTE not in result.kernel_output:
            result.kernel_output += WITHHELD_OUTPUT_NOTE


def _check_case(session: RunnerSession, case: Case, request: JudgeRequest, checker: OracleChecker,
                call_timeout_s: float, workspace_limit: int) -> CaseResult:
    session.set_case(case, timeout_s=call_timeout_s)
    seed = _case_seed(request, case)
    checker.prefetch(case, seed, cacheable=True)  # the oracle beside the untimed call (judge/call_check.py)
    outcome = session.call("submission", seed, timeout_s=call_timeout_s, recheck_ms=CORRECTNESS_LATE_PROBE_MS,
                           untimed=True)
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


def _within_run_time(started: float, limit_s: float, oracle_s: float) -> None:
    """Raise RunOutOfTime once the cases have run for longer than the run's limit (wall clock).

    Checked before each case: one case is bounded by its call limit and timing budget. The
    oracle's time is the judge's own work, not the submission's, and is left out.
    """
    spent = time.monotonic() - started - oracle_s
    if spent > limit_s:
        raise RunOutOfTime(f"the run as a whole took {spent:.0f} s, over its limit of {limit_s:.0f} s; "
                           "this case and the ones after it were not run")


def _record_failure(case_results: list[CaseResult], case: Case, verdict: Verdict, reason: str) -> None:
    row = next((r for r in case_results if r.name == case.name), None)
    if row is None:
        row = CaseResult(name=case.name, case_set=case.case_set, passed=False)
        case_results.append(row)
    row.passed, row.verdict, row.message = False, verdict, f"case {case.name}: {reason}"
