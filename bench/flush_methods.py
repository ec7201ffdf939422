"""Cold-cache times under the CPU track's two cache flushes (docs/benchmarks.md, "The cache flush").

    .venv/bin/python bench/flush_methods.py [--rounds 40] [--kernel PATH ...] [--sets benchmarks]
        [--methods buffer,lines,none,pad8,buffer256,huge64]

The judge may flush by line (evict exactly the call's buffers, judge/tracks/cpu/evict.py) instead
of writing twice the last-level cache, if the two give the same cold-cache times within the
timing's precision (0.5 %). This times sparse FA kernels in one process, as the runner child
prepares a call: fresh inputs made for the call and copied to fresh addresses, outputs filled with NaN, the workspace
with garbage, then the flush, then kernel_run, on the judge's OpenMP threads bound to cores.
Every round calls each kernel once under each flush, in an order that turns every round:
"buffer" (the judge's: twice the LLC written), "lines" (the call's lines evicted), "none" (to show
the cache matters), and two kinds of candidate cheaper flush that the judge does not ship:
"pad<k>" evicts the call's lines, then writes a pad of k times the call's buffers, itself evicted
first so its lines take the freed slots dirty (the buffer leaves every LLC line dirty, and the call
writes back each one it displaces); "buffer<MiB>" writes a smaller buffer; "shared" is one buffer
flush for two calls prepared before it, the measured one running second (as the second call of a
timed pair would); "huge<MiB>" is the judge's buffer on 2 MiB pages but its last <MiB>
(bench/_hugebuffer.py). Per case it prints each method's median call, each one's paired ratio to
"buffer" (median over rounds, with its 95 % interval by bootstrap), and what each flush took.
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
from _hugebuffer import FlushBuffer  # noqa: E402
from extra_work import _Library, build  # noqa: E402

from judge.abi import DTYPE_CODES, kernel_args_struct, pack_args  # noqa: E402
from judge.backends import Backend, CaseSet  # noqa: E402
from judge.host_config import HostConfig  # noqa: E402
from judge.problem import load_problem  # noqa: E402
from judge.track_settings.cpu import CpuSettings  # noqa: E402
from judge.tracks.cpu import _runtime_options  # noqa: E402
from judge.tracks.cpu.runtime import CpuRuntime  # noqa: E402

ROW_BLOCKED = REPO_ROOT / "tests/submissions/sparse_flash_attention_grad/cpu/ok_row_blocked.cpp"
METHODS = "buffer,lines,none"


class _Padded(CpuRuntime):
    """The line flush, then a dirty pad of `factor` times the bytes just evicted (a candidate, not the judge's)."""

    def __init__(self, options: dict, factor: float) -> None:
        super().__init__(options)
        self._factor, self._pad = factor, torch.zeros(0, dtype=torch.uint8)

    def flush_caches(self) -> None:
        nbytes = int(self._factor * sum(buffer.numel() for buffer in self._handed_out))
        super().flush_caches()
        if self._pad.numel() < nbytes:
            self._pad = torch.zeros(nbytes, dtype=torch.uint8)
        assert self._evictor is not None
        self._evictor.evict(self._pad.data_ptr(), nbytes)  # out of every level, so writing it takes slots
        self._pad[:nbytes].add_(1)


def _runtimes(work: Path, methods: list[str]) -> dict[str, CpuRuntime]:
    lines = _runtime_options(HostConfig(work_root=work, settings=(CpuSettings(flush="lines"),)))
    if lines["flush"] != "lines":
        raise SystemExit("the line-flush helper did not build here (see the log): nothing to compare")
    buffer = _runtime_options(HostConfig(work_root=work, settings=(CpuSettings(flush="buffer"),)))
    runtimes: dict[str, CpuRuntime] = {}
    for method in methods:
        if method in ("buffer", "none", "shared"):
            runtimes[method] = CpuRuntime(buffer)
        elif method == "lines":
            runtimes[method] = CpuRuntime(lines)
        elif method.startswith("huge"):  # the judge's buffer, but on 2 MiB pages except its last <MiB>
            runtimes[method] = CpuRuntime(buffer)
            huge = FlushBuffer(buffer["flush_bytes"], small_tail=int(method[4:]) << 20)
            print(f"{method}: {huge.describe()}")
            runtimes[method]._flush = huge.tensor  # noqa: SLF001
        elif method.startswith("pad"):
            runtimes[method] = _Padded(lines, float(method[3:]))
        elif method.startswith("buffer"):
            runtimes[method] = CpuRuntime({**buffer, "flush_bytes": int(method[6:]) << 20})
        else:
            raise SystemExit(f"unknown flush method {method!r}: buffer, lines, none, shared, pad<k>, "
                             "buffer<MiB> or huge<MiB>")
    return runtimes


def _prepare(runtime: CpuRuntime, library: _Library, struct: type, case: object, inputs: dict,
             module: object) -> tuple[object, list]:
    """A call prepared as the child prepares it: its packed arguments and the buffers they point to."""
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
    return args, [tensors, outputs, workspace]


def _run(library: _Library, args: object, case: object) -> int:
    started = time.perf_counter_ns()
    if int(library.handle.kernel_run(ctypes.byref(args))) != 0:
        raise SystemExit(f"kernel_run failed on {case.name}")  # type: ignore[attr-defined]
    return time.perf_counter_ns() - started


def _call(runtime: CpuRuntime, library: _Library, struct: type, case: object, inputs: dict, module: object,
          method: str) -> tuple[int, int]:
    """One call prepared as the child prepares it; (flush ns, kernel_run ns). Under "shared" another
    call (same kernel, other inputs) is prepared first, the one flush comes before both, and the
    measured call runs second: a timed pair's two calls after a single flush."""
    decoy = None
    if method == "shared":
        decoy = _prepare(runtime, library, struct, case, module.make_inputs(case, 7), module)
    args, _held = _prepare(runtime, library, struct, case, inputs, module)
    started = time.perf_counter_ns()
    if method != "none":
        runtime.flush_caches()
    else:
        runtime._handed_out = []  # noqa: SLF001 - "none" keeps nothing to evict
    flushed = time.perf_counter_ns()
    if decoy is not None:
        _run(library, decoy[0], case)
    return flushed - started, _run(library, args, case)


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
    parser.add_argument("--methods", default=METHODS, help=f"comma-separated, 'buffer' always in (default {METHODS})")
    options = parser.parse_args()
    methods = ["buffer", *(m for m in options.methods.split(",") if m != "buffer")]
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
        runtimes = _runtimes(Path(work), methods)
        print(f"load average {os.getloadavg()[0]:.2f}; flush buffer {runtimes['buffer']._flush.numel() >> 20} MiB; "  # noqa: SLF001
              f"lines by {_runtimes(Path(work), ['lines'])['lines'].describe()['cache_flush']}")
        print(f"{'case':22} {'kernel':16} " + " ".join(f"{m + ' ms':>12}" for m in methods)
              + "  " + "  ".join(f"{m + '/buffer (95 %)':>28}" for m in methods[1:]) + "  flush ms")
        sets = [CaseSet(s) for s in options.sets.split(",")]
        for case in problem.cases_for(Backend.CPU, sets):
            for name, library in libraries.items():
                times: dict[str, list[int]] = {m: [] for m in methods}
                flushes: dict[str, list[int]] = {m: [] for m in methods}
                for index in range(options.warmup + options.rounds):
                    turn = index % len(methods)
                    order = methods[turn:] + methods[:turn]
                    for method in order if index % 2 == 0 else order[::-1]:
                        inputs = module.make_inputs(case, 1000 + index)  # made per call, as the child does
                        flush_ns, call_ns = _call(runtimes[method], library, struct, case, inputs, module, method)
                        if index >= options.warmup:
                            times[method].append(call_ns)
                            flushes[method].append(flush_ns)
                cells = []
                for method in methods[1:]:
                    ratios = [a / b for a, b in zip(times[method], times["buffer"], strict=True)]
                    low, high = _interval(ratios)
                    cells.append(f"{statistics.median(ratios):.4f} ({low:.4f}-{high:.4f})")
                medians = " ".join(f"{statistics.median(times[m]) / 1e6:12.3f}" for m in methods)
                flush_ms = "/".join(f"{statistics.median(flushes[m]) / 1e6:.2f}" for m in methods if m != "none")
                print(f"{case.name:22} {name:16} {medians}  " + "  ".join(f"{c:>28}" for c in cells)
                      + f"  {flush_ms}", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
