"""The CPU profile of one timed case: per-thread busy time and hardware counters
(docs/user-guide.md, "Reading the profile").

An untimed pass after timing calls the warm submission child on the case a few more times
(never inside a timed call: the timed phase is over). Right before each call's "go" and right
after its "ran", the worker reads each thread's CPU time from /proc (judge/threadprofile.py) and
switches the child's counters on and off (judge/profiling/perf_events.py). Summed over the calls:

- load balance: the busiest thread's CPU time over the mean of the threads that worked (1.0 is even);
- idle share: of the run's threads times the calls' wall time, the share no thread was busy,
  which is what uneven sparse blocks (or a serial part) do to the cores. Time a thread was ready
  but waited for a CPU (the kernel's run delay: a loaded host) is not idleness the kernel chose:
  it is left out of the idle share and shown on its own as "waiting for a CPU";
- instructions per cycle and cache misses, where the host exposes its PMU.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path

from judge.profiling import Metric, ProfileSection, Table, unavailable
from judge.profiling.context import ProfileContext
from judge.profiling.perf_events import (
    BRANCH_MISSES,
    CACHE_MISSES,
    CACHE_REFERENCES,
    CYCLES,
    HARDWARE_EVENTS,
    INSTRUCTIONS,
    CounterSet,
    CountersUnavailable,
    Event,
)
from judge.seeds import fresh_seed
from judge.threadprofile import ThreadTime, busiest_process, busy_between, load_balance, task_time, thread_times

# The kernel's wall time a profile adds up, at least MIN_CALLS calls. Each call costs several times
# the kernel (fresh inputs, the eviction, the thread readings): 0.1 s cost 3.4-3.5 s of a judging
# of five benchmark cases, 0.05 s about half (docs/benchmarks.md, "Where a pair's time goes").
TARGET_KERNEL_S = 0.05
MIN_CALLS, MAX_CALLS = 3, 40  # each call also makes fresh inputs in the child: a cap on the pass's cost
WORKED_SHARE = 0.01  # a thread busy for less than this share of the calls' wall time did not work


class _Probe:
    """Reads the child's threads and switches its counters around each call (judge/runner/session.py)."""

    def __init__(self, pid: int, counters: CounterSet | None) -> None:
        self.pid, self.counters = pid, counters
        self.busy: dict[int, ThreadTime] = {}
        self.wall_ns = 0
        self.calls = 0
        self._before: dict[int, ThreadTime] = {}
        self._task = Path(f"/proc/{pid}/task/{pid}")
        self._deltas: list[ThreadTime] = []
        self._bracket_ns = 0

    def armed(self) -> None:
        # The child's main thread polls for "go" meanwhile (busy): it is read last, right before
        # "go", and first after "ran", so that its window is the call's and little more.
        self._before = {t.tid: t for t in thread_times(self.pid).values() if t.tid != self.pid}
        if self.counters is not None:
            self.counters.enable()
        if (main := task_time(self._task)) is not None:
            self._before[self.pid] = main

    def ran(self, bracket_ns: int) -> None:
        main = task_time(self._task)
        if self.counters is not None:
            self.counters.disable()
        after = {**thread_times(self.pid), **({self.pid: main} if main is not None else {})}
        self._deltas, self._bracket_ns = busy_between(self._before, after), bracket_ns

    def settle(self, elapsed_ns: int, main_thread_ns: dict[str, int]) -> None:
        """Add the last call, once its report is in. The calls' wall time is `elapsed_ns`, the child's
        clock around kernel_run (the worker's bracket holds the message overhead). The main thread
        goes on with the runner's own work right after "ran" (fingerprints, guards) until the
        worker reads it, and polls for "go" before: its times are the child's own around kernel_run
        (`main_thread_ns`, from its schedstat), where the child sent them."""
        wall_ns = elapsed_ns if 0 < elapsed_ns <= self._bracket_ns else self._bracket_ns
        for delta in self._deltas:
            busy, wait = delta.busy_s, delta.wait_s
            if delta.tid == self.pid and "cpu" in main_thread_ns:
                busy, wait = main_thread_ns["cpu"] / 1e9, main_thread_ns.get("wait", 0) / 1e9
            earlier = self.busy.get(delta.tid)
            self.busy[delta.tid] = ThreadTime(delta.tid, delta.name, busy + (earlier.busy_s if earlier else 0.0),
                                              wait + (earlier.wait_s if earlier else 0.0))  # fmt: skip
        self.wall_ns += wall_ns
        self.calls += 1
        self._deltas = []


def profile_case(ctx: ProfileContext, *, events: Iterable[Event] = HARDWARE_EVENTS) -> list[ProfileSection]:
    """The "threads" and "perf" sections of one case, from an untimed pass of the warm child."""
    session = ctx.session
    session.set_case(ctx.case, timeout_s=ctx.call_timeout_s)
    session.call("submission", fresh_seed(), timeout_s=ctx.call_timeout_s, untimed=True)  # the pool awake
    root = session.process_id
    if root is None:
        return [unavailable("threads", "the runner had ended"), unavailable("perf", "the runner had ended")]
    pid = busiest_process(root)
    tids = sorted(thread_times(pid))
    events = tuple(events)
    counters: CounterSet | None = None
    perf_reason = ""
    try:
        counters = CounterSet(tids, events)
    except CountersUnavailable as exc:
        perf_reason = f"not available on this host: {exc}"
    try:
        probe = _Probe(pid, counters)
        started = time.monotonic()
        while probe.calls < MAX_CALLS and (probe.calls < MIN_CALLS or (
                probe.wall_ns < TARGET_KERNEL_S * 1e9 and time.monotonic() - started < ctx.budget_s)):
            # Fresh content every call, as in timing (docs/rules.md): a kernel that caches by input
            # must not see a repeat here either.
            outcome = session.call("submission", fresh_seed(), timeout_s=ctx.call_timeout_s, probe=probe, untimed=True)
            probe.settle(outcome.elapsed_ns, outcome.main_thread_ns)
        counts = counters.read().values if counters is not None else {}
    finally:
        if counters is not None:
            counters.close()
    threads = threads_section(probe, pid=pid, allotted=ctx.threads)
    perf = unavailable("perf", perf_reason) if counters is None else perf_section(counts, events, probe)
    return [threads, perf]


