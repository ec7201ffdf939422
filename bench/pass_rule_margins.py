"""The pass rule's margins over many fresh draws, not one (docs/benchmarks.md, "Pass rule margins").

    .venv/bin/python bench/pass_rule_margins.py [--draws 200] [--problem P] [--sets tests,benchmarks,private]
        [--cases SUBSTRING] [--max-seconds S] [--case-budget S] [--all] [--threads N] [--seed S]

For every CPU case (every set, every problem with a CPU baseline) and each draw of fresh inputs
(`make_inputs(case, seed)` with a new seed per draw) it runs
- `baseline`: the problem's CPU baseline kernel, built once with the CPU track's flags and called
  through ctypes with `kernel_args` packed by judge.abi, outputs NaN-filled, workspace garbage;
- `reference`: the same-dtype reference R (where the problem has one: sfag's float16/bfloat16);
- `serial`: for float32 cases, tests/submissions/<problem>/cpu/ok_serial.cpp where it exists (a
  correct kernel that sums serially in float32), built and called like the baseline;
and applies the problem's own `check(case, outputs, G, R)`. Per case and candidate it prints the
draws, the failures, and the worst used share of each bound over outputs and draws:
max|X-G| / allowed_abs_err and MERE / allowed_mere; `G=0 max|X|` is the largest |X| where G is
exactly 0 (the relu's zeros, keys nobody sees); `ulp share`, where the rule is in ulps (add_mul_relu),
the worst |X - round(G)| / allowance over elements. Targets for the baseline and R: 0 failures in N
draws and every worst share <= 0.5 (PASS / MISS; SHORT when fewer than N draws ran). The serial
kernel's figures are reported without a target. R's own shares are below 0.5 by construction (its
bounds are 2x its own error plus a slack): its draws check that it passes, i.e. is finite.

Each case's first draw is timed (and a second when the first is over budget: it may pay for
warm-up); a case whose estimate (the faster one x draws) exceeds --case-budget keeps those draws
and is skipped (listed at the end) unless --all. --max-seconds stops the whole run early, saying
so. Kernels run with --threads OpenMP threads (default: every core, as the judge gives them);
torch (oracle, reference) with --torch-threads (default 1).
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import math
import os
import random
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from judge.abi import DTYPE_CODES, kernel_args_struct, pack_args
from judge.backends import Backend, CaseSet
from judge.problem import Case, Problem, ProblemModule, list_problems, load_problem, make_inputs
from judge.results import OutputCheck
from judge.tracks.cpu.toolchain import CXX_FLAGS

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARE_TARGET = 0.5
TARGETED = ("baseline", "reference")  # held to the targets; the others are reported only
# The CPU track's compiler flags (judge/tracks/cpu/toolchain.py) less -save-temps, which only feeds the policy.
BUILD_FLAGS = [f for f in CXX_FLAGS if not f.startswith("-save-temps")]


def build_library(source: Path, include_dir: Path, workdir: Path) -> Path:
    """`source` built as a shared library with the CPU track's flags and the problem's header dir."""
    library = workdir / f"{source.parent.parent.name}_{source.stem}.so"
    argv = ["g++", *BUILD_FLAGS, "-shared", f"-I{include_dir}", str(source), "-o", str(library)]
    subprocess.run(argv, check=True, capture_output=True, text=True)
    return library


class CpuKernel:
    """A built kernel library called as the runner child calls it, minus the sandbox and the clock."""

    def __init__(self, library: Path, problem: Problem, threads: int) -> None:
        self.lib = ctypes.CDLL(str(library), mode=os.RTLD_NOW | os.RTLD_LOCAL)
        self.lib.kernel_run.restype = ctypes.c_int
        self.lib.kernel_run.argtypes = [ctypes.c_void_p]
        self.workspace_bytes: Any = getattr(self.lib, "kernel_workspace_bytes", None)
        if self.workspace_bytes is not None:
            self.workspace_bytes.restype = ctypes.c_int64
            self.workspace_bytes.argtypes = [ctypes.c_void_p]
        set_threads = getattr(self.lib, "omp_set_num_threads", None)  # the kernel's libgomp, when it links one
        if set_threads is not None:
            set_threads(int(threads))
        self.problem = problem
        self.struct = kernel_args_struct(problem.header)

    def __call__(self, case: Case, inputs: dict[str, Any]) -> dict[str, torch.Tensor]:
        module = self.problem.module
        tensors = {k: v.contiguous() for k, v in inputs.items() if isinstance(v, torch.Tensor)}
        scalars: dict[str, float | int] = dict(case.params)
        scalars.update({k: v for k, v in inputs.items() if isinstance(v, int | float)})
        scalars.update(dtype=DTYPE_CODES[case.dtype], workspace_bytes=0)
        outputs = {name: torch.full(shape, math.nan, dtype=dtype)
                   for name, (shape, dtype) in module.output_specs(case, inputs).items()}
        names = [n for n, ctype in self.struct._fields_ if ctype is ctypes.c_void_p]  # type: ignore[misc]
        pointers: dict[str, int | None] = dict.fromkeys(names)
        pointers.update({k: t.data_ptr() for k, t in (*tensors.items(), *outputs.items())})
        workspace = None
        if self.workspace_bytes is not None:
            blank = pack_args(self.struct, pointers=dict.fromkeys(names), scalars=scalars)
            wanted = int(self.workspace_bytes(ctypes.byref(blank)))
            if wanted:
                workspace = torch.empty(wanted, dtype=torch.uint8).random_(0, 256)  # garbage, as the judge gives
                pointers["workspace"] = workspace.data_ptr()
                scalars["workspace_bytes"] = wanted
        args = pack_args(self.struct, pointers=pointers, scalars=scalars)
        rc = self.lib.kernel_run(ctypes.byref(args))
        del workspace
        if rc != 0:
            raise RuntimeError(f"kernel_run returned {rc} on {case.name}")
        return outputs


Runner = Callable[[Case, dict[str, Any]], dict[str, torch.Tensor]]
Bound = Callable[[torch.Tensor], torch.Tensor]  # per-element allowance at the exactly rounded values


def worst_ulp_share(outputs: dict[str, Any], oracle: dict[str, Any], bound_of: Bound) -> float:
    """Worst |X - round(G)| / bound over every element of every output (NaN counts as inf)."""
    worst = 0.0
    for name, truth in oracle.items():
        x = outputs[name].to(torch.float64)
        exact = truth.to(outputs[name].dtype).to(torch.float64)
        ratio = (x - exact).abs_().div_(bound_of(exact)).nan_to_num_(math.inf)
        worst = max(worst, float(ratio.max()) if ratio.numel() else 0.0)
    return worst


@dataclass
class Tally:
    """One candidate's figures on one case, over its draws."""

    draws: int = 0
    failures: int = 0
    abs_share: float = 0.0
    abs_output: str = ""
    mere_share: float = 0.0
    mere_output: str = ""
    zero_err: float = 0.0  # max |X| where G == 0
    ulp_share: float | None = None  # worst |X - G rounded| / (ulps * ulp), where the rule is in ulps
    first_failure: str = ""

    def add(self, checks: dict[str, OutputCheck], outputs: dict[str, Any], oracle: dict[str, Any],
            bound_of: Bound | None) -> None:
        self.draws += 1
        if bound_of is not None:
            self.ulp_share = max(self.ulp_share or 0.0, worst_ulp_share(outputs, oracle, bound_of))
        failed = [c for c in checks.values() if not c.passed]
        if failed:
            self.failures += 1
            self.first_failure = self.first_failure or failed[0].reason
        for name, c in checks.items():
            a, m = share(c.max_abs_err, c.allowed_abs_err), share(c.mere, c.allowed_mere)
            if a > self.abs_share:
                self.abs_share, self.abs_output = a, name
            if m > self.mere_share:
                self.mere_share, self.mere_output = m, name
            zeros = oracle[name] == 0
            if bool(zeros.any()):
                err = float(outputs[name].to(torch.float64)[zeros].abs().nan_to_num(math.inf).max())
                self.zero_err = max(self.zero_err, err)

    def status(self, wanted: int) -> str:
        shares = (self.abs_share, self.mere_share, self.ulp_share or 0.0)
        if self.failures or max(shares) > SHARE_TARGET:
            return "MISS"
        return "PASS" if self.draws >= wanted else "SHORT"


