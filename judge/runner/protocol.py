"""The messages between the worker and the runner child, as typed records.

Every message either side sends is one of the records here, tagged on the wire by its "op" (the
hello alone has none: it is the first line), and each side builds and reads only these; the
framing is judge/runner/framing.py's. Worker → child: `Hello`, then the commands. Child → worker:
the results. A child's message is hostile input once the submission has run (it can read the
nonce and forge whole frames): a message of no known kind, without a field, or with a field of
another type is a `ProtocolViolation` (SV) naming the kind and the field, never an exception in
the worker (an IE, retried and never charged). The team reads that reason, so it never quotes a
value the kernel chose (judge/runner/message_checks.py has the checks of each field).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import torch

from judge.backends import CaseSet
from judge.problem import Case
from judge.runner import message_checks as check
from judge.runner.records import ProtocolViolation as ProtocolViolation  # re-exported: its home was here
from judge.runner.records import Record
from judge.runner.records import field_of as _get  # a record's field, read and checked


@dataclass(frozen=True)
class Hello:
    """The run's hello, the first command line, before any submission code is loaded: untagged."""

    nonce: bytes
    problem: str
    problems_dir: Path
    reference_dir: Path
    backend: str
    runtime: dict[str, Any]
    libraries: dict[str, Path]  # by role: "submission", "baseline"
    workspace_limit_bytes: int
    lockdown: bool
    runtime_rules: tuple[str, ...]  # judge/sandbox/seal.py
    private_output: Path  # where the kernel's output goes from the first private case on
    python_baseline: bool
    generation_device: str
    deterministic: bool
    call_guard: bool  # the page reads and the checks after each call (judge/runner/child/guard.py)

    def to_wire(self) -> dict[str, Any]:
        return {"nonce": self.nonce.hex(), "problem": self.problem, "problems_dir": str(self.problems_dir),
                "reference_dir": str(self.reference_dir), "backend": self.backend, "runtime": self.runtime,
                "libraries": {name: str(p) for name, p in self.libraries.items()},
                "workspace_limit_bytes": self.workspace_limit_bytes, "lockdown": self.lockdown,
                "runtime_rules": list(self.runtime_rules), "private_output": str(self.private_output),
                "python_baseline": self.python_baseline, "generation_device": self.generation_device,
                "deterministic": self.deterministic, "call_guard": self.call_guard}

    @classmethod
    def from_wire(cls, header: dict[str, Any]) -> Hello:
        g = partial(_get, "the hello", header)
        return cls(nonce=g("nonce", check.hex_bytes), problem=g("problem", check.text),
                   problems_dir=g("problems_dir", check.path), reference_dir=g("reference_dir", check.path),
                   backend=g("backend", check.text), runtime=g("runtime", check.mapping),
                   libraries=g("libraries", check.paths),
                   workspace_limit_bytes=g("workspace_limit_bytes", check.integer),
                   lockdown=g("lockdown", check.flag), runtime_rules=g("runtime_rules", check.strings),
                   private_output=g("private_output", check.path), python_baseline=g("python_baseline", check.flag),
                   generation_device=g("generation_device", check.text), deterministic=g("deterministic", check.flag),
                   call_guard=g("call_guard", check.flag))


@dataclass(frozen=True)
class SetCase(Record):
    OP = "case"
    case: Case

    def to_wire(self) -> dict[str, Any]:
        c = self.case
        return {"op": self.OP, "case": {"name": c.name, "case_set": c.case_set.value, "dtype": c.dtype,
                                        "params": c.params, "seed": c.seed, "flags": list(c.flags)}}

    @classmethod
    def from_wire(cls, header: dict[str, Any], *_: Any) -> SetCase:
        raw, what = _get("a 'case' command", header, "case", check.mapping), "a 'case' command's case"
        return cls(Case(name=_get(what, raw, "name", check.text), case_set=_get(what, raw, "case_set", CaseSet),
                        dtype=_get(what, raw, "dtype", check.text), params=_get(what, raw, "params", check.mapping),
                        seed=_get(what, raw, "seed", check.integer), flags=_get(what, raw, "flags", check.strings)))


