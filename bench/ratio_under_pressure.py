"""Does the ratio of two different kernels move with the host's state? (docs/benchmarks.md,
"Fresh children for the timing")

    cd bench && ../.venv/bin/python ratio_under_pressure.py [--rounds 60] [--blocks 6] [--permille 200]

The baseline kernel and ranking_fidelity.py's extra-work copy (`--permille`, `fast` by default)
are called in turn (A B B A, the caches flushed before each call, one OpenMP thread) on fixed
inputs of each `benchmarks` case, in blocks that alternate between a quiet host and a host whose
other core streams through memory (a thread copying a 256 MiB buffer over and over: what a
neighbour's job does to this one's memory bandwidth and cache). The same kernel pair under both
states: if the copy's ratio to the baseline differs between them, the ratio depends on the host's
state, and a judging's share of that state cannot be paired away. Prints, per case, the median
ratio in each state, the difference and its 95 % bootstrap interval, and the baseline's own
slowdown under the stream (how hard the state was pushed).
"""

from __future__ import annotations

import argparse
import contextlib
import random
import statistics
import tempfile
import threading
import time
from pathlib import Path

import torch
from extra_work import _Call, _Library, build, flush_bytes
from ranking_fidelity import FAST_PERMILLE, make_variant

from judge.backends import Backend, CaseSet
from judge.problem import load_problem

STREAM_BYTES = 256 << 20


class Stream:
    """A thread copying a buffer larger than the cache over and over (torch's copy releases the GIL)."""

    def __init__(self) -> None:
        self.source = torch.ones(STREAM_BYTES // 4, dtype=torch.float32)
        self.target = torch.empty_like(self.source)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Stream:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        time.sleep(0.05)
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            self.target.copy_(self.source)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


def _bootstrap(quiet: list[float], pushed: list[float], draws: int = 2000) -> tuple[float, float]:
    rng = random.Random(7)
    diffs = sorted(statistics.median(rng.choices(pushed, k=len(pushed)))
                   / statistics.median(rng.choices(quiet, k=len(quiet))) - 1 for _ in range(draws))
    return diffs[int(0.025 * draws)], diffs[int(0.975 * draws)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=60, help="pairs of calls per case and state")
    parser.add_argument("--blocks", type=int, default=6, help="blocks per state, alternated")
    parser.add_argument("--permille", type=int, default=FAST_PERMILLE, help="the copy's share of redone steps")
    options = parser.parse_args()
    problem = load_problem("sparse_flash_attention_grad")
    folder = Path(tempfile.mkdtemp(prefix="opjudge-pressure-"))
    sources = {"baseline": Path(__file__).resolve().parents[1]
               / "reference_kernels/sparse_flash_attention_grad/cpu/baseline.cpp",
               "copy": make_variant(options.permille, folder)}
    libraries = {name: _Library(build(path, problem.header.parent)) for name, path in sources.items()}
    torch.set_num_threads(1)  # torch's libgomp is the kernels' too: one OpenMP thread for them
    flush = torch.zeros(flush_bytes(), dtype=torch.uint8)
    stream = Stream()
    per_block = max(1, options.rounds // options.blocks)
    print(f"{options.rounds} pairs a case and state, in {options.blocks} blocks a state; the copy redoes "
          f"{options.permille / 10:.1f} % of the key steps")
    for case in problem.cases_for(Backend.CPU, [CaseSet.BENCHMARKS]):
        call = _Call(problem, case, seed=4242)
        runners = {name: call.runner(lib) for name, lib in libraries.items()}
        ratios: dict[bool, list[float]] = {False: [], True: []}
        base: dict[bool, list[int]] = {False: [], True: []}
        for block in range(2 * options.blocks):
            pushed = block % 2 == 1
            with stream if pushed else contextlib.nullcontext():
                for index in range(per_block + 1):  # the first pair of a block warms up
                    times = {}
                    for name in ("baseline", "copy") if index % 2 == 0 else ("copy", "baseline"):
                        flush.add_(1)
                        started = time.perf_counter_ns()
                        if runners[name]() != 0:
                            raise SystemExit(f"{name} failed on {case.name}")
                        times[name] = time.perf_counter_ns() - started
                    if index:
                        ratios[pushed].append(times["copy"] / times["baseline"])
                        base[pushed].append(times["baseline"])
        quiet, loud = statistics.median(ratios[False]), statistics.median(ratios[True])
        low, high = _bootstrap(ratios[False], ratios[True])
        slowdown = statistics.median(base[True]) / statistics.median(base[False]) - 1
        print(f"  {case.name:22} ratio quiet {quiet:.4f}, streamed {loud:.4f}: {100 * (loud / quiet - 1):+.2f} % "
              f"(95 % {100 * low:+.2f} to {100 * high:+.2f} %); the baseline {100 * slowdown:+.1f} % slower streamed",
              flush=True)


if __name__ == "__main__":
    main()
