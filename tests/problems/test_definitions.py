"""The problem packages as data: headers, loader, case sets and their coverage of the spec."""

from __future__ import annotations

import math
import re
import tomllib
from pathlib import Path

import pytest

from judge.backends import Backend, CaseSet
from judge.problem import DEFAULT_PROBLEMS_DIR, list_problems, load_problem

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO.parent / "shared" / "spec" / "sparse_flash_attention_grad.md"
SFAG = "sparse_flash_attention_grad"
SFAG_FIELDS = {"B", "S1", "S2", "N1", "N2", "D", "Dr", "K", "block_size", "sparse_mode"}


def _struct_fields(header: str) -> list[str]:
    """Field names of `typedef struct kernel_args { ... }`, in order (comments stripped)."""
    body = re.search(r"typedef struct kernel_args \{(.*?)\} kernel_args;", header, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    names = []
    for decl in body.split(";"):
        for part in decl.split(","):
            part = part.strip()
            if part:
                names.append(re.search(r"(\w+)\s*$", part).group(1))
    return names


def test_sfag_header_is_the_spec_block_byte_for_byte():
    if not SPEC.is_file():
        pytest.skip(f"spec not found at {SPEC} (the shared/ folder sits beside the repo)")
    block = re.search(r"```c\n(.*?)```", SPEC.read_text(), re.S).group(1)
    assert block.endswith("\n")
    shipped = (DEFAULT_PROBLEMS_DIR / SFAG / "sparse_flash_attention_grad.h").read_bytes()
    assert shipped == block.encode()


def test_add_mul_relu_header_matches_the_main_abi_style():
    main = (DEFAULT_PROBLEMS_DIR / SFAG / "sparse_flash_attention_grad.h").read_text()
    smoke = (DEFAULT_PROBLEMS_DIR / "add_mul_relu" / "add_mul_relu.h").read_text()
    assert _struct_fields(smoke) == ["n", "dtype", "x", "y", "workspace", "workspace_bytes", "stream"]
    for line in (
        "enum { KERNEL_F32 = 0, KERNEL_F16 = 1, KERNEL_BF16 = 2 };",
        "int64_t kernel_workspace_bytes(const kernel_args *args);",
        "int kernel_run(const kernel_args *args);",
        '#ifdef __cplusplus\nextern "C" {\n#endif',
    ):
        assert line in main and line in smoke, line
    assert "#ifndef ADD_MUL_RELU_H\n#define ADD_MUL_RELU_H\n" in smoke
    assert smoke.endswith("#endif\n")


def test_loader_sees_both_problems_and_their_sets():
    assert {SFAG, "add_mul_relu"} <= set(list_problems())
    for slug in (SFAG, "add_mul_relu"):
        problem = load_problem(slug)
        assert problem.backends == (Backend.CPU, Backend.CUDA, Backend.NPU)
        assert problem.header.is_file()
        assert (problem.root / "statement.md").is_file()
        assert problem.baselines[Backend.CPU].name == "baseline.cpp"
        assert problem.baselines[Backend.CUDA].name == "baseline.cu"
        for backend in problem.backends:
            for case_set in CaseSet:
                assert problem.cases_for(backend, [case_set]), (slug, backend, case_set)
    sfag = load_problem(SFAG)
    counts = {s: len(sfag.cases_for(Backend.CPU, [s])) for s in CaseSet}
    assert counts[CaseSet.TESTS] >= 10 and counts[CaseSet.BENCHMARKS] >= 4 and counts[CaseSet.PRIVATE] >= 4


@pytest.mark.parametrize("slug", [SFAG, "add_mul_relu"])
def test_cases_use_abi_names_and_private_cases_have_no_seed(slug):
    problem = load_problem(slug)
    fields = set(_struct_fields(problem.header.read_text()))
    raw = tomllib.loads((problem.root / "problem.toml").read_text())
    names = set()
    for backend in problem.backends:
        for case in problem.cases_for(backend):
            assert set(case.params) - {"scale"} <= fields, case.name
            assert case.dtype in ("float32", "float16", "bfloat16")
            assert set(case.flags) <= problem.module.FLAGS if slug == SFAG else not case.flags
            names.add((backend, case.name))
        for entry in raw["cases"][backend.value]["private"]:
            assert "seed" not in entry, f"{backend} private case {entry['name']} must take its seed from the secret"
    total = sum(len(problem.cases_for(b)) for b in problem.backends)
    assert len(names) == total  # names are unique per backend
    if slug == SFAG:
        for case in problem.cases_for(Backend.CPU):
            assert set(case.params) - {"scale"} == SFAG_FIELDS, case.name


def _nblk(p, s):
    thr = p["S2"] if p["sparse_mode"] == 0 else min(max(p["S2"] - p["S1"] + s + 1, 0), p["S2"])
    return math.ceil(thr / p["block_size"])


def test_cpu_sets_cover_every_item_of_the_spec_cases_section():
    problem = load_problem(SFAG)
    cases = problem.cases_for(Backend.CPU)
    tests = problem.cases_for(Backend.CPU, [CaseSet.TESTS])
    ps = [c.params for c in cases]
    covered = {
        "sparse_mode 0": any(p["sparse_mode"] == 0 for p in ps),
        "sparse_mode 3": any(p["sparse_mode"] == 3 for p in ps),
        "S1 < S2": any(p["S1"] < p["S2"] for p in ps),
        "S1 = S2": any(p["S1"] == p["S2"] for p in ps),
        "S1 > S2 with rows that see nothing": any(p["S1"] > p["S2"] and p["sparse_mode"] == 3 for p in ps),
        "bs 1": any(p["block_size"] == 1 for p in ps),
        "bs >= 16": any(p["block_size"] >= 16 for p in ps),
        "K above every nblk": any(p["K"] >= max(_nblk(p, s) for s in range(p["S1"])) for p in ps),
        "K much smaller": any(4 * p["K"] <= max(_nblk(p, s) for s in range(p["S1"])) for p in ps),
        "cut-short last block": any(p["block_size"] > 1 and p["S2"] % p["block_size"] for p in ps),
        "Dr 0": any(p["Dr"] == 0 for p in ps),
        "Dr 64": any(p["Dr"] == 64 for p in ps),
        "B > 1": any(p["B"] > 1 for p in ps),
        "N1 1": any(p["N1"] == 1 for p in ps),
        "N1 >= 16": any(p["N1"] >= 16 for p in ps),
        "N2 2 in tests": any(c.params["N2"] == 2 for c in tests),
        "ragged_topk": any("ragged_topk" in c.flags for c in cases),
        "contract_indices in tests": any("contract_indices" in c.flags for c in tests),
        "value_is_key in tests": any("value_is_key" in c.flags for c in tests),
        "float32": any(c.dtype == "float32" for c in cases),
        "bfloat16": any(c.dtype == "bfloat16" for c in cases),
        "float16": any(c.dtype == "float16" for c in cases),
        "D 512 in every case (the spec's official size)": all(p["D"] == 512 for p in ps),
    }
    assert [item for item, ok in covered.items() if not ok] == []
    for p in ps:  # the spec's CPU limits and the ABI's constraints
        assert p["S1"] <= 256 and p["S2"] <= 1024 and p["block_size"] in (1, 8, 16, 32, 64)
        assert p["N1"] % p["N2"] == 0 and 1 <= p["K"] <= 8192 and p["Dr"] in (0, 64)


@pytest.mark.parametrize("backend", list(Backend), ids=[f"{b.value}_cases" for b in Backend])
def test_every_set_has_contract_indices_cases(sfag_problem, backend):
    # Spec "Cases": contract_indices cases in every set (tests, benchmarks, private), every backend.
    for case_set in CaseSet:
        flagged = [c for c in sfag_problem.cases_for(backend, [case_set]) if "contract_indices" in c.flags]
        assert flagged, (backend, case_set)


def _row_freedoms(p, row, s):
    """What one generated row uses of the freedom "Which keys a query token sees" gives."""
    thr = p["S2"] if p["sparse_mode"] == 0 else min(max(p["S2"] - p["S1"] + s + 1, 0), p["S2"])
    nblk, total = math.ceil(thr / p["block_size"]), math.ceil(p["S2"] / p["block_size"])
    end = row.index(-1) if -1 in row else len(row)
    valid, junk = row[:end], row[end + 1 :]
    cut = thr % p["block_size"] != 0 and thr < p["S2"] and nblk - 1 in valid[:-1]
    return {
        "ids in random order": valid != sorted(valid),
        "block nblk-1 left out": nblk >= 2 and nblk - 1 not in valid,
        "a list of K entries (no -1)": end == len(row),
        "a cut-short block not last in its list": cut,
        "junk: a listed id": any(j in valid for j in junk),
        "junk: an unlisted id in [0, nblk)": any(0 <= j < nblk and j not in valid for j in junk),
        "junk: an id past nblk in the key buffer": any(nblk <= j < total for j in junk),
        "junk: an id past the key buffer": any(j >= total for j in junk),
        "junk: a negative value other than -1": any(j < -1 for j in junk),
        "junk in a row that sees nothing": nblk == 0 and any(j != -1 for j in junk),
    }


def test_cpu_contract_cases_use_every_freedom_of_the_contract(sfag_problem, sfag):
    # The fixture kernels tests/submissions/.../cpu/wrong_* with wrong_only_with = "contract_indices"
    # rely on these; each must be broken by some row of the tests set (which they are judged on).
    seen: dict[str, bool] = {}
    modes = set()
    for case in sfag_problem.cases_for(Backend.CPU, [CaseSet.TESTS]):
        if "contract_indices" not in case.flags:
            continue
        p = case.params
        idx = sfag.make_inputs(case, seed=1)["sparse_indices"]
        for b in range(p["B"]):
            for s in range(p["S1"]):
                for n2 in range(p["N2"]):
                    for what, used in _row_freedoms(p, idx[b, s, n2].tolist(), s).items():
                        seen[what] = seen.get(what, False) or used
        seen["with ragged_topk"] = seen.get("with ragged_topk", False) or "ragged_topk" in case.flags
        modes.add(p["sparse_mode"])
    seen["sparse_mode 0 and 3"] = modes == {0, 3}
    assert len(seen) == 12 and [what for what, ok in seen.items() if not ok] == []


def test_cpu_timed_cases_are_sized_for_a_one_minute_judge(sfag_problem, sfag):
    # 30-150 MFLOP each: 5-30 ms for the OpenMP baseline on 2 cores (docs/benchmarks.md).
    for case in sfag_problem.cases_for(Backend.CPU, [CaseSet.BENCHMARKS, CaseSet.PRIVATE]):
        flops, _ = sfag.work(case, sfag.make_inputs(case, seed=1))
        assert 30e6 <= flops <= 150e6, (case.name, flops)


# Explicit ids: a bare "cuda" id would read as the cuda marker in tests/conftest.py and skip.
@pytest.mark.parametrize("backend", [Backend.CUDA, Backend.NPU], ids=["cuda_cases", "npu_cases"])
def test_device_sets_have_dsa_sizes(sfag_problem, backend):
    cases = sfag_problem.cases_for(backend)
    for case in cases:
        p = case.params
        assert p["D"] == 512 and p["Dr"] in (0, 64) and p["N1"] <= 128 and p["S2"] <= 8192, case.name
    timed = [c for c in cases if c.case_set.timed]
    assert all(c.dtype in ("bfloat16", "float16") for c in timed)
    assert any(c.params["K"] == 2048 for c in timed) and any(c.params["N1"] == 128 for c in timed)
    assert any(c.params["S2"] == 8192 for c in timed)


def test_output_specs_agree_with_the_definition(sfag_problem, sfag):
    for case in sfag_problem.cases_for(Backend.CPU, [CaseSet.TESTS]):
        inputs = sfag.make_inputs(case, seed=1)
        symbols = dict(case.params, G=case.params["N1"] // case.params["N2"])
        specs = sfag.output_specs(case, inputs)
        for tensor in sfag_problem.outputs:
            absent = tensor.optional_when == "Dr == 0" and case.params["Dr"] == 0
            assert (tensor.name not in specs) == absent
            if not absent:
                assert specs[tensor.name][0] == tuple(symbols[s] for s in tensor.shape)
        for tensor in sfag_problem.inputs:
            value = inputs[tensor.name]
            if tensor.optional_when == "Dr == 0" and case.params["Dr"] == 0:
                assert value is None
            else:
                assert tuple(value.shape) == tuple(symbols[s] for s in tensor.shape), tensor.name


@pytest.mark.parametrize("slug", [SFAG, "add_mul_relu"])
def test_statement_shows_the_shipped_header(slug):
    problem = load_problem(slug)
    block = re.search(r"```c\n(.*?)```", (problem.root / "statement.md").read_text(), re.S).group(1)
    assert block.encode() == problem.header.read_bytes()


def test_a_problem_split_in_modules_loads_and_two_copies_keep_their_own(tmp_path):
    # problem.py is loaded as its folder's package: a sibling module imports relatively, is in the
    # definition hash, and an edited copy of the problem elsewhere gets its own sibling.
    def copy(folder: Path, factor: str) -> Path:
        root = folder / "add_mul_relu"
        root.mkdir(parents=True)
        for name in ("problem.toml", "add_mul_relu.h", "statement.md"):
            (root / name).write_bytes((DEFAULT_PROBLEMS_DIR / "add_mul_relu" / name).read_bytes())
        text = (DEFAULT_PROBLEMS_DIR / "add_mul_relu" / "problem.py").read_text()
        (root / "problem.py").write_text(text + "\nfrom .extra import FACTOR  # noqa: E402\n")
        (root / "extra.py").write_text(f"FACTOR = {factor}\n")
        return folder

    first = load_problem("add_mul_relu", problems_dir=copy(tmp_path / "a", "2"))
    second = load_problem("add_mul_relu", problems_dir=copy(tmp_path / "b", "3"))
    assert (first.module.FACTOR, second.module.FACTOR) == (2, 3)
    assert first.definition_hash != second.definition_hash  # the sibling module is in the hash
    assert load_problem("add_mul_relu").module.__name__ not in (first.module.__name__, second.module.__name__)
