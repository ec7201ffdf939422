"""The sparse FA backward oracle against dense masked attention under torch.autograd: time and memory.

    .venv/bin/python bench/oracle.py [--threads 1] [--skip-dense-above S2]
    .venv/bin/python bench/oracle.py --per-case     # make_inputs and oracle+reference per CPU case

Each measurement runs in a fresh subprocess that loads the case's inputs from a file (so its
peak RSS before the computation is just the inputs) and reports the CPU and wall time of the
computation and its peak RSS above that (resource.getrusage maxrss; tracemalloc does not see
torch's allocator). Both sides run single-threaded by default (the oracle always does): on a
shared machine the CPU seconds of one thread compare fairly where wall time does not.

Sizes: the largest CPU case of the package; a DSA-sized case (D=512, Dr=64, N1=16, S1=512,
S2=4096, K=64, bs=16); the same with S2 doubled (S1*K*bs unchanged) and with K doubled
(S1*K*bs doubled). Target (docs/benchmarks.md, "Oracle"): the oracle at least 5x faster than dense autograd, and its
memory growing with S1*K*bs (here: bounded by the chunk budget), not with S1*S2.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from judge.backends import Backend, CaseSet
from judge.problem import Case, load_problem

SLUG = "sparse_flash_attention_grad"
DSA = dict(B=1, S1=512, S2=4096, N1=16, N2=1, D=512, Dr=64, K=64, block_size=16, sparse_mode=3)
SEED = 20240601


def _configs() -> list[tuple[str, Case]]:
    problem = load_problem(SLUG)
    module = problem.module
    cpu = problem.cases_for(Backend.CPU)
    largest = max(cpu, key=lambda c: module.work(c, module.make_inputs(c, SEED))[0])

    def adhoc(name: str, **params: int) -> Case:
        return Case(name=name, case_set=CaseSet.TESTS, dtype="bfloat16", params=params, seed=SEED)

    return [
        (f"cpu-largest ({largest.name})", largest),
        ("dsa S2=4096 K=64", adhoc("dsa", **DSA)),
        ("dsa S2=8192 K=64", adhoc("dsa_s2x2", **{**DSA, "S2": 8192})),
        ("dsa S2=16384 K=64", adhoc("dsa_s2x4", **{**DSA, "S2": 16384})),
        ("dsa S2=4096 K=128", adhoc("dsa_kx2", **{**DSA, "K": 128})),
    ]


def dense_autograd(case: Case, inputs: dict) -> dict[str, torch.Tensor]:
    """Plain dense masked attention in float64, gradients by autograd.

    A fair dense competitor: the G query heads of a KV head are folded into the rows of one
    matrix product (no copies of k per head), and torch's own softmax; it still materialises
    the [N1, S1, S2] scores, their probabilities and gradients.
    """
    p = case.params
    b, s1, s2, n2 = p["B"], p["S1"], p["S2"], p["N2"]
    g = p["N1"] // n2
    mask = torch.zeros(b, s1, n2, s2 + 1, dtype=torch.bool)
    ids = inputs["sparse_indices"].to(torch.int64)
    valid = torch.cumprod((ids >= 0).to(torch.int8), dim=-1).bool()
    s = torch.arange(s1).view(1, -1, 1, 1)
    thr = torch.full_like(s, s2) if p["sparse_mode"] == 0 else (s + s2 - s1 + 1).clamp(0, s2)
    for r in range(p["block_size"]):
        tok = ids * p["block_size"] + r
        mask.scatter_(3, torch.where(valid & (tok < thr), tok, s2), True)  # column S2 takes the rest
    visible = mask[..., :s2].permute(0, 2, 1, 3).unsqueeze(3).expand(b, n2, s1, g, s2).reshape(b, n2, s1 * g, s2)

    def cat(x: torch.Tensor, y: torch.Tensor | None) -> torch.Tensor:
        return (x if y is None else torch.cat([x, y], dim=-1)).to(torch.float64)

    q = cat(inputs["q"], inputs["q_rope"]).requires_grad_()
    k = cat(inputs["k"], inputs["k_rope"]).requires_grad_()
    v = inputs["v"].to(torch.float64).requires_grad_()
    rows = q.view(b, s1, n2, g, -1).permute(0, 2, 1, 3, 4).reshape(b, n2, s1 * g, -1)
    z = inputs["scale"] * (rows @ k.permute(0, 2, 3, 1))  # [B, N2, S1*G, S2]
    probs = torch.softmax(z.masked_fill(~visible, -math.inf), dim=-1).nan_to_num(0.0)  # blind rows -> 0
    out = (probs @ v.permute(0, 2, 1, 3)).view(b, n2, s1, g, -1).permute(0, 2, 1, 3, 4)
    out.backward(inputs["d_out"].to(torch.float64).view(b, s1, n2, g, -1))
    return {"dq": q.grad, "dk": k.grad, "dv": v.grad}


def _measure(method: str, inputs_path: str, case_json: str) -> None:
    """Child side: load the inputs, run `method` twice (time of the faster run), print JSON."""
    raw = json.loads(case_json)
    case = Case(name=raw["name"], case_set=CaseSet.TESTS, dtype=raw["dtype"], params=raw["params"], seed=SEED)
    torch.set_num_threads(raw["threads"])
    inputs = torch.load(inputs_path, weights_only=True)
    module = load_problem(SLUG).module
    compute = {"oracle": module.oracle, "dense": dense_autograd}[method]
    before_kib = _current_rss_kib()
    wall, cpu = [], []
    for _ in range(raw["repeats"]):
        started, started_cpu = time.perf_counter(), time.process_time()
        compute(case, inputs)
        wall.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"wall_s": min(wall), "cpu_s": min(cpu), "extra_mib": (peak_kib - before_kib) / 1024}))


def _current_rss_kib() -> int:
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * resource.getpagesize() // 1024


def _run_child(method: str, inputs_path: Path, case: Case, repeats: int, threads: int) -> dict:
    raw = {"name": case.name, "dtype": case.dtype, "params": case.params, "repeats": repeats, "threads": threads}
    case_json = json.dumps(raw)
    done = subprocess.run(
        [sys.executable, __file__, "--child", method, str(inputs_path), case_json],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def per_case() -> None:
    """make_inputs (min of 5 calls) and oracle + reference (min of 3) for every CPU case."""
    problem = load_problem(SLUG)
    module = problem.module
    print(f"load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}; ms, best of 5 (inputs) / 3 (oracle)")
    print(f"{'set':10} {'case':26} {'dtype':8} {'MFLOP':>6} | {'inputs wall':>11} {'cpu':>5} | {'oracle+ref cpu':>14}")
    for case in problem.cases_for(Backend.CPU):
        wall, cpu, check = [], [], []
        for i in range(5):
            started, started_cpu = time.perf_counter(), time.process_time()
            inputs = module.make_inputs(case, SEED + i)
            wall.append(time.perf_counter() - started)
            cpu.append(time.process_time() - started_cpu)
        for _ in range(3):
            started_cpu = time.process_time()
            module.oracle(case, inputs)
            module.reference(case, inputs)
            check.append(time.process_time() - started_cpu)
        flops, _ = module.work(case, inputs)
        print(
            f"{case.case_set.value:10} {case.name:26} {case.dtype:8} {flops / 1e6:6.1f} |"
            f" {min(wall) * 1e3:11.1f} {min(cpu) * 1e3:5.1f} | {min(check) * 1e3:14.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-dense-above", type=int, default=16384, help="no dense run when S2 is larger")
    parser.add_argument(
        "--threads", type=int, default=1, help="torch threads for the dense run (the oracle always uses one)"
    )
    parser.add_argument("--per-case", action="store_true", help="time make_inputs and the oracle per CPU case")
    parser.add_argument("--child", nargs=3, metavar=("METHOD", "INPUTS", "CASE"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        _measure(*options.child)
        return
    if options.per_case:
        per_case()
        return
    module = load_problem(SLUG).module
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"torch {torch.__version__}, oracle 1 thread, dense {options.threads}, load average {load}")
    print("times: best of 3 oracle runs, 1 dense run, CPU seconds of the process (robust to other load)")
    print("and wall seconds; MiB: peak RSS above the loaded inputs; x cpu: dense CPU time / oracle CPU time")
    print(
        f"{'case':32} {'pairs':>8} {'in MiB':>6} | {'oracle cpu s':>12} {'wall s':>6} {'MiB':>5} |"
        f" {'dense cpu s':>11} {'wall s':>6} {'MiB':>5} | {'x cpu':>5}"
    )
    with tempfile.TemporaryDirectory(prefix="opjudge-bench-oracle-") as tmp:
        for label, case in _configs():
            inputs = module.make_inputs(case, SEED)
            path = Path(tmp) / f"{case.name}.pt"
            torch.save(inputs, path)
            flops, _ = module.work(case, inputs)
            p = case.params
            pairs = flops / (6 * (p["D"] + p["Dr"]) + 4 * p["D"])
            in_mib = sum(t.numel() * t.element_size() for t in inputs.values() if isinstance(t, torch.Tensor)) / 2**20
            oracle = _run_child("oracle", path, case, repeats=3, threads=1)
            row = f"{label:32} {pairs:8.3g} {in_mib:6.1f} | {oracle['cpu_s']:12.3f} {oracle['wall_s']:6.2f}"
            row += f" {oracle['extra_mib']:5.0f} |"
            if case.params["S2"] <= options.skip_dense_above and "K=128" not in label:
                dense = _run_child("dense", path, case, repeats=1, threads=options.threads)
                speedup = dense["cpu_s"] / oracle["cpu_s"]
                row += f" {dense['cpu_s']:11.2f} {dense['wall_s']:6.2f} {dense['extra_mib']:5.0f} | {speedup:5.1f}"
            print(row, flush=True)


if __name__ == "__main__":
    main()