@dataclass(frozen=True)
class Call(Record):
    OP = "call"
    lib: str  # "submission" or "baseline"
    seed: int
    recheck_ms: int = 0  # how long the child sleeps after the call before it looks for late work
    profile: bool = False  # the untimed profiled pass: the main thread's own times (judge/profiling/cpu.py)
    # Prepared, the child says so (`Prepared`) and waits for `Arm` before it flushes the caches: the
    # worker prepares both children of a timed pair at once and times their calls back to back.
    hold: bool = False
    untimed: bool = False  # the correctness check, the profiled pass: only the call's own lines evicted
    # After "ran" the child waits for `Report` before its after-call work: the first call of a timed
    # pair, so that the second one runs right behind it (judge/case_timing.py, `_run_pair`).
    hold_report: bool = False

    def to_wire(self) -> dict[str, Any]:
        flags = {name: True for name in ("profile", "hold", "untimed", "hold_report") if getattr(self, name)}
        return {"op": self.OP, "lib": self.lib, "seed": self.seed, "recheck_ms": self.recheck_ms, **flags}

    @classmethod
    def from_wire(cls, header: dict[str, Any], *_: Any) -> Call:
        what = "a 'call' command"
        return cls(lib=_get(what, header, "lib", check.text), seed=_get(what, header, "seed", check.integer),
                   recheck_ms=_get(what, header, "recheck_ms", check.integer, default=0),
                   profile=_get(what, header, "profile", check.flag, default=False),
                   hold=_get(what, header, "hold", check.flag, default=False),
                   untimed=_get(what, header, "untimed", check.flag, default=False),
                   hold_report=_get(what, header, "hold_report", check.flag, default=False))


@dataclass(frozen=True)
class Arm(Record):
    """Go on with a held call: flush the caches and say "armed" (`Call.hold`)."""

    OP = "arm"


@dataclass(frozen=True)
class Report(Record):
    """Go on with a call held after "ran": its after-call checks, then its report (`Call.hold_report`)."""

    OP = "report"


@dataclass(frozen=True)
class Go(Record):
    """Start the armed call now: the worker's clock runs from here to "ran" (judge/case_timing.py)."""

    OP = "go"


@dataclass(frozen=True)
class Empty(Record):
    """A call with no kernel in it: armed, go, ran (`RunnerSession.empty_call`)."""

    OP = "empty"


@dataclass(frozen=True)
class Fetch(Record):
    """Send the last call's outputs."""

    OP = "fetch"


@dataclass(frozen=True)
class Exit(Record):
    OP = "exit"


Command = SetCase | Call | Arm | Report | Go | Empty | Fetch | Exit
_COMMANDS: dict[str, type[Command]] = {kind.OP: kind for kind in (SetCase, Call, Arm, Report, Go, Empty, Fetch, Exit)}


def encode_command(command: Command | Hello) -> str:
    """One command line."""
    return json.dumps(command.to_wire()) + "\n"


EXIT_LINE = encode_command(Exit())  # also the first line of a child the worker ends before its hello
GO_LINE = encode_command(Go())  # made once: the child compares the line it reads inside the bracket with it
ARM_LINE = encode_command(Arm())  # a held call's child reads exactly this line before it flushes
REPORT_LINE = encode_command(Report())  # and this one after "ran", when its report is held


def read_hello(line: str) -> Hello:
    return Hello.from_wire(_json_object(line, "the hello"))


def read_command(line: str) -> Command:
    header = _json_object(line, "a command")
    op = header.get("op")
    kind = _COMMANDS.get(op) if isinstance(op, str) else None
    if kind is None:
        raise ProtocolViolation("a command of no kind the worker sends")
    return kind.from_wire(header)


def _json_object(line: str, what: str) -> dict[str, Any]:
    try:
        header = json.loads(line)
    except ValueError:
        raise ProtocolViolation(f"{what} that is not JSON") from None
    if not isinstance(header, dict):
        raise ProtocolViolation(f"{what} that is not an object")
    return header


@dataclass(frozen=True)
class Loading(Record):
    """The child loads the libraries now: from here on, submission code may have run."""

    OP = "loading"


