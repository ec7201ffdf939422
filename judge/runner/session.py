"""The worker's side of the runner: start the child in the sandbox and drive it.

The child gets two pipes at unpredictable descriptor numbers (commands in,
results out); its stdin is /dev/null and its stdout/stderr are drained by
threads that keep only the first `stdout_limit_bytes`. The wall clock is the
worker's: a call that overruns is answered by killing the child's whole group.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch

from judge.backends import CaseSet
from judge.idle_watch import helper_cpu_ns, tree_cpu_split, wait_until_settled
from judge.problem import Case
from judge.runner import protocol
from judge.runner.calls import CallOutcome, CallProbe, PendingCall, refused_outcome
from judge.runner.failures import RunnerDied as RunnerDied  # re-exported: its home was here
from judge.runner.failures import RunnerFailed as RunnerFailed  # re-exported: its home was here
from judge.runner.failures import RunnerStartFailed as RunnerStartFailed  # re-exported: its home was here
from judge.runner.failures import runner_failure
from judge.runner.framing import ChannelClosed, ChannelTimeout, MessageReader
from judge.runner.pipes import Drain, free_fd_numbers
from judge.runner.protocol import ProtocolViolation
from judge.runner.spec import SessionSpec
from judge.sandbox.paths import interpreter

WITHHELD_OUTPUT_NOTE = "\n[output written from the first private case on is not shown]"
PRIVATE_OUTPUT_NAME = "private-output.log"  # in the run folder: the kernel's output from the first private case on


class RunnerSession:
    """One child process for one judge run; use as a context manager."""

    def __init__(self, spec: SessionSpec) -> None:
        self.spec = spec
        self.nonce = secrets.token_bytes(16)
        self._hello = protocol.Hello(
            nonce=self.nonce, problem=spec.problem.slug, problems_dir=spec.problem.root.parent,
            reference_dir=spec.reference_dir, backend=spec.backend, runtime=spec.runtime_options,
            libraries=dict(spec.libraries), workspace_limit_bytes=spec.workspace_limit_bytes, lockdown=spec.lockdown,
            runtime_rules=tuple(spec.runtime_rules) if spec.lockdown else (),  # judge/sandbox/seal.py
            private_output=spec.workdir / PRIVATE_OUTPUT_NAME, python_baseline=spec.python_baseline,
            generation_device=spec.generation_device, deterministic=spec.deterministic,
            call_guard=spec.call_guard)  # SessionSpec.call_guard
        self._binds = spec.binds()
        self._proc: subprocess.Popen[bytes] | None = None
        self._hello_sent = False
        # The child's memory cgroup (judge/sandbox/memcg.py), made at launch when the host has one.
        self._memcg = None
        self._closed = False
        self._drains: list[Drain] = []  # none until launched: output_text() is then empty
        self.device_info: dict[str, str] = {}  # what the child's runtime says of the device
        self._output_specs: dict[str, tuple[list[int], str]] = {}
        self._tensor_names = frozenset(t.name for t in (*spec.problem.inputs, *spec.problem.outputs))
        self.private_output_withheld = False  # a private case was set: later output went to the sink
        self.kernel_calls = 0  # calls of the submission's kernel_run this child was asked to make
        self.submission_ran = False  # the child said "loading": its libraries' code may have run since
        self._ready = False
        # Read the child's CPU time around each call from outside it (`CallOutcome.outside_cpu_ns`):
        # the timing phase sets it on the CPU track (judge/idle_watch.py, `OutsideWatch`).
        self.meter_cpu = False
        self._pending: PendingCall | None = None

    def __enter__(self) -> RunnerSession:
        if self._proc is None:
            self.start()
        self.say_hello()
        self.wait_ready()
        return self

    def launch(self) -> None:
        """Start the child (unless started) and send it the run's hello; `wait_ready` waits for it."""
        if self._proc is None:
            self.start()
        self.say_hello()

    @property
    def started(self) -> bool:
        """Whether the child's process has been started (`start`)."""
        return self._proc is not None

    def start(self) -> None:
        """Start the child's process. It imports its runtime, then waits for the hello
        (`say_hello`): until then no submission code can run in it."""
        if self.spec.memory_root is not None and self.spec.sandbox_limits.memory_mib:
            self._memcg = self.spec.memory_root.new_group(self.spec.sandbox_limits.memory_mib)
        cmd_r, cmd_w = os.pipe()
        res_r, res_w = os.pipe()
        cmd_child, res_child = free_fd_numbers(2)
        os.dup2(cmd_r, cmd_child, inheritable=True)
        os.dup2(res_w, res_child, inheritable=True)
        os.close(cmd_r)
        os.close(res_w)
        argv = [*self.spec.command_prefix, interpreter(), "-m", "judge.runner.child", "--cmd-fd", str(cmd_child),
                "--result-fd", str(res_child)]
        try:
            self._proc = self.spec.sandbox.popen(
                argv, limits=self.spec.sandbox_limits, binds=self._binds, workdir=self.spec.workdir,
                env=self.spec.env, pass_fds=(cmd_child, res_child),
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                **({"cgroup": self._memcg} if self._memcg is not None else {}),
            )
        except BaseException:
            os.close(cmd_w)
            os.close(res_r)
            self._close_memcg()
            raise
        finally:
            os.close(cmd_child)
            os.close(res_child)
        self._commands = os.fdopen(cmd_w, "w", buffering=1)
        self._results_fd = res_r
        self._reader = MessageReader(res_r, self.nonce)
        self._drains = [Drain(self._proc.stdout, self.spec.stdout_limit_bytes),
                        Drain(self._proc.stderr, self.spec.stdout_limit_bytes)]
        for drain in self._drains:
            drain.start()

    def say_hello(self) -> None:
        """Send the run's hello (once): the child loads the libraries and says "ready"."""
        if self._hello_sent:
            return
        self._hello_sent = True
        with self._starting():
            self._send(self._hello)

    def wait_ready(self) -> None:
        """Wait until the child has loaded its libraries; a child that fails to get there is ended."""
        with self._starting():
            self._expect(protocol.Loading, timeout_s=self.spec.startup_timeout_s)
        self.submission_ran = True  # from here on, whatever the child reports may be the kernel's doing
        try:
            ready = self._expect(protocol.Ready, timeout_s=self.spec.startup_timeout_s)
        except BaseException:
            self.__exit__()  # a protocol error or a load failure must not leave the child running
            raise
        self._ready = True
        self.device_info = ready.device

    @contextlib.contextmanager
    def _starting(self) -> Iterator[None]:
        """Before the child says it loads the libraries, no submission code has run: a death there
        is the judge's (`RunnerStartFailed`). Whatever fails, the child is ended."""
        try:
            yield
        except RunnerDied as exc:
            self.__exit__()
            tail = exc.stderr.strip().splitlines()[-1][:300] if exc.stderr.strip() else ""
            oom = (f"; its memory cgroup's limit of {exc.memory_limit_mib} MiB was reached"
                   if exc.memory_limit_mib is not None else "")
            raise RunnerStartFailed(f"the runner did not start ({exc}, exit status {exc.returncode}{oom})"
                                    + (f": {tail}" if tail else "")) from exc
        except BaseException:
            self.__exit__()
            raise

    def __exit__(self, *exc: object) -> None:
        if self._proc is None or self._closed:
            return  # closing twice could close a descriptor number reused since
        self._closed = True
        with contextlib.suppress(OSError, ValueError):
            self._commands.write(protocol.EXIT_LINE)
            self._commands.flush()
        self.kill(grace_s=2.0)
        with contextlib.suppress(OSError):
            os.close(self._results_fd)
        with contextlib.suppress(OSError, ValueError):
            self._commands.close()
        self._close_memcg()

    def _close_memcg(self) -> None:
        if self._memcg is not None:
            self._memcg.close()
            self._memcg = None

    def kill(self, grace_s: float = 0.0) -> None:
        """End the child and everything it started (its own session/process group)."""
        if self._proc is None:
            return
        if grace_s:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=grace_s)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, signal.SIGKILL)
        self._proc.wait()
        for drain in self._drains:
            drain.join(timeout=5)
            if not drain.is_alive():  # closed here, not whenever the session is collected
                with contextlib.suppress(OSError, ValueError):
                    drain.stream.close()

    @property
    def libraries(self) -> dict[str, Path]:
        """The libraries this child loads, by role ("submission", "baseline")."""
        return dict(self._hello.libraries)

    @property
    def process_id(self) -> int | None:
        """The pid of the process the sandbox started (the runner child, or a sandbox's own above it)."""
        return self._proc.pid if self._proc is not None and self._proc.returncode is None else None

    def output_text(self) -> str:
        """The kernel's own stdout and stderr up to the first private case, capped; never parsed
        for results. From the first private case on the child writes them to a file of the run
        folder instead (teams see this text, and a kernel could print a private case's sizes)."""
        text = "".join(d.text() for d in self._drains)
        if self.private_output_withheld:
            text += WITHHELD_OUTPUT_NOTE
        return text

    def set_case(self, case: Case, timeout_s: float) -> None:
        self.private_output_withheld |= case.case_set is CaseSet.PRIVATE
        self._send(protocol.SetCase(case))
        self._expect(protocol.CaseReady, timeout_s=timeout_s)

    def call(self, lib: str, seed: int, *, timeout_s: float, recheck_ms: int = 0,
             probe: CallProbe | None = None, untimed: bool = False) -> CallOutcome:
        """One call: the child prepares it and says "armed"; the worker says "go" and times, on its
        own clock, until the child says "ran" (`bracket_ns`); then the child's report follows.
        `probe` (untimed profiled passes only) runs right before "go" and right after "ran".
        `untimed` calls (no time of theirs is scored) evict only their own buffers from the caches.
        With `meter_cpu` the child's CPU time outside the bracket is read from outside it."""
        self.begin(lib, seed, recheck_ms=recheck_ms, probe=probe, untimed=untimed)
        return self.report(timeout_s)

    def begin(self, lib: str, seed: int, *, recheck_ms: int = 0, probe: CallProbe | None = None,
              hold: bool = False, untimed: bool = False, hold_report: bool = False) -> None:
        """Send a call; with `hold` the child prepares it, says so and waits (`await_prepared`) until
        `run` arms it: a timed pair's two children prepare at once, then run back to back. With
        `hold_report` the child waits again after "ran" until `report` asks for its report."""
        if self._pending is not None:
            raise RuntimeError("a call is already under way in this child")
        self.kernel_calls += lib == "submission"
        self._pending = PendingCall(asked_ns=time.perf_counter_ns(), cpu_asked=self._meter(), probe=probe, hold=hold,
                                     hold_report=hold_report)
        self._send(protocol.Call(lib, seed, recheck_ms, profile=probe is not None, hold=hold, untimed=untimed,
                                 hold_report=hold_report))

    def await_prepared(self, timeout_s: float) -> None:
        """Wait until a held call's child has prepared it (or refused its workspace)."""
        pending = self._pending
        if pending is None or not pending.hold or pending.prepared_ns or pending.refused is not None:
            return
        answer = self._expect(protocol.Prepared, protocol.WorkspaceRefused, timeout_s=timeout_s)
        if isinstance(answer, protocol.WorkspaceRefused):
            pending.refused = answer.requested
        else:
            pending.prepared_ns = time.perf_counter_ns()

    def run(self, timeout_s: float, at_armed: Callable[[], None] | None = None) -> None:
        """Arm the call `begin` sent and time it (go -> ran); `report` reads what the child found after it.
        `at_armed` is called once the child is armed (its caches flushed), just before the go."""
        self.await_prepared(timeout_s)
        pending = self._pending
        if pending is None:
            raise RuntimeError("no call was begun in this child")
        if pending.refused is not None or pending.ran_ns:
            return
        try:
            if pending.hold:
                pending.waited_ns = time.perf_counter_ns() - pending.prepared_ns  # idle: the other child's turn
                self._send_line(protocol.ARM_LINE)
            answer = self._expect(protocol.Armed, protocol.WorkspaceRefused, timeout_s=timeout_s)
            if isinstance(answer, protocol.WorkspaceRefused):
                pending.refused = answer.requested
                return
            pending.cpu_armed = self._meter()
            if at_armed is not None:
                at_armed()
            if pending.probe is not None:
                pending.probe.armed()
            pending.bracket_ns = self._go_and_time(timeout_s)
            pending.ran_ns, pending.cpu_ran = time.perf_counter_ns(), self._meter()
            if pending.probe is not None:  # a profiled call's threads, read at "ran" as ever
                pending.probe.ran(pending.bracket_ns)
            if self.meter_cpu:  # the kernel's threads off the CPU: their times complete, the CPUs free
                pending.running_at_ran, pending.settle_ns = wait_until_settled(self.process_id)
                pending.cpu_settled = self._meter()
        except BaseException:
            self._pending = None  # a failed call leaves nothing half made behind it
            raise

    def report(self, timeout_s: float) -> CallOutcome:
        """The report of the call `run` timed (run first if it was not)."""
        self.run(timeout_s)
        pending, self._pending = self._pending, None
        assert pending is not None
        if pending.refused is not None:
            return refused_outcome(pending.refused)
        if pending.hold_report:
            # idle: the pair's second call (the settle wait before it is this call's: settle_ns)
            pending.waited_ns += time.perf_counter_ns() - pending.ran_ns - pending.settle_ns
            self._send_line(protocol.REPORT_LINE)
        report = self._expect(protocol.CallReport, timeout_s=timeout_s)
        cpu_reported = self._meter()
        outside = sum(pending.cpu_armed) - sum(pending.cpu_asked) + sum(cpu_reported) - sum(pending.cpu_ran) \
            if self.meter_cpu else -1
        helpers = helper_cpu_ns(pending.cpu_ran[1], pending.cpu_settled[1], cpu_reported[1],
                                pending.running_at_ran) if self.meter_cpu else -1
        self._output_specs = report.outputs
        return CallOutcome(**report.__dict__, bracket_ns=pending.bracket_ns,
                           worker_ns=time.perf_counter_ns() - pending.asked_ns - pending.waited_ns,
                           outside_cpu_ns=outside, after_helper_cpu_ns=helpers, settle_ns=pending.settle_ns)

    def _meter(self) -> tuple[int, int]:
        return self._cpu_now() if self.meter_cpu else (0, 0)

    def _cpu_now(self) -> tuple[int, int]:
        return tree_cpu_split(self.process_id)

    def empty_call(self, timeout_s: float) -> int:
        """The worker's clock around a call with no kernel in it (armed, go, ran): this child's
        message overhead, taken off the bracket of every call (judge/case_timing.py)."""
        self._send(protocol.Empty())
        self._expect(protocol.Armed, timeout_s=timeout_s)
        return self._go_and_time(timeout_s)

    def _go_and_time(self, timeout_s: float) -> int:
        """Say "go" to an armed child and return the worker's clock from there to the first bytes of
        the child's next message: after "go" the only one an honest child sends is "ran", made
        ahead and written at once, so the clock does not hold its reading and parsing. The message
        is then read and checked (`_expect`): anything else (bytes a kernel wrote early, a forged
        frame) is the protocol violation it always was."""
        started = time.perf_counter_ns()
        self._send_line(protocol.GO_LINE)  # made once, not encoded on the clock
        try:
            self._reader.wait(timeout_s)
        except ChannelTimeout:
            self._died(f"no answer within {timeout_s:.1f} s", timed_out=True)
        bracket_ns = time.perf_counter_ns() - started
        self._expect(protocol.Ran, timeout_s=timeout_s)
        return bracket_ns

    def fetch_outputs(self, timeout_s: float) -> dict[str, torch.Tensor]:
        """The outputs of the last submission call; asked for only when the worker checks that call."""
        self._send(protocol.Fetch())
        return self._expect(protocol.Outputs, timeout_s=timeout_s).tensors(self._output_specs)

    def _send(self, command: protocol.Command | protocol.Hello) -> None:
        self._send_line(protocol.encode_command(command))

    def _send_line(self, line: str) -> None:
        try:
            self._commands.write(line)
            self._commands.flush()
        except (BrokenPipeError, OSError):
            self._died("the runner stopped reading commands", timed_out=False)

    def _expect(self, *kinds: type[Any], timeout_s: float) -> Any:
        """The child's next message, which must be of one of `kinds` (an error report ends the child)."""
        try:
            message = self._reader.read(timeout_s)
        except ChannelTimeout:
            self._died(f"no answer within {timeout_s:.1f} s", timed_out=True)
        except ChannelClosed:
            self._died("the runner process ended", timed_out=False)
        result = protocol.read_result(message.header, message.blobs, self._tensor_names)
        if isinstance(result, protocol.RunnerError):
            self.kill()
            raise runner_failure(result.kind, result.detail, submission_ran=self.submission_ran, ready=self._ready,
                                 private=self.private_output_withheld)
        if not isinstance(result, kinds):
            raise ProtocolViolation(f"the runner sent {result.OP!r} where {kinds[0].OP!r} was due")
        return result

    def _private_output_tail(self, limit: int = 64 * 1024) -> str:
        """The end of what the child wrote after the first private case: a death's classification
        reads it (bad_alloc, MemoryError), the team never sees it."""
        path = self._hello.private_output
        try:
            with path.open("rb") as fh:
                fh.seek(max(0, path.stat().st_size - limit))
                return fh.read().decode(errors="replace")
        except OSError:
            return ""

    def _died(self, reason: str, *, timed_out: bool) -> Any:
        self.kill(grace_s=0.0 if timed_out else 1.0)
        assert self._proc is not None
        oom = self._memcg is not None and self._memcg.oom_kills() > 0
        team_mib = (self.spec.sandbox_limits.memory_mib or 0) - self.spec.judge_memory_mib
        raise RunnerDied(reason, returncode=self._proc.returncode, timed_out=timed_out,
                         stderr=self._drains[1].text(), withheld_stderr=self._private_output_tail(),
                         memory_limit_mib=team_mib if oom else None,
                         judge_memory_mib=self.spec.judge_memory_mib)

