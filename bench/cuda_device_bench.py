"""Time the CUDA baseline of sparse_flash_attention_grad on a GPU, repeatably (docs/benchmarks.md, "CUDA track (H200)").

    python3 bench/cuda_device_bench.py --runs 5 --out bench.json

For each case of the problem's CUDA set (default: benchmarks) it generates the inputs on the GPU
with the problem package's own generator and forward pass, runs the float64 oracle on the GPU
(timed) and checks the baseline's outputs with the problem's pass rule, then times the baseline
exactly as the judge's CUDA runtime does: fresh addresses, NaN-poisoned outputs, a garbage
workspace and a 256 MiB flush before every call, CUDA events with their overhead taken off.
Each of `--runs` repetitions is a separate process (like separate judge runs); the summary gives
per case the median time of each run, the coefficient of variation of those medians, and the
achieved TFLOP/s against the GPU's peak.

Why not `opjudge judge` five times: a judging also builds both libraries, makes fresh inputs
for every call, runs the float64 oracle on a quarter of them and times the baseline beside the
submission; five of them on the benchmark cases do not fit the device check's 8 minutes. This
script measures the kernel and the clock alone. It reuses one input set per case across calls,
which is fair only for a kernel known not to cache (the baseline); the judge itself gives every
call fresh content (step 8 of bench/device_check.sh judges the benchmark cases once that way).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from judge.abi import DTYPE_CODES, kernel_args_struct, pack_args  # noqa: E402
from judge.backends import Backend, CaseSet  # noqa: E402
from judge.limits import DEVICE_LIMITS  # noqa: E402
from judge.problem import Case, Problem, load_problem  # noqa: E402
from judge.sandbox.rlimit import OffSandbox  # noqa: E402
from judge.toolchains.base import SourceFile  # noqa: E402
from judge.tracks.cuda.device import find_peak  # noqa: E402
from judge.tracks.cuda.runtime import CudaRuntime  # noqa: E402
from judge.tracks.cuda.toolchain import CudaToolchain  # noqa: E402

SLUG = "sparse_flash_attention_grad"


def build_baseline(problem: Problem, workdir: Path) -> Path:
    """The CUDA baseline built with the judge's own toolchain and flags (no sandbox: trusted code)."""
    source = problem.baselines[Backend.CUDA]
    include = workdir / "include"
    include.mkdir(parents=True, exist_ok=True)
    (include / problem.header.name).write_bytes(problem.header.read_bytes())
    (workdir / source.name).write_bytes(source.read_bytes())
    result = CudaToolchain().build(sources=[SourceFile(source.name, source.read_bytes())], include_dirs=[include],
                                   workdir=workdir, limits=DEVICE_LIMITS, sandbox=OffSandbox())
    if not result.ok or result.library_path is None:
        raise SystemExit(f"the baseline did not build:\n{result.log}")
    return Path(result.library_path)


def gpu_inputs(problem: Problem, case: Case, seed: int) -> dict[str, Any]:
    """The case's inputs made on the GPU by the package's own draw_indices and forward."""
    module = problem.module
    sz = module.sizes(case)
    dtype = module.DTYPES[case.dtype]
    query, key = (sz.B, sz.S1, sz.N1), (sz.B, sz.S2, sz.N2)
    shapes = {"q": (*query, sz.D), "q_rope": (*query, sz.Dr), "k": (*key, sz.D), "k_rope": (*key, sz.Dr),
              "v": (*key, sz.D), "d_out": (*query, sz.D)}
    with torch.device("cuda"):
        gen = torch.Generator(device="cuda").manual_seed(seed)
        inputs: dict[str, Any] = {}
        for name in module.NORMAL_INPUTS:
            is_rope = name in module.ROPE_NAMES and sz.Dr == 0
            inputs[name] = None if is_rope else torch.randn(shapes[name], generator=gen, device="cuda").to(dtype)
        indices = module.draw_indices(sz, gen, ragged="ragged_topk" in case.flags)
        out, softmax_max, softmax_sum = module.forward(sz, inputs, indices)
    inputs.update(sparse_indices=indices, out=out.to(dtype), softmax_max=softmax_max, softmax_sum=softmax_sum,
                  scale=sz.scale)
    return inputs