def share(value: float, bound: float) -> float:
    """The used share of a bound (inf where a bound of 0 is exceeded)."""
    if bound > 0:
        return value / bound
    return 0.0 if value <= 0 else math.inf


@dataclass
class Subject:
    """A problem with its built kernels (by candidate name)."""

    problem: Problem
    kernels: dict[str, Runner] = field(default_factory=dict)

    @property
    def module(self) -> ProblemModule:
        return self.problem.module


def load_subject(slug: str, workdir: Path, threads: int) -> Subject:
    """The problem and its CPU kernels: the baseline and, where the problem has one, ok_serial.cpp."""
    problem = load_problem(slug)
    subject = Subject(problem)
    sources = {"baseline": problem.baselines[Backend.CPU],
               "serial": REPO_ROOT / "tests" / "submissions" / slug / "cpu" / "ok_serial.cpp"}
    for name, source in sources.items():
        if source.is_file():
            subject.kernels[name] = CpuKernel(build_library(source, problem.root, workdir), problem, threads)
    return subject


def ulp_bound(subject: Subject, case: Case) -> Bound | None:
    """The per-element bound where the problem's rule is in ulps (add_mul_relu: `ulp` x `ulps`), else None."""
    ulps = subject.problem.tolerance.get(case.dtype, {}).get("ulps")
    ulp = getattr(subject.module, "ulp", None)
    if ulps is None or ulp is None:
        return None
    return lambda exact: ulp(exact, case.dtype).mul_(float(ulps))


