"""The runner child: loads the built libraries and calls `kernel_run` on command.

It runs inside the sandbox and holds no oracle data: it generates each call's
inputs from the seed the worker sends just before the call, poisons outputs
and workspace, times the call on the backend's clock, and sends back the raw
outputs with digests of the inputs taken before and after the call. Every
decision (which calls are checked, what passes) is made by the worker.
Right after loading the libraries it seals itself (judge/sandbox/seal.py): from then on a
new signal action, executable memory, a file opened for writing or a new seccomp filter
kills it, and whatever fails in it is the submission's doing (judge/runner/failures.py).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import math
import os
import sys
import time
import traceback
from typing import Any

import torch

from judge.abi import DTYPE_CODES, kernel_args_struct
from judge.backends import Backend, CaseSet
from judge.determinism import prepare_before_seal, set_deterministic
from judge.fingerprint import fingerprint
from judge.problem import Case, load_problem, make_inputs
from judge.runner import protocol
from judge.runner.child import ALLOWED_CPUS
from judge.runner.child.fpenv import FloatingPointGuard
from judge.runner.child.guard import CallGuard, PageTouch, spans
from judge.runner.child.kernel import KernelCalls, KernelFault, LibraryLoadError, WorkspaceRefused, check_launches
from judge.runner.child.openmp import OpenMpGuard
from judge.runner.child.phases import GO_SPIN_S, Phases, poll_briefly
from judge.runner.child.threads import ThreadWatch, count_busy_threads, own_schedstat, thread_cpu_ns
from judge.runner.framing import encode_message, write_frames
from judge.sandbox.seal import seal_runner
from judge.tracks import get_track

_LIBC = ctypes.CDLL(None)  # this process's C library, for fflush(NULL) of the kernel's stdio buffers


def _raw(tensor: torch.Tensor) -> bytes:
    return bytes(tensor.contiguous().view(torch.uint8).numpy())


class Child:
    def __init__(self, hello: protocol.Hello, result_fd: int, commands: Any) -> None:
        self.commands = commands  # the worker's command lines (read here for "go")
        self.nonce = hello.nonce
        self.result_fd = result_fd
        self.seq = 0
        self.problem = load_problem(hello.problem, hello.problems_dir, hello.reference_dir)
        self.module = self.problem.module
        self.struct = kernel_args_struct(self.problem.header)
        self.pointer_names = {t.name for t in (*self.problem.inputs, *self.problem.outputs)}
        track = get_track(Backend(hello.backend))
        self.runtime = track.make_runtime(hello.runtime)
        self.vendor = None  # a baseline called through Python (a vendor operator), where the track has one
        self.vendor_tried: set[str] = set()  # cases the vendor operator was tried on (_vendor_runs)
        self.vendor_failed: dict[str, str] = {}  # case name -> why it failed there
        if hello.python_baseline and track.python_baseline is not None:
            self.vendor = track.python_baseline(hello.reference_dir, hello.problem, hello.runtime)
        self.generation_device = hello.generation_device
        self.call_guard = hello.call_guard  # judge/runner/child/guard.py; off only to measure it
        if hello.deterministic:
            set_deterministic(True, warn_only=True)  # as the worker does (pipeline)
        self.case: Case | None = None
        self.threads = ThreadWatch()
        self.pending: dict[str, torch.Tensor] = {}
        self.last_outputs: dict[str, torch.Tensor] = {}  # the pages an empty call reads (`empty_call`)
        # Opened now, before the lockdown and the submission: the kernel's stdout and stderr move
        # here when the first private case is set (see `_withhold_output`).
        self.private_sink: int | None = os.open(hello.private_output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC
                                                | os.O_CLOEXEC, 0o600)
        self.openmp = OpenMpGuard.of_this_process()  # before the lockdown: dlopen may read files
        self.fp = FloatingPointGuard()  # the environment every call starts from (before any kernel ran)
        if hello.lockdown:
            from judge.sandbox.lockdown import restrict_runner

            restrict_runner()
        self.runtime_rules = list(hello.runtime_rules)
        self.libraries = hello.libraries
        self.calls = KernelCalls(self.struct, self.pointer_names, self.runtime, hello.workspace_limit_bytes,
                                 self.fp.restore)

    def load_libraries(self) -> None:
        """Load the kernels' libraries, last: from here on, submission code may run. The worker is
        told first, so that a death before this point is the judge's (runtime, driver, sandbox)."""
        # torch's public switch of deterministic algorithms imports torch._dynamo (and its C
        # extensions) the first time; after the seal no new code may be mapped (judge/determinism.py).
        prepare_before_seal()
        self.send(protocol.Loading())
        self.calls.load(self.libraries)
        self.threads.start()
        seal_runner(self.runtime_rules)  # before any of their functions runs (judge/sandbox/seal.py)

    def send(self, message: protocol.Result) -> None:
        write_frames(self.result_fd, encode_message(self.nonce, self.seq, message.to_wire(), message.payload()))
        self.seq += 1

    def set_case(self, case: Case) -> None:
        self.case = case
        self.calls.new_case()
        if case.case_set is CaseSet.PRIVATE:
            self._withhold_output()
        self.send(protocol.CaseReady(case.name))

    def _withhold_output(self) -> None:
        """Send fd 1 and 2 to the private sink: what the kernel prints from now on could name a
        private case's sizes, and the output the worker drains is shown to the team. C's buffers
        are flushed first, so everything printed before lands in the team's part."""
        if self.private_sink is None:
            return
        _LIBC.fflush(None)
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(self.private_sink, 1)
        os.dup2(self.private_sink, 2)
        os.close(self.private_sink)
        self.private_sink = None

    def _make_inputs(self, case: Case, seed: int) -> dict[str, Any]:
        """The call's inputs, made as the worker makes them: with deterministic algorithms, also in the
        baseline's child (which runs without them, so a vendor operator is timed as its users run
        it), since the worker checks the baseline's outputs too (judge/baseline_trust.py)."""
        was = torch.are_deterministic_algorithms_enabled()
        set_deterministic(True, warn_only=True)
        try:
            return make_inputs(self.module, case, seed, self.generation_device)
        finally:
            set_deterministic(was, warn_only=True)

    def call(self, lib: str, seed: int, recheck_ms: int, *, profile: bool = False, hold: bool = False,
             untimed: bool = False, hold_report: bool = False) -> None:
        assert self.case is not None
        case, runtime = self.case, self.runtime
        self.pending = {}
        phases = Phases()
        bound = os.sched_getaffinity(0) if hold else None
        if bound is not None:  # made on whichever CPU is free; bound again before the caches are flushed
            os.sched_setaffinity(0, ALLOWED_CPUS)
        inputs = self._make_inputs(case, seed)
        tensors = {k: v for k, v in inputs.items() if isinstance(v, torch.Tensor)}
        scalars: dict[str, float | int] = {k: v for k, v in case.params.items()}
        scalars.update({k: v for k, v in inputs.items() if isinstance(v, int | float)})
        phases.lap("generate")
        before = {k: fingerprint(t) for k, t in tensors.items()}
        phases.lap("digest")
        device_inputs = {k: runtime.to_device(t) for k, t in tensors.items()}
        outputs = {
            name: runtime.empty(tuple(shape), dtype, math.nan)
            for name, (shape, dtype) in self.module.output_specs(case, inputs).items()
        }
        scalars.update(dtype=DTYPE_CODES[case.dtype], workspace_bytes=0)
        vendor = self.vendor if lib == "baseline" else None
        if vendor is not None and vendor.unsupported_reason(case.params, case.dtype, case.flags) is None:
            prepared = vendor.prepare(device_inputs, scalars)  # untimed, like packing kernel_args
            if not self._vendor_runs(case, vendor, prepared):
                vendor = None  # it failed on this case: the baseline kernel times it instead
        else:
            vendor = None
        if vendor is not None:

            def invoke() -> int:
                return int(vendor.run(prepared))
        else:
            try:
                invoke = self.calls.prepare(lib, device_inputs, outputs, scalars)
            except WorkspaceRefused as refused:
                if bound is not None:
                    os.sched_setaffinity(0, bound)
                self.send(protocol.WorkspaceRefused(refused.requested))
                return
        phases.lap("prepare")
        if bound is not None:  # the other child of the pair prepares meanwhile; both calls then run back to back
            self.send(protocol.Prepared())
            self._expect_line(protocol.ARM_LINE, "arm")
            os.sched_setaffinity(0, bound)  # the other child is idle now: no wait for the CPU
            phases.skip()
        if untimed:  # nothing of it in any cache; the full flush is for warm-ups and timed calls
            runtime.evict_call_buffers()
        else:
            runtime.flush_caches()
        self.openmp.reset()  # what the last call set must not carry over
        self.fp.restore()
        touch = PageTouch(outputs if self.call_guard else {})
        # Signal handlers as the runner leaves them, just before the call; only where the outputs are
        # host memory (a device's are read through its driver, and its runtime may set handlers lazily).
        # The baseline's calls are guarded too, though nothing of theirs is held against them: the
        # worker holds the submission's CPU time outside the bracket to the baseline's, so the two
        # children do the same work there (judge/idle_watch.py, `OutsideWatch`).
        guard = CallGuard() if self.call_guard and spans(outputs) else None
        phases.lap("flush")
        ran = self._wait_for_go()
        # Only in the profiled pass after timing (judge/profiling/cpu.py): this thread's own CPU and
        # run-queue time around kernel_run, which the worker cannot tell from the runner's work.
        main_before = own_schedstat() if profile else (0, 0)
        try:
            rc, elapsed_ns = runtime.time_call(invoke)  # it synchronises: a device error surfaces here
            touch.read()  # on the clock: work a fault handler defers to the first read is timed (guard.py)
        except Exception as exc:
            reason = runtime.fault_reason(exc)
            if reason is None or lib != "submission":  # the baseline is trusted: its fault is ours
                raise
            raise KernelFault(f"kernel_run left the device in error: {reason}") from exc
        main_after = own_schedstat() if profile else (0, 0)
        launches = runtime.last_launches()  # None unless the clock counts them (the NPU's device timing)
        if launches is not None:
            check_launches(lib, launches, runtime.launch_limit(), int(rc))
        self.send_ready(ran)  # at once: the worker's clock stops when it arrives
        phases.lap("bracket")
        # The outputs as the call left them, first thing after the bracket, held against them again
        # just before the report: a helper thread that goes on writing them behind the checks below
        # changes them in between (docs/security.md, "Runner anti-cheat"). Both children, so the
        # work outside the bracket stays the same in both (judge/idle_watch.py).
        returned = {k: fingerprint(t) for k, t in outputs.items()} if self.call_guard else {}
        if hold_report:  # idle while the pair's second call runs right behind this one (judge/case_timing.py)
            phases.lap("after")
            self._expect_line(protocol.REPORT_LINE, "report")
            phases.skip()
        self.fp.restore()  # before the runner computes anything again
        tampering = guard.tampering(device_inputs, outputs) if guard is not None else []
        if lib != "submission":
            tampering = []  # the baseline is trusted: its guard ran only to cost what the submission's does
        openmp_level = self.openmp.level()
        if vendor is not None:
            outputs = vendor.outputs()
        new_threads, appeared = self.threads.after_call(lib)
        late_writes = []
        busy_threads = 0
        if recheck_ms > 0:
            snapshot = {k: _raw(runtime.to_host(t)) for k, t in outputs.items()}
            cpu_before, slept = thread_cpu_ns(), time.monotonic_ns()
            time.sleep(recheck_ms / 1000)
            busy_threads = count_busy_threads(cpu_before, thread_cpu_ns(), time.monotonic_ns() - slept)
            late_writes = [k for k, t in outputs.items() if _raw(runtime.to_host(t)) != snapshot[k]]
            new_threads += self.threads.ended(appeared)
        # Fingerprinted where `before` was: the CPU form (XXH3) and the device form (integer
        # reductions) of the same bytes differ, and a device needs no copy to the host.
        after = {k: fingerprint(t.to(tensors[k].device)) for k, t in device_inputs.items()}
        # Outputs stay here until the worker says whether it checks this call; it
        # decides after the call, so the kernel cannot tell checked calls apart.
        changed = [k for k, t in outputs.items() if k in returned and fingerprint(t) != returned[k]]
        if lib == "submission":  # the baseline's are digested only to cost the same (a vendor's are new)
            late_writes += [k for k in changed if k not in late_writes]
        self.pending = outputs  # the baseline's too: the worker checks its first call of each case
        self.last_outputs = outputs
        phases.lap("after")
        report = protocol.CallReport(
            rc=int(rc), elapsed_ns=int(elapsed_ns), digest_before=before, digest_after=after,
            new_threads=new_threads, late_writes=late_writes, openmp_level=openmp_level, busy_threads=busy_threads,
            tampering=tampering, phases_ns=phases.laps, launches=-1 if launches is None else int(launches),
            workspace_bytes=self.calls.wanted.get(lib, 0),  # filled with garbage off the clock
            vendor_failed=self.vendor_failed.get(case.name, "") if lib == "baseline" else "",
            main_thread_ns={"cpu": main_after[0] - main_before[0], "wait": main_after[1] - main_before[1]}
            if profile else {},
            outputs={k: (list(t.shape), str(t.dtype).removeprefix("torch.")) for k, t in outputs.items()},
        )
        # The call's inputs (and what refers to them) are freed before the report, not after it: once the
        # worker has the report it may time the baseline, and this process must be idle then
        # (judge/idle_watch.py); freeing tens of MiB is milliseconds of the kernel's time.
        inputs = tensors = device_inputs = invoke = touch = guard = prepared = None  # type: ignore[assignment]
        if recheck_ms > 0:
            snapshot = None  # type: ignore[assignment]
        self.send(report)

    def _vendor_runs(self, case: Case, vendor: Any, prepared: dict[str, Any]) -> bool:
        """Whether the vendor operator runs this case: tried once per case, untimed, before its first use.

        An operator can refuse a case its adapter's contract says it takes (a vendor release's tiling
        check, say). Then the baseline kernel times the case, the call report says why
        (`vendor_failed`), and the worker names it in the run's report and its log: the judge's
        concern, never the team's IE (docs/npu-worker.md, "Baselines")."""
        if case.name in self.vendor_failed:
            return False
        if case.name in self.vendor_tried:
            return True
        self.vendor_tried.add(case.name)
        try:
            vendor.run(prepared)
            self.runtime.synchronize()
        except Exception as exc:  # whatever the operator raises: it is not the team's
            self.vendor_failed[case.name] = f"{type(exc).__name__}: {exc}"[:400]
            print(f"opjudge: the vendor baseline failed on case {case.name}: {self.vendor_failed[case.name]}",
                  file=sys.stderr, flush=True)
            return False
        return True

    def empty_call(self) -> None:
        """The timed bracket with no kernel in it: armed, go, the same page reads, ran. The worker's
        clock around it is this child's message overhead, which case_timing.py takes off every call."""
        touch = PageTouch(self.last_outputs if self.call_guard else {})
        ran = self._wait_for_go()
        self.runtime.time_call(lambda: 0)
        touch.read()
        self.send_ready(ran)

    def _expect_line(self, wanted: str, name: str) -> None:
        """Block until the worker's next command, which must be exactly `wanted`."""
        line = self.commands.readline()
        if line != wanted:
            raise RuntimeError(f"expected the worker's {name}, got {line[:200]!r}")

    def _wait_for_go(self) -> bytes:
        """Say the call is ready and wait for the worker's go; the "ran" message that ends the call,
        made now (one write, no encoding on the clock: `send_ready`). The worker times go -> ran on
        its own clock, out of every kernel's reach: that bracket, less this child's overhead, is
        the call's time on the CPU track (judge/case_timing.py). The child polls for the go a moment
        before it blocks, so that waking up from a blocked read is not inside the bracket."""
        self.send(protocol.Armed())
        ran = b"".join(encode_message(self.nonce, self.seq, protocol.Ran().to_wire(), {}))
        poll_briefly(self.commands.fileno(), GO_SPIN_S)
        line = self.commands.readline()
        if line != protocol.GO_LINE:  # the worker's go, to the byte: nothing is decoded on the clock
            raise RuntimeError(f"expected the worker's go, got {line[:200]!r}")
        return ran

    def send_ready(self, message: bytes) -> None:
        """Write a message made ahead by `_wait_for_go` (the next in sequence) in one write."""
        write_frames(self.result_fd, [message])
        self.seq += 1

    def send_outputs(self) -> None:
        blobs = {k: _raw(self.runtime.to_host(t)) for k, t in self.pending.items()}
        self.pending = {}
        self.send(protocol.Outputs(blobs))