@dataclass(frozen=True)
class Ready(Record):
    """The libraries are loaded and the child sealed (judge/sandbox/seal.py)."""

    OP = "ready"
    pid: int
    device: dict[str, str]  # what the child's runtime says of the device

    @classmethod
    def from_wire(cls, header: dict[str, Any], *_: Any) -> Ready:
        device = _get("a 'ready' message", header, "device", check.mapping)
        return cls(pid=_get("a 'ready' message", header, "pid", check.integer),
                   device={str(k): str(v) for k, v in device.items()})


@dataclass(frozen=True)
class CaseReady(Record):
    """The case the worker set is the child's (`SetCase`)."""

    OP = "case"
    name: str

    @classmethod
    def from_wire(cls, header: dict[str, Any], *_: Any) -> CaseReady:
        return cls(name=_get("a 'case' message", header, "name", check.text))


@dataclass(frozen=True)
class Prepared(Record):
    """A held call's inputs are made and placed; the child waits for `Arm` (`Call.hold`)."""

    OP = "prepared"


@dataclass(frozen=True)
class Armed(Record):
    """The call is prepared; the child waits for `Go`."""

    OP = "armed"


@dataclass(frozen=True)
class Ran(Record):
    """The call returned: the worker's clock around it stops on this message's first bytes."""

    OP = "ran"


@dataclass(frozen=True)
class CallReport(Record):
    """What the child says of a call after "ran"; judge/runner/session.py's `CallOutcome` adds the
    worker's own measurements to it."""

    OP = "call"
    rc: int
    elapsed_ns: int  # the backend's clock in the child (the worker's own is `CallOutcome.bracket_ns`)
    digest_before: dict[str, str]  # the inputs' fingerprints before the call and after it
    digest_after: dict[str, str]
    new_threads: int
    late_writes: list[str]  # outputs that changed after the call returned
    openmp_level: int = 0  # parallel regions still open on the calling thread after the call
    busy_threads: int = 0  # threads that kept a CPU busy while the runner slept after the call
    tampering: list[str] = field(default_factory=list)  # child/guard.py's sentences, each naming a signal or tensor
    phases_ns: dict[str, int] = field(default_factory=dict)  # where the child's side of the call went (never scored)
    launches: int = -1  # kernel launches the call made where the clock counts them (NPU device timing), else -1
    # The workspace the runner filled with garbage for this call, as the child says: the worker allows
    # its fill time outside the bracket (judge/idle_watch.py), capped at the workspace limit.
    workspace_bytes: int = 0
    # The baseline's child only: why the vendor operator failed on this case, so the baseline kernel ran
    # instead (child/main.py); "" otherwise. Read from the baseline's report alone (no team code runs there).
    vendor_failed: str = ""
    # Profiled calls only (judge/profiling/cpu.py): the child's main thread around kernel_run, "cpu"
    # and "wait" (run queue) in ns; the kernel could forge it, and it only ever reaches its own profile.
    main_thread_ns: dict[str, int] = field(default_factory=dict)
    outputs: dict[str, tuple[list[int], str]] = field(default_factory=dict)  # shape and dtype per output

    def to_wire(self) -> dict[str, Any]:
        return {"op": self.OP, "rc": self.rc, "elapsed_ns": self.elapsed_ns, "digest_before": self.digest_before,
                "digest_after": self.digest_after, "new_threads": self.new_threads, "late_writes": self.late_writes,
                "openmp_level": self.openmp_level, "busy_threads": self.busy_threads, "tampering": self.tampering,
                "phases_ns": self.phases_ns, "launches": self.launches, "workspace_bytes": self.workspace_bytes,
                **({"vendor_failed": self.vendor_failed} if self.vendor_failed else {}),
                **({"main_thread_ns": self.main_thread_ns} if self.main_thread_ns else {}),
                "outputs": self.outputs}

    @classmethod
    def from_wire(cls, header: dict[str, Any], names: frozenset[str] = frozenset(), *_: Any) -> Any:
        """The report, checked; `names` are the problem's tensor names. `cls` may be a subclass."""
        g = partial(_get, "a call report", header)
        return cls(rc=g("rc", check.integer), elapsed_ns=g("elapsed_ns", check.integer),
                   digest_before=g("digest_before", check.digests, names),
                   digest_after=g("digest_after", check.digests, names), new_threads=g("new_threads", check.integer),
                   late_writes=g("late_writes", check.tensor_names, names),
                   openmp_level=g("openmp_level", check.integer, default=0),
                   busy_threads=g("busy_threads", check.integer, default=0),
                   tampering=g("tampering", check.tampering, names, default=[]),
                   phases_ns=g("phases_ns", check.phases, default={}),
                   launches=g("launches", check.launches, default=-1),
                   workspace_bytes=g("workspace_bytes", check.workspace_bytes, default=0),
                   vendor_failed=g("vendor_failed", check.vendor_failure, default=""),
                   main_thread_ns=g("main_thread_ns", check.main_thread, default={}),
                   outputs=g("outputs", check.output_specs, names))