def runs_on(name: str, case: Case) -> bool:
    """The serial kernel is the float32 candidate; the baseline runs everywhere."""
    return name != "serial" or case.dtype == "float32"


def draw(subject: Subject, case: Case, seed: int) -> dict[str, tuple[dict[str, OutputCheck], dict[str, Any]]]:
    """One draw: fresh inputs, G, R, every candidate run and checked. Candidate -> (checks, outputs)."""
    module = subject.module
    inputs = make_inputs(module, case, seed, "cpu")
    oracle = module.oracle(case, inputs)
    reference = module.reference(case, inputs)
    results = {}
    for name, kernel in subject.kernels.items():
        if runs_on(name, case):
            outputs = kernel(case, inputs)
            results[name] = (module.check(case, outputs, oracle, reference), outputs)
    if reference is not None:
        results["reference"] = (module.check(case, reference, oracle, reference), reference)
    return results | {"": ({}, oracle)}  # the oracle rides along for the G == 0 figure


def tally_draw(tallies: dict[str, Tally], results: dict[str, tuple[dict[str, OutputCheck], dict[str, Any]]],
               bound_of: Bound | None = None) -> None:
    oracle = results[""][1]
    for name, (checks, outputs) in results.items():
        if name:
            tallies.setdefault(name, Tally()).add(checks, outputs, oracle, bound_of)


def measure(subject: Subject, case: Case, seeds: list[int]) -> dict[str, Tally]:
    """The tallies of `case` over the given seeds (no timing, no budget: for tests)."""
    tallies: dict[str, Tally] = {}
    for seed in seeds:
        tally_draw(tallies, draw(subject, case, seed), ulp_bound(subject, case))
    return tallies


HEADER = (f"{'problem':<12} {'case':<31} {'dtype':<8} {'candidate':<9} {'draws':>5} {'fail':>4} "
          f"{'abs share':>9} {'(output)':<9} {'MERE share':>10} {'(output)':<9} {'G=0 max|X|':>10} "
          f"{'ulp share':>9}  status")