def main() -> None:
    parser = argparse.ArgumentParser(prog="judge.runner.child",
                                     description="opjudge runner child (started by the worker)")
    parser.add_argument("--cmd-fd", type=int, required=True)
    parser.add_argument("--result-fd", type=int, required=True)
    options = parser.parse_args()
    commands = os.fdopen(options.cmd_fd, "r", buffering=1)
    # torch ships its own libgomp under the same soname, so once torch is loaded the
    # kernel's OpenMP follows torch's thread setting: give it every thread the host allows.
    # (make_inputs drops to one thread while it generates, for determinism, and restores.)
    torch.set_num_threads(max(1, int(os.environ.get("OMP_NUM_THREADS", "1"))))
    child: Child | None = None
    hello: protocol.Hello | None = None
    try:
        first = commands.readline()
        if not first or first == protocol.EXIT_LINE:  # the worker gave up on the run before the hello
            _leave(0)
        hello = protocol.read_hello(first)
        child = Child(hello, options.result_fd, commands)
        child.load_libraries()
        device = {**child.runtime.describe(), **({"python_baseline": child.vendor.name} if child.vendor else {})}
        child.send(protocol.Ready(pid=os.getpid(), device=device))
        for line in commands:
            match protocol.read_command(line):
                case protocol.SetCase(case=case):
                    child.set_case(case)
                case protocol.Call() as call:
                    child.call(call.lib, call.seed, call.recheck_ms, profile=call.profile, hold=call.hold,
                               untimed=call.untimed, hold_report=call.hold_report)
                case protocol.Empty():
                    child.empty_call()
                case protocol.Fetch():
                    child.send_outputs()
                case protocol.Exit():
                    break
    except LibraryLoadError as exc:  # the worker turns this into CE or RE
        _report_error(child, hello, options.result_fd, "load", str(exc))
        _leave(3)
    except KernelFault as exc:  # RE on the case being run; the device context is lost, so end
        _report_error(child, hello, options.result_fd, "kernel", str(exc))
        _leave(3)
    except Exception:  # IE before the libraries were loaded; after, the worker makes it RE or MLE
        detail = traceback.format_exc(limit=8)
        _report_error(child, hello, options.result_fd, "internal", detail)
        print(detail, file=sys.stderr)
        _leave(3)
    _leave(0)


def _leave(status: int) -> None:
    """End without the interpreter's finalisation, which would put signal actions back (refused
    once the libraries are loaded, judge/sandbox/seal.py) and run whatever a kernel registered.
    Every stdio buffer, C's (the kernel's printf) and Python's, is flushed first."""
    _LIBC.fflush(None)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)


def _report_error(child: Child | None, hello: protocol.Hello | None, fd: int, kind: str, detail: str) -> None:
    """Tell the worker why this child gives up, also when it failed before it was ready."""
    if child is not None:
        child.send(protocol.RunnerError(kind, detail))
    elif hello is not None:
        write_frames(fd, encode_message(hello.nonce, 0, protocol.RunnerError(kind, detail).to_wire(), {}))