class Caller:
    """kernel_run on device copies of one input set, prepared like the judge's runner child does."""

    def __init__(self, runtime: CudaRuntime, library: Path, problem: Problem, case: Case, inputs: dict[str, Any]):
        self.runtime, self.problem, self.case, self.inputs = runtime, problem, case, inputs
        self.lib = ctypes.CDLL(str(library))
        self.lib.kernel_run.restype = ctypes.c_int
        self.lib.kernel_run.argtypes = [ctypes.c_void_p]
        self.lib.kernel_workspace_bytes.restype = ctypes.c_int64
        self.lib.kernel_workspace_bytes.argtypes = [ctypes.c_void_p]
        self.struct = kernel_args_struct(problem.header)
        self.names = {t.name for t in (*problem.inputs, *problem.outputs)}
        self.specs = problem.module.output_specs(case, inputs)

    def prepare(self) -> tuple[Any, dict[str, torch.Tensor], list[Any]]:
        rt = self.runtime
        device_inputs = {k: rt.to_device(v) for k, v in self.inputs.items() if isinstance(v, torch.Tensor)}
        outputs = {k: rt.empty(tuple(shape), dtype, float("nan")) for k, (shape, dtype) in self.specs.items()}
        pointers: dict[str, int | None] = dict.fromkeys(self.names)
        pointers.update({k: t.data_ptr() for k, t in (*device_inputs.items(), *outputs.items())})
        pointers.update(workspace=None, stream=rt.stream_handle())
        scalars: dict[str, Any] = dict(self.case.params)
        scalars.update(scale=self.inputs["scale"], dtype=DTYPE_CODES[self.case.dtype], workspace_bytes=0)
        args = pack_args(self.struct, pointers=pointers, scalars=scalars)
        keep: list[Any] = [device_inputs]
        wanted = int(self.lib.kernel_workspace_bytes(ctypes.byref(args)))
        if wanted:
            workspace = rt.garbage(wanted)
            keep.append(workspace)
            args.workspace, args.workspace_bytes = workspace.data_ptr(), wanted
        return args, outputs, keep

    def timed_call(self) -> tuple[int, int, dict[str, torch.Tensor]]:
        args, outputs, _keep = self.prepare()
        self.runtime.flush_caches()
        rc, elapsed_ns = self.runtime.time_call(lambda: int(self.lib.kernel_run(ctypes.byref(args))))
        return rc, elapsed_ns, outputs


def check_on_gpu(problem: Problem, case: Case, inputs: dict[str, Any], outputs: dict[str, torch.Tensor]) -> dict:
    """The float64 oracle on the GPU (timed) and the pass rule applied to the baseline's outputs."""
    module = problem.module
    try:
        torch.cuda.synchronize()
        started = time.perf_counter()
        with torch.device("cuda"):
            truth = module.oracle(case, inputs)
            torch.cuda.synchronize()
            oracle_s = time.perf_counter() - started
            reference = module.reference(case, inputs)
            checks = module.check(case, outputs, truth, reference)
    except Exception as exc:  # report and go on: the timing is still worth having
        return {"oracle_gpu_s": None, "passed": None, "error": f"{type(exc).__name__}: {exc}"[:400]}
    return {"oracle_gpu_s": oracle_s, "passed": all(c.passed for c in checks.values()),
            "failures": [c.reason for c in checks.values() if not c.passed]}