def row(slug: str, case: Case, name: str, t: Tally, wanted: int, note: str = "") -> str:
    status = t.status(wanted) if name in TARGETED else "-"
    line = (f"{slug[:12]:<12} {case.name[:31]:<31} {case.dtype:<8} {name:<9} {t.draws:>5} {t.failures:>4} "
            f"{t.abs_share:>9.4f} {t.abs_output:<9} {t.mere_share:>10.4f} {t.mere_output:<9} {t.zero_err:>10.3g} "
            f"{'-' if t.ulp_share is None else f'{t.ulp_share:.4f}':>9}  {status}{note}")
    return line + (f"\n    first failure: {t.first_failure}" if t.first_failure else "")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=200, help="draws per case (default 200)")
    parser.add_argument("--problem", action="append", help="a problem slug (repeatable; default: every one)")
    parser.add_argument("--sets", default="tests,benchmarks,private", help="comma-separated case sets")
    parser.add_argument("--cases", default="", help="only cases whose name contains this")
    parser.add_argument("--max-seconds", type=float, default=math.inf, help="stop the whole run after this long")
    parser.add_argument("--case-budget", type=float, default=300.0,
                        help="skip a case whose estimated time (first draw x draws) exceeds this (default 300 s)")
    parser.add_argument("--all", action="store_true", help="run every case, whatever its estimate")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)), help="the kernels' threads")
    parser.add_argument("--torch-threads", type=int, default=1, help="torch's threads (oracle, reference)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the seeds (default: a fresh one, printed)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    base_seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 32)
    seeds = random.Random(base_seed)
    torch.set_num_threads(args.torch_threads)
    sets = [CaseSet(s.strip()) for s in args.sets.split(",") if s.strip()]
    slugs = args.problem or [s for s in list_problems() if Backend.CPU in load_problem(s).baselines]
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"command: {shlex.join([sys.executable, *sys.argv])}")
    print(f"date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}  load average: {load}  "
          f"cpus: {os.cpu_count()}  kernel threads: {args.threads}  torch threads: {args.torch_threads}  "
          f"seed of seeds: {base_seed}")
    print(f"targets (baseline, reference): 0 failures in {args.draws} draws, worst share of each bound <= "
          f"{SHARE_TARGET}")
    skipped: list[str] = []
    stopped = ""
    unreached: list[str] = []  # cases --max-seconds left out
    rows: list[tuple[str, Tally]] = []
    with tempfile.TemporaryDirectory(prefix="opjudge-margins-") as work:
        for slug in slugs:
            subject = load_subject(slug, Path(work), args.threads)
            cases = [c for c in subject.problem.cases_for(Backend.CPU, sets) if args.cases in c.name]
            print(f"\n{slug}: {len(cases)} case(s) of {','.join(s.value for s in sets)}; kernels: "
                  f"{', '.join(subject.kernels)}")
            print(HEADER)
            for case in cases:
                if stopped:
                    unreached.append(f"{slug}/{case.name}")
                    continue
                tallies: dict[str, Tally] = {}
                bound_of = ulp_bound(subject, case)
                first = math.inf
                for _ in range(min(2, args.draws)):  # the first draw may pay for warm-up: the faster of two
                    t0 = time.monotonic()
                    tally_draw(tallies, draw(subject, case, seeds.randrange(1 << 63)), bound_of)
                    first = min(first, time.monotonic() - t0)
                    if first * args.draws <= args.case_budget:
                        break
                estimate = first * args.draws
                note = f"  [{first:.3g} s/draw, est {estimate:.3g} s]"
                if estimate > args.case_budget and not args.all:
                    skipped.append(f"{slug}/{case.name} (est {estimate:.3g} s for {args.draws} draws)")
                    note += " SKIPPED (over --case-budget; --all runs it)"
                else:
                    while tallies and min(t.draws for t in tallies.values()) < args.draws:
                        if time.monotonic() - started > args.max_seconds:
                            stopped = (f"stopped early after {time.monotonic() - started:.0f} s (--max-seconds "
                                       f"{args.max_seconds:g}) in {slug}/{case.name}")
                            break
                        tally_draw(tallies, draw(subject, case, seeds.randrange(1 << 63)), bound_of)
                for name, tally in tallies.items():
                    print(row(slug, case, name, tally, args.draws, note), flush=True)
                    rows.append((f"{slug}/{case.name}/{name}", tally))
            if stopped:
                unreached.extend(slugs[slugs.index(slug) + 1 :])  # whole problems not started
                break
    if unreached:
        stopped += f"; not reached: {', '.join(unreached)}"
    _summary(rows, args.draws, skipped, stopped, time.monotonic() - started)
    return 0


def _summary(rows: list[tuple[str, Tally]], wanted: int, skipped: list[str], stopped: str, elapsed: float) -> None:
    print()
    if stopped:
        print(stopped + "; the figures above are what was done")
    for label in skipped:
        print(f"skipped: {label}")
    for group, names in (("targeted", TARGETED), ("reported", ("serial",))):
        chosen = [(k, t) for k, t in rows if k.rsplit("/", 1)[1] in names]
        if not chosen:
            continue
        draws = sum(t.draws for _, t in chosen)
        failures = sum(t.failures for _, t in chosen)
        worst_abs = max(chosen, key=lambda kt: kt[1].abs_share)
        worst_mere = max(chosen, key=lambda kt: kt[1].mere_share)
        line = (f"summary {group} ({'/'.join(names)}): {len(chosen)} case-candidates, {draws} draws, "
                f"{failures} failing draws; worst abs share {worst_abs[1].abs_share:.4f} ({worst_abs[0]}), "
                f"worst MERE share {worst_mere[1].mere_share:.4f} ({worst_mere[0]})")
        if group == "targeted":
            statuses = [t.status(wanted) for _, t in chosen]
            line += f"; {statuses.count('PASS')} PASS, {statuses.count('MISS')} MISS, {statuses.count('SHORT')} SHORT"
            line += f" -> {'MISS' if 'MISS' in statuses else 'PASS' if 'SHORT' not in statuses else 'SHORT'}"
        print(line)
    print(f"elapsed: {elapsed:.0f} s  load average now: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    raise SystemExit(main())