def _label(tid: int, pid: int, index: int) -> str:
    return "main" if tid == pid else f"thread {index}"


def threads_section(probe: _Probe, *, pid: int, allotted: int) -> ProfileSection:
    """Load balance and idle share of the threads that worked, with each one's busy share as a table."""
    wall_s = probe.wall_ns / 1e9
    deltas = sorted(probe.busy.values(), key=lambda t: (t.tid != pid, t.tid))
    balance = load_balance(deltas, wall_s, min_busy_s=WORKED_SHARE * wall_s)
    if balance is None:
        return unavailable("threads", "no thread of the runner was busy during the profiled calls")
    cores = max(allotted, balance.threads)
    worked = [t for t in deltas if t.busy_s > WORKED_SHARE * wall_s]
    waited = min(sum(t.wait_s for t in worked), cores * wall_s)
    # The threads' time less what they spent waiting for a CPU: the time they could have worked.
    could_work = max(cores * wall_s - waited, sum(balance.busy_s))
    idle = max(0.0, 1.0 - sum(balance.busy_s) / could_work)
    rows = []
    shown = [t for t in deltas if t.busy_s > WORKED_SHARE * wall_s or t.tid == pid]
    for index, thread in enumerate(shown):
        rows.append({"thread": _label(thread.tid, pid, index), "busy_ms": round(thread.busy_s * 1e3, 3),
                     "waiting_ms": round(thread.wait_s * 1e3, 3),
                     "busy_share": round(100 * thread.busy_s / wall_s, 1)})  # fmt: skip
    metrics = (
        Metric("load balance", round(balance.imbalance, 3), "x",
               "the busiest thread's CPU time over the mean of the threads that worked; 1.0 is even"),
        Metric("idle share", round(100 * idle, 1), "%",
               f"of {cores} threads x the calls' wall time, the share no thread was busy "
               "(time spent waiting for a CPU left out)"),
        Metric("waiting for a CPU", round(100 * waited / (cores * wall_s), 1), "%",
               "of the same, the threads were ready but the host's CPUs were busy with other work"),
        Metric("threads that worked", balance.threads, "", f"of the {allotted} the run was given"),
        Metric("calls profiled", probe.calls, "", "untimed calls after timing"),
        Metric("wall time per call", round(wall_s * 1e3 / probe.calls, 3), "ms",
               "the runner's clock around kernel_run in each profiled call"),
    )
    table = Table("busy time per thread", ("thread", "busy_ms", "waiting_ms", "busy_share"), tuple(rows),
                  chart="busy_share")
    return ProfileSection(tool="threads", available=True, metrics=metrics, tables=(table,))


def perf_section(counts: dict[int, dict[str, float]], events: tuple[Event, ...], probe: _Probe) -> ProfileSection:
    """Instructions per cycle and cache misses, summed over the child's threads, with a row per thread."""
    names = [e.name for e in events]

    def total(event: Event) -> float:
        return sum(per.get(event.name, 0.0) for per in counts.values())

    metrics: list[Metric] = []
    if CYCLES in events and INSTRUCTIONS in events and total(CYCLES) > 0:
        metrics.append(Metric("instructions per cycle", round(total(INSTRUCTIONS) / total(CYCLES), 3), "",
                              "user-space instructions retired per core cycle, over the threads that ran"))
    if CACHE_MISSES in events and CACHE_REFERENCES in events and total(CACHE_REFERENCES) > 0:
        metrics.append(Metric("cache misses", round(100 * total(CACHE_MISSES) / total(CACHE_REFERENCES), 2), "%",
                              "last-level cache references that missed (the CPU's generic cache event)"))
    if INSTRUCTIONS in events and total(INSTRUCTIONS) > 0:
        for event in (CACHE_MISSES, BRANCH_MISSES):
            if event in events:
                metrics.append(Metric(f"{event.name} per 1k instructions",
                                      round(1e3 * total(event) / total(INSTRUCTIONS), 3), ""))  # fmt: skip
    for event in events:
        metrics.append(Metric(f"{event.name} per call", round(total(event) / max(1, probe.calls)), ""))
    rows = []
    pid = probe.pid
    counted = [t for t in sorted(counts, key=lambda t: (t != pid, t)) if any(counts[t].values())]
    for index, tid in enumerate(counted):
        per = counts[tid]
        row: dict[str, object] = {"thread": _label(tid, pid, index)}
        row.update({name: round(per.get(name, 0.0)) for name in names})
        if per.get(CYCLES.name):
            row["ipc"] = round(per.get(INSTRUCTIONS.name, 0.0) / per[CYCLES.name], 3)
        rows.append(row)
    columns = ("thread", *names, *(("ipc",) if CYCLES in events and INSTRUCTIONS in events else ()))
    table = Table("counters per thread", columns, tuple(rows))
    return ProfileSection(tool="perf", available=True, metrics=tuple(metrics), tables=(table,))
