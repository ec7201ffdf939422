"""Cold-cache times under the CPU track's two cache flushes (docs/benchmarks.md, "The cache flush").

    .venv/bin/python bench/flush_methods.py [--rounds 40] [--kernel PATH ...] [--sets benchmarks]

The judge may flush by line (evict exactly the call's buffers, judge/tracks/cpu/evict.py) instead
of writing twice the last-level cache, if the two give the same cold-cache times within the
timing's precision (0.5 %). This times sparse FA kernels in one process, as the runner child
prepares a call: fresh inputs made for the call and copied to fresh addresses, outputs filled with NaN, the workspace
with garbage, then the flush, then kernel_run, on the judge's OpenMP threads bound to cores.
Every round calls each kernel once under each flush ("buffer", "lines", and "none" to show the
cache matters), in an order that turns every round. Per case it prints each method's median call,
the paired ratio lines / buffer (median over rounds, with its 95 % interval by bootstrap), none /
buffer, and what each flush itself took.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_PROC_BIND", "spread")  # as the runner child (judge/tracks/cpu/__init__.py)
os.environ.setdefault("OMP_PLACES", "cores")
os.environ.setdefault("GOMP_SPINCOUNT", "10000")

import argparse  # noqa: E402
import ctypes  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402
from _common import REPO_ROOT, SFA_BASELINE  # noqa: E402
from extra_work import _Library, build  # noqa: E402

from judge.abi import DTYPE_CODES, kernel_args_struct, pack_args  # noqa: E402
from judge.backends import Backend, CaseSet  # noqa: E402
from judge.host_config import HostConfig  # noqa: E402
from judge.problem import load_problem  # noqa: E402
from judge.track_settings.cpu import CpuSettings  # noqa: E402
from judge.tracks.cpu import _runtime_options  # noqa: E402
from judge.tracks.cpu.runtime import CpuRuntime  # noqa: E402

ROW_BLOCKED = REPO_ROOT / "tests/submissions/sparse_flash_attention_grad/cpu/ok_row_blocked.cpp"
METHODS = ("buffer", "lines", "none")


def _runtimes(work: Path) -> dict[str, CpuRuntime]:
    lines = _runtime_options(HostConfig(work_root=work, settings=(CpuSettings(flush="lines"),)))
    if lines["flush"] != "lines":
        raise SystemExit("the line-flush helper did not build here (see the log): nothing to compare")
    buffer = _runtime_options(HostConfig(work_root=work, settings=(CpuSettings(flush="buffer"),)))
    return {"buffer": CpuRuntime(buffer), "lines": CpuRuntime(lines), "none": CpuRuntime(buffer)}


def _call(runtime: CpuRuntime, library: _Library, struct: type, case: object, inputs: dict, module: object,
          method: str) -> tuple[int, int]:
    """One call prepared as the child prepares it; (flush ns, kernel_run ns)."""
    tensors = {k: runtime.to_device(v) for k, v in inputs.items() if isinstance(v, torch.Tensor)}
    outputs = {n: runtime.empty(tuple(shape), dtype, float("nan"))
               for n, (shape, dtype) in module.output_specs(case, inputs).items()}  # type: ignore[attr-defined]
    pointers: dict[str, int | None] = {name: None for name, kind in struct._fields_ if kind is ctypes.c_void_p}
    pointers.update({k: t.data_ptr() for k, t in (*tensors.items(), *outputs.items())})
    pointers.update(workspace=None, stream=None)
    scalars = dict(case.params)  # type: ignore[attr-defined]
    scalars.update({k: v for k, v in inputs.items() if isinstance(v, int | float)})
    scalars.update(dtype=DTYPE_CODES[case.dtype], workspace_bytes=0)  # type: ignore[attr-defined]
    args = pack_args(struct, pointers=pointers, scalars=scalars)
    wanted = int(library.handle.kernel_workspace_bytes(ctypes.byref(args)))
    workspace = runtime.garbage(wanted) if wanted else None
    if workspace is not None:
        args.workspace, args.workspace_bytes = workspace.data_ptr(), wanted
    started = time.perf_counter_ns()
    if method != "none":
        runtime.flush_caches()
    else:
        runtime._handed_out = []  # noqa: SLF001 - "none" keeps nothing to evict
    flushed = time.perf_counter_ns()
    if int(library.handle.kernel_run(ctypes.byref(args))) != 0:
        raise SystemExit(f"kernel_run failed on {case.name}")  # type: ignore[attr-defined]
    return flushed - started, time.perf_counter_ns() - flushed


def _interval(ratios: list[float], draws: int = 2000) -> tuple[float, float]:
    chance = random.Random(1)
    medians = sorted(statistics.median(chance.choices(ratios, k=len(ratios))) for _ in range(draws))
    return medians[int(0.025 * draws)], medians[int(0.975 * draws)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--kernel", type=Path, action="append", help="default: the baseline and ok_row_blocked")
    parser.add_argument("--sets", default="benchmarks")
    options = parser.parse_args()
    torch.set_num_threads(len(os.sched_getaffinity(0)))  # the kernels' OpenMP threads, as in the child
    problem = load_problem("sparse_flash_attention_grad")
    module, struct = problem.module, kernel_args_struct(problem.header)
    kernels = options.kernel or [SFA_BASELINE, ROW_BLOCKED]
    with tempfile.TemporaryDirectory(prefix="opjudge-flush-") as work:
        libraries = {}
        for path in kernels:
            copy = Path(work) / f"{path.stem}.cpp"
            copy.write_text(path.read_text())
            libraries[path.stem] = _Library(build(copy, problem.header.parent))
        runtimes = _runtimes(Path(work))
        print(f"load average {os.getloadavg()[0]:.2f}; flush buffer {runtimes['buffer']._flush.numel() >> 20} MiB; "  # noqa: SLF001
              f"lines by {runtimes['lines'].describe()['cache_flush']}")
        print(f"{'case':22} {'kernel':16} {'buffer ms':>10} {'lines ms':>9} {'none ms':>8} "
              f"{'lines/buffer (95 %)':>26} {'none/buffer':>11} {'flush ms b/l':>13}")
        sets = [CaseSet(s) for s in options.sets.split(",")]
        for case in problem.cases_for(Backend.CPU, sets):
            for name, library in libraries.items():
                times: dict[str, list[int]] = {m: [] for m in METHODS}
                flushes: dict[str, list[int]] = {m: [] for m in METHODS}
                for index in range(options.warmup + options.rounds):
                    order = METHODS[index % 3:] + METHODS[: index % 3]
                    for method in order if index % 2 == 0 else order[::-1]:
                        inputs = module.make_inputs(case, 1000 + index)  # made per call, as the child does
                        flush_ns, call_ns = _call(runtimes[method], library, struct, case, inputs, module, method)
                        if index >= options.warmup:
                            times[method].append(call_ns)
                            flushes[method].append(flush_ns)
                ratios = [lo / bu for lo, bu in zip(times["lines"], times["buffer"], strict=True)]
                none = [no / bu for no, bu in zip(times["none"], times["buffer"], strict=True)]
                low, high = _interval(ratios)
                med = {m: statistics.median(times[m]) / 1e6 for m in METHODS}
                print(f"{case.name:22} {name:16} {med['buffer']:10.3f} {med['lines']:9.3f} {med['none']:8.3f} "
                      f"{statistics.median(ratios):10.4f} ({low:.4f}-{high:.4f}) {statistics.median(none):11.4f} "
                      f"{statistics.median(flushes['buffer']) / 1e6:6.2f}/"
                      f"{statistics.median(flushes['lines']) / 1e6:.2f}", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
