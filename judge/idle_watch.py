"""The submission's process does nothing while the baseline is timed, and no more than the runner's
own work outside its calls' brackets (docs/security.md, layer 5: work outside the bracket).

The two children share the host: a helper thread the submission leaves running while its main thread
waits for the next command can stream through memory exactly while the baseline's call is timed, and
slow it down (a red team's kernel scored 105-110 against 70 for the honest one so). The worker reads,
from outside the child, the CPU time of every thread of the submission's process tree (the sandbox's
processes and the runner's, `/proc/<pid>/task/<tid>/schedstat`, nanoseconds) before and after each
baseline call: an idle runner uses next to none. A baseline call during which the submission used more
than `BUSY_ALLOWANCE_NS` and `BUSY_SHARE` of the baseline's own bracket is counted; `BUSY_CALLS_SV` of
them in one case is SV (docs/security.md, "Runner anti-cheat"). Freezing the child (a cgroup freezer)
would stop it outright; this measures instead, since the worker has no cgroup of its own to create
groups under on every host it runs on.

The same reading holds each submission call's work to its bracket (`OutsideWatch`). The kernel runs
inside the runner's Python process and can reach the interpreter: a red team's kernel rebound the
runner's own method so the real work ran while the runner prepared the call, before "armed", and the
timed call only spun for a fifth of it (score 136); another left a helper thread computing the outputs
after "ran" while the runner's checks read its memory map. Either way the child's process tree uses CPU
outside the bracket beyond what the runner's own work there costs. That cost is known: the baseline's
child runs the same runner code for the same case (inputs made, digested, outputs poisoned, caches
flushed, the digests after), so its CPU time outside the bracket, measured the same way in the same
case, is the reference (docs/security.md, "Runner anti-cheat").
"""

from __future__ import annotations

import math
import statistics
import time
from pathlib import Path

PROC = Path("/proc")
BUSY_ALLOWANCE_NS = 3_000_000  # an idle runner's wake-ups, OpenMP's spin before it sleeps: well below
BUSY_SHARE = 0.2  # of the baseline call's bracket
BUSY_CALLS_SV = 3


def _tasks(pid: int, proc: Path) -> list[Path]:
    try:
        return list((proc / str(pid) / "task").iterdir())
    except OSError:
        return []  # gone (or never there): it uses nothing more


def tree_pids(root: int, proc: Path = PROC) -> list[int]:
    """`root` and every process below it, from the kernel's children lists (no scan of all of /proc)."""
    seen, todo = [], [root]
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.append(pid)
        for task in _tasks(pid, proc):
            try:
                todo += [int(child) for child in (task / "children").read_text().split()]
            except (OSError, ValueError):
                continue
    return seen


def tree_cpu_ns(root: int | None, proc: Path = PROC) -> int:
    """CPU time (ns) of every thread of `root`'s process tree so far; 0 without one."""
    return sum(tree_cpu_split(root, proc))