@dataclass(frozen=True)
class WorkspaceRefused(Record):
    """The kernel asked for more workspace than the limit (or a negative size): the call did not run."""

    OP = "call"
    requested: int

    def to_wire(self) -> dict[str, Any]:
        return {"op": self.OP, "error": "workspace", "requested": self.requested}

    @classmethod
    def from_wire(cls, header: dict[str, Any], *_: Any) -> WorkspaceRefused:
        if header["error"] != "workspace":
            raise ProtocolViolation("a call report with an error of no kind the runner sends")
        return cls(requested=_get("a workspace refusal", header, "requested", check.integer))


@dataclass(frozen=True)
class Outputs(Record):
    """The last call's outputs, raw, one blob each (`Fetch`)."""

    OP = "outputs"
    blobs: dict[str, bytes]

    def payload(self) -> dict[str, bytes]:
        return self.blobs

    @classmethod
    def from_wire(cls, header: dict[str, Any], names: frozenset[str] = frozenset(),
                  blobs: dict[str, bytes] | None = None) -> Outputs:
        return cls(blobs=blobs or {})

    def tensors(self, specs: dict[str, tuple[list[int], str]]) -> dict[str, torch.Tensor]:
        """The outputs as their call report announced them (`CallReport.outputs`); a missing one, or
        bytes that do not fit the shape, is a violation."""
        outputs = {}
        for name, (shape, dtype) in specs.items():
            if name not in self.blobs:
                raise ProtocolViolation(f"the runner sent no {name}")  # one of the problem's names
            try:
                outputs[name] = check.output_tensor(self.blobs[name], shape, dtype)
            except check.Malformed as exc:
                raise ProtocolViolation(f"the output {name} {exc}") from None
        return outputs


@dataclass(frozen=True)
class RunnerError(Record):
    """Why the child gives up: "load", "kernel" or "internal" (judge/runner/failures.py reads it)."""

    OP = "error"
    kind: str
    detail: str

    @classmethod
    def from_wire(cls, header: dict[str, Any], *_: Any) -> RunnerError:
        return cls(kind=_get("an 'error' message", header, "kind", check.text),
                   detail=_get("an 'error' message", header, "detail", check.text))


Result = (Loading | Ready | CaseReady | Prepared | Armed | Ran | CallReport | WorkspaceRefused | Outputs
          | RunnerError)
_RESULTS: dict[str, type[Result]] = {
    kind.OP: kind for kind in (Loading, Ready, CaseReady, Prepared, Armed, Ran, CallReport, Outputs, RunnerError)}


def read_result(header: dict[str, Any], blobs: dict[str, bytes], names: frozenset[str]) -> Result:
    """The record a child's message is (judge/runner/framing.py has checked its frame);
    `names` are the problem's tensor names, the only ones a call report may use."""
    op = header.get("op")
    kind = _RESULTS.get(op) if isinstance(op, str) else None
    if kind is None:
        raise ProtocolViolation("a message of no kind the runner sends")
    if kind is CallReport and "error" in header:
        kind = WorkspaceRefused
    return kind.from_wire(header, names, blobs)