def single_run(args: argparse.Namespace) -> dict[str, Any]:
    problem = load_problem(SLUG)
    cases = problem.cases_for(Backend.CUDA, [CaseSet(args.cases)])
    runtime = CudaRuntime({})  # before the library loads: CUDA and libcudart come up first
    with tempfile.TemporaryDirectory(prefix="opjudge-bench-") as work:
        library = build_baseline(problem, Path(work))
        results = []
        for case in cases:
            inputs = gpu_inputs(problem, case, seed=case.seed or 12345)
            caller = Caller(runtime, library, problem, case, inputs)
            with torch.device("cuda"):
                flops, _ = problem.module.work(case, inputs)
            entry: dict[str, Any] = {"case": case.name, "dtype": case.dtype, "flops": flops}
            rc, _, outputs = caller.timed_call()  # the first call doubles as the correctness check
            if rc != 0:
                raise SystemExit(f"kernel_run returned {rc} on {case.name}")
            if args.check:
                entry.update(check_on_gpu(problem, case, inputs, outputs))
            del outputs
            started, samples = time.monotonic(), []
            for _ in range(args.warmup):
                caller.timed_call()
            while len(samples) < args.min_calls or (time.monotonic() - started < args.budget_s
                                                    and len(samples) < args.max_calls):
                rc, ns, _ = caller.timed_call()
                samples.append(ns)
            entry.update(median_ns=statistics.median(samples), calls=len(samples),
                         min_ns=min(samples), mean_ns=statistics.fmean(samples))
            results.append(entry)
            print(f"  {case.name}: median {entry['median_ns'] / 1e6:.3f} ms over {len(samples)} calls", flush=True)
        return {"device": runtime.describe(), "cases": results}


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    device = runs[0]["device"]
    peak = find_peak(device["device"])
    rows = []
    for i, first in enumerate(runs[0]["cases"]):
        medians = [run["cases"][i]["median_ns"] for run in runs]
        mean = statistics.fmean(medians)
        cv = statistics.stdev(medians) / mean if len(medians) > 1 and mean else 0.0
        median_ns = statistics.median(medians)
        tflops = first["flops"] / median_ns / 1e3
        row = {"case": first["case"], "dtype": first["dtype"], "medians_ms": [m / 1e6 for m in medians],
               "median_ms": median_ns / 1e6, "cv_percent": 100 * cv, "tflops": tflops,
               "percent_of_tensor16_peak": 100 * tflops * 1e12 / peak.tensor16_flops if peak else None,
               "percent_of_fp32_peak": 100 * tflops * 1e12 / peak.fp32_flops if peak else None,
               "oracle_gpu_s": first.get("oracle_gpu_s"), "baseline_passes": first.get("passed"),
               "check_error": first.get("error") or first.get("failures")}
        rows.append(row)
    return {"device": device, "runs": len(runs), "cases": rows}


def print_table(summary: dict[str, Any]) -> None:
    device = summary["device"]
    print(f"\n{device['device']} (driver {device['driver']}, CUDA {device['cuda_runtime']}, "
          f"flush {device['flush_mib']} MiB, event overhead {device['event_overhead_ns']} ns), "
          f"{summary['runs']} runs")
    print(f"{'case':28} {'dtype':9} {'median ms':>10} {'CV %':>6} {'TFLOP/s':>8} {'% 16-bit':>8} {'% fp32':>7} "
          f"{'oracle s':>8} pass")
    for r in summary["cases"]:
        pct16 = f"{r['percent_of_tensor16_peak']:.1f}" if r["percent_of_tensor16_peak"] is not None else "?"
        pct32 = f"{r['percent_of_fp32_peak']:.1f}" if r["percent_of_fp32_peak"] is not None else "?"
        oracle = f"{r['oracle_gpu_s']:.2f}" if r["oracle_gpu_s"] is not None else "n/a"
        print(f"{r['case']:28} {r['dtype']:9} {r['median_ms']:10.3f} {r['cv_percent']:6.2f} {r['tflops']:8.2f} "
              f"{pct16:>8} {pct32:>7} {oracle:>8} {r['baseline_passes']}")
        if r["check_error"]:
            print(f"    check: {r['check_error']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="separate processes, like separate judge runs")
    parser.add_argument("--cases", default="benchmarks", choices=[s.value for s in CaseSet])
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--min-calls", type=int, default=5)
    parser.add_argument("--max-calls", type=int, default=50)
    parser.add_argument("--budget-s", type=float, default=3.0, help="timing budget per case and run")
    parser.add_argument("--no-check", dest="check", action="store_false", help="skip the GPU oracle and check")
    parser.add_argument("--single-run", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.single_run:
        print(json.dumps(single_run(args)), flush=True)
        return
    runs = []
    for index in range(args.runs):
        argv = [sys.executable, __file__, "--single-run", "--cases", args.cases, "--warmup", str(args.warmup),
                "--min-calls", str(args.min_calls), "--max-calls", str(args.max_calls),
                "--budget-s", str(args.budget_s)]
        if not args.check or index > 0:  # the oracle and the check once, in the first run
            argv.append("--no-check")
        print(f"run {index + 1}/{args.runs}", flush=True)
        proc = subprocess.run(argv, capture_output=True, text=True)
        sys.stdout.write("".join(line + "\n" for line in proc.stdout.splitlines()[:-1]))
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr[-4000:])
            raise SystemExit(f"run {index + 1} failed with status {proc.returncode}")
        runs.append(json.loads(proc.stdout.splitlines()[-1]))
    summary = summarise(runs)
    print_table(summary)
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "runs": runs}, indent=2))


if __name__ == "__main__":
    main()