def tree_cpu_split(root: int | None, proc: Path = PROC) -> tuple[int, int]:
    """CPU time (ns) of `root`'s process tree so far: (its processes' main threads, every other thread).
    The runner's own work after a call is its main thread's; the others are the kernel's (OpenMP's
    pool, a helper it started), idle once kernel_run has returned. (0, 0) without a tree."""
    if root is None:
        return 0, 0
    main = others = 0
    for pid in tree_pids(root, proc):
        for task in _tasks(pid, proc):
            try:
                used = int((task / "schedstat").read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue
            if task.name == str(pid):
                main += used
            else:
                others += used
    return main, others


def kernel_threads_running(root: int | None, proc: Path = PROC) -> int:
    """How many threads of `root`'s process tree, other than its processes' main threads, are running
    or waiting for a CPU (state R): the kernel's threads that have not yet gone to sleep."""
    if root is None:
        return 0
    running = 0
    for pid in tree_pids(root, proc):
        for task in _tasks(pid, proc):
            if task.name == str(pid):
                continue
            try:
                state = (task / "stat").read_text().rpartition(")")[2].split()[0]
            except (OSError, IndexError):
                continue
            running += state == "R"
    return running


# After "ran", the kernel's threads (OpenMP's pool) spin briefly and sleep. Until they leave the CPU
# the kernel has not yet added all of their CPU time to what /proc shows: a running thread's total
# is brought up to date at the scheduler's tick (4 ms at HZ=250) or when it stops, so a read taken
# while one still runs misses up to a tick of its work in the call, which then shows up after "ran".
# On a busy or stolen-from VM the pool often still waits for a CPU when "ran" arrives (median 1.4 ms
# here), and its call's tail read as 1 to 7 ms of work after "ran" in up to 60 calls of a judging:
# honest kernels were SV (docs/benchmarks.md, "Kernel threads after ran"). So the worker waits,
# up to SETTLE_LIMIT_NS, until no kernel thread is running, and reads the helper figure from there;
# the next call of a pair starts only then, on CPUs the last one's threads have left. What the
# threads used during that wait beyond SETTLE_TAIL_NS each (a tick and the pool's spin) still counts.
SETTLE_LIMIT_NS = 20_000_000
SETTLE_POLL_S = 0.0001
SETTLE_TAIL_NS = 5_000_000


def wait_until_settled(root: int | None, proc: Path = PROC, *, limit_ns: int = SETTLE_LIMIT_NS) -> tuple[int, int]:
    """Wait until no kernel thread of `root`'s tree runs, at most `limit_ns`: (threads running at
    first, ns waited)."""
    started = time.perf_counter_ns()
    first = running = kernel_threads_running(root, proc)
    while running and time.perf_counter_ns() - started < limit_ns:
        time.sleep(SETTLE_POLL_S)
        running = kernel_threads_running(root, proc)
    return first, time.perf_counter_ns() - started


def helper_cpu_ns(ran: int, settled: int, reported: int, running_at_ran: int) -> int:
    """The kernel threads' CPU time after "ran": all of it from the settled reading to the report,
    and what they used while the worker waited for them beyond a tail per thread then running."""
    return reported - settled + max(0, settled - ran - running_at_ran * SETTLE_TAIL_NS)


def busy_during(used_ns: int, bracket_ns: int) -> bool:
    """Whether the submission's CPU time during one baseline call counts as work done then."""
    return used_ns > BUSY_ALLOWANCE_NS and used_ns > BUSY_SHARE * max(bracket_ns, 0)


# Outside the bracket both children run the same runner code (the guard and the digests included),
# but single calls vary a lot: 36 to 98 ms for the same baseline call of add_mul_relu's 4M case, and once
# in a corpus run an honest kernel's median was 1.9 times the baseline's (a host busy at the wrong
# moments inflates CPU time: caches and memory bandwidth are shared); on a loaded CI host an honest
# add_mul_relu kernel had three calls 1.5 to 2.9 times the baseline's median within one case. So no
# handful of calls decides unless they are far out: a call is "over" past OUTSIDE_CALL_FACTOR times the
# larger of the baseline's median and its latest call (the same moment's host) plus
# OUTSIDE_CALL_ALLOWANCE_NS, and
#  - OUTSIDE_CALLS_SV calls over by more than OUTSIDE_FAR_FACTOR times that reference again are SV at
#    once (most of a kernel's work moved out on every call);
#  - otherwise the case's end decides: SV when more than OUTSIDE_SHARE_SV of the submission's calls were
#    over, at least OUTSIDE_CALLS_SV of them, and more often than the baseline's child (the same runner
#    code on the same host in the same case) was over its own bound, by a margin chance gives less
#    than OUTSIDE_CHANCE_SV (one-sided Fisher exact test on the two children's counts). A host's load
#    spikes both children alike; a kernel that moves work out does it call after call.
#    The share is the scores' trim: a case's ratio is the mean of its middle half of pairs
#    (judge/case_timing.py, TRIM), so calls made fast by moving work out gain nothing until they are
#    more than the quarter that is cut off at the low end.
# A comparison of the medians is logged only (bench/outside_cpu.py): tight enough to catch a fifth of
# a kernel's work moved, too noisy to decide.
OUTSIDE_CALL_FACTOR = 2.0
OUTSIDE_CALL_ALLOWANCE_NS = 5_000_000
OUTSIDE_FAR_FACTOR = 2.0
OUTSIDE_CALLS_SV = 3
OUTSIDE_SHARE_SV = 0.25
OUTSIDE_CHANCE_SV = 0.01
OUTSIDE_MEDIAN_SHARE = 0.15
OUTSIDE_MEDIAN_ALLOWANCE_NS = 3_000_000
# The runner fills each call's workspace with garbage outside the bracket: about 0.75 ns a byte of fresh
# memory here (bench/outside_cpu.py). The submission's workspace beyond the baseline's is allowed at
# this rate, up to the workspace limit: a kernel asking for 512 MiB is not a kernel working early.
WORKSPACE_FILL_NS_PER_BYTE = 1.5
OUTSIDE_MIN_CALLS = 6  # submission calls held to the reference before the median rule decides
OUTSIDE_REFERENCE_CALLS = 3  # baseline calls measured before any submission call is held to them
# From "ran" to the report only the runner's main thread has work; the kernel's threads (OpenMP's pool,
# which spins about 10 us before it sleeps, or a helper) have none. More than this, in
# HELPER_CALLS_SV calls of a case, is SV: work a kernel left to a thread that writes the outputs
# behind the runner's checks.
# Honest runs pass the allowance now and then: both children showed 0.15 ms typically, 0.25 ms at most
# on a quiet host, and on a busy or stolen-from VM single calls of an honest kernel reached 2.9 ms, three
# times in one case in 2 of 15 judgings. So a case is SV when its kernel threads passed the allowance
#  - by far (HELPER_GROSS_NS) in HELPER_CALLS_SV calls: at once; or
#  - at all, in HELPER_CALLS_SV calls and in at least HELPER_SHARE_SV of the case's calls and in more
#    calls than noise gave the baseline's child (which runs the same runner code) in the same case:
#    decided when the case's timing ends.
# A kernel gains nothing from work after "ran" unless it writes the outputs then, which the digests
# taken right after the bracket and again before the report catch on every call (docs/security.md).
HELPER_ALLOWANCE_NS = 1_000_000
HELPER_GROSS_NS = 10_000_000
HELPER_CALLS_SV = 3
HELPER_SHARE_SV = 0.10


def more_often_than_chance(hits: int, calls: int, other_hits: int, other_calls: int) -> float:
    """The chance that `hits` or more of `calls` fall on one side when `hits + other_hits` events are
    spread at random over `calls + other_calls` calls (one-sided Fisher exact test, hypergeometric)."""
    total, events = calls + other_calls, hits + other_hits
    if calls <= 0 or events <= 0:
        return 1.0
    ways = math.comb(total, events)
    return sum(math.comb(calls, k) * math.comb(other_calls, events - k)
               for k in range(hits, min(calls, events) + 1)) / ways


class OutsideWatch:
    """Both children's CPU time outside each call's bracket over one case: the submission's is held
    to the baseline's (the runner's own cost there). The first call of each child in the case is left
    out (the case's first allocations, a vendor operator's trial run), as are the submission's probed
    calls (the late-write probe copies the outputs and sleeps off the clock)."""

    def __init__(self, workspace_limit_bytes: int = 1 << 30) -> None:
        self.workspace_limit = workspace_limit_bytes
        self.workspace: dict[str, int] = {}  # the last call's workspace per child
        self.reference: list[int] = []  # the baseline child's, per call
        self.submission: list[int] = []  # the submission child's, per call held to the reference
        self.over: list[int] = []  # the excess of each call over the per-call bound
        self.far: list[int] = []  # the excess of each call far over it
        self.helpers: dict[str, list[int]] = {"submission": [], "baseline": []}  # kernel threads after "ran"
        self.helpers_over: list[int] = []
        self.baseline_helpers_over = 0  # the baseline child's calls past the allowance: the host's noise
        self._seen: set[str] = set()

    def record(self, lib: str, outside_ns: int, *, helper_ns: int = -1, probed: bool = False,
               workspace_bytes: int = 0) -> None:
        if outside_ns < 0:
            return  # not metered (a device track)
        self.workspace[lib] = min(max(workspace_bytes, 0), self.workspace_limit)
        if lib not in self._seen:
            self._seen.add(lib)
            return
        if helper_ns >= 0 and not probed:
            self.helpers.setdefault(lib, []).append(helper_ns)
            if helper_ns > HELPER_ALLOWANCE_NS:
                if lib == "submission":
                    self.helpers_over.append(helper_ns)
                else:
                    self.baseline_helpers_over += 1
        if lib != "submission":
            self.reference.append(outside_ns)
            return
        if probed or len(self.reference) < OUTSIDE_REFERENCE_CALLS:
            return
        self.submission.append(outside_ns)
        reference = max(self._base(), self.reference[-1])
        excess = outside_ns - int(reference * OUTSIDE_CALL_FACTOR + OUTSIDE_CALL_ALLOWANCE_NS + self._fill_ns())
        if excess > 0:
            self.over.append(excess)
        if excess > OUTSIDE_FAR_FACTOR * reference:
            self.far.append(excess)

    def _fill_ns(self) -> float:
        extra = self.workspace.get("submission", 0) - self.workspace.get("baseline", 0)
        return max(0, extra) * WORKSPACE_FILL_NS_PER_BYTE

    def _base(self) -> float:
        return statistics.median(self.reference) if self.reference else 0.0

    def worked_outside(self, *, case_over: bool = False) -> bool:
        """Whether the submission's work outside its brackets passed the runner's own there (SV): calls
        far over at any time, calls over in a share of the case once its timing is over (`case_over`)."""
        if len(self.far) >= OUTSIDE_CALLS_SV:
            return True
        over, calls = len(self.over), len(self.submission)
        if not case_over or over < OUTSIDE_CALLS_SV or over <= OUTSIDE_SHARE_SV * calls:
            return False
        return more_often_than_chance(over, calls, self.baseline_over(), len(self.reference)) < OUTSIDE_CHANCE_SV

    def baseline_over(self) -> int:
        """The baseline child's calls over the per-call bound against its own median: the host's noise."""
        bound = self._base() * OUTSIDE_CALL_FACTOR + OUTSIDE_CALL_ALLOWANCE_NS
        return sum(ns > bound for ns in self.reference)

    def helpers_worked(self, *, case_over: bool = False) -> bool:
        """Enough calls after which the kernel's threads worked while the runner checked and reported:
        gross ones at any time, others once the case's timing is over (`case_over`)."""
        if sum(h > HELPER_GROSS_NS for h in self.helpers_over) >= HELPER_CALLS_SV:
            return True
        if not case_over:
            return False
        needed = max(HELPER_CALLS_SV, math.ceil(HELPER_SHARE_SV * len(self.helpers["submission"])),
                     HELPER_CALLS_SV + 2 * self.baseline_helpers_over)
        return len(self.helpers_over) >= needed

    def sv_message(self, case_name: str, *, case_over: bool = False) -> str:
        """Why the case is SV by work outside the brackets ("" when it is not): the submission's process
        working outside its calls, or its kernel's threads working after a call returned."""
        if self.worked_outside(case_over=case_over):
            return (f"case {case_name}: your process used the CPU outside the timed call, beyond the runner's own "
                    f"work there in {len(self.over)} of {len(self.submission)} calls (up to "
                    f"{max(self.over) / 1e6:.1f} ms more than allowed; the baseline's runner took "
                    f"{self._base() / 1e6:.1f} ms a call, yours {statistics.median(self.submission) / 1e6:.1f} ms): "
                    "a kernel's work happens inside kernel_run, between the runner's go and its return, and leaves "
                    "nothing running after it")
        if self.helpers_worked(case_over=case_over):
            return (f"case {case_name}: threads of your kernel worked after kernel_run returned, while the runner "
                    f"checked the call ({len(self.helpers_over)} of {len(self.helpers['submission'])} calls, up to "
                    f"{max(self.helpers_over) / 1e6:.1f} ms of CPU): all work must finish inside the call")
        return ""

    def steady_excess_ns(self) -> int:
        """How far the submission's median passes the case-level allowance: a diagnostic only (logged),
        since honest medians have passed it on a busy host; 0 with too few calls to tell."""
        if len(self.submission) < OUTSIDE_MIN_CALLS:
            return 0
        allowed = self._base() * (1 + OUTSIDE_MEDIAN_SHARE) + OUTSIDE_MEDIAN_ALLOWANCE_NS + self._fill_ns()
        return max(0, int(statistics.median(self.submission) - allowed))

    def figures(self) -> dict[str, float]:
        """Medians and quartiles in ms, for the log and the benchmark."""
        def ms(values: list[int], q: int = 1) -> float:
            if len(values) < 2:
                return -1.0
            return round(statistics.quantiles(values, n=4)[q] / 1e6, 3)
        return {"submission_ms": ms(self.submission), "baseline_ms": ms(self.reference),
                "submission_q1_ms": ms(self.submission, 0), "submission_q3_ms": ms(self.submission, 2),
                "baseline_q1_ms": ms(self.reference, 0), "baseline_q3_ms": ms(self.reference, 2),
                "calls_over": len(self.over), "calls_far": len(self.far), "calls": len(self.submission),
                "baseline_over": self.baseline_over(),
                "worst_ms": round(max(self.submission, default=0) / 1e6, 3),
                "helper_submission_max_ms": round(max(self.helpers["submission"], default=0) / 1e6, 3),
                "helper_baseline_max_ms": round(max(self.helpers.get("baseline", []), default=0) / 1e6, 3),
                "helper_submission_q3_ms": ms(self.helpers["submission"], 2)}
