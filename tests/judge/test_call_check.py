"""OracleChecker: regenerates the call's inputs, runs the oracle with its thread count, applies the rule."""

from __future__ import annotations

import pytest
import torch

from judge.backends import Backend
from judge.call_check import OracleChecker
from judge.fingerprint import fingerprint
from judge.problem import load_problem, make_inputs
from judge.runner.calls import CallOutcome
from judge.verdict import Verdict


@pytest.mark.parametrize("threads", [1, 2])
def test_the_oracle_runs_with_the_checkers_threads(threads: int, monkeypatch: pytest.MonkeyPatch) -> None:
    problem = load_problem("add_mul_relu")
    case = next(c for c in problem.cases_for(Backend.CPU) if c.dtype == "float32")
    seen: list[int] = []
    real_oracle = problem.module.oracle

    def oracle(case, inputs):  # type: ignore[no-untyped-def]
        seen.append(torch.get_num_threads())
        return real_oracle(case, inputs)

    monkeypatch.setattr(problem.module, "oracle", oracle)
    before = torch.get_num_threads()
    checker = OracleChecker(problem, oracle_threads=threads)
    inputs = make_inputs(problem.module, case, 7, "cpu")
    digests = {k: fingerprint(v) for k, v in inputs.items() if isinstance(v, torch.Tensor)}
    outcome = CallOutcome(rc=0, elapsed_ns=1, digest_before=digests, digest_after=digests, new_threads=0,
                          late_writes=[])
    truth = real_oracle(case, inputs)
    right = {"y": truth["y"].to(torch.float32)}
    assert checker.check(case, 7, outcome, right, cacheable=False).verdict is Verdict.AC
    assert seen == [threads] and torch.get_num_threads() == before  # restored afterwards
    wrong = {"y": right["y"] + 1.0}
    assert checker.check(case, 7, outcome, wrong, cacheable=False).verdict is Verdict.WA
    tampered = CallOutcome(rc=0, elapsed_ns=1, digest_before={"x": "forged"}, digest_after={}, new_threads=0,
                           late_writes=[])
    ie = checker.check(case, 7, tampered, right, cacheable=False)
    assert ie.verdict is Verdict.IE and "inputs x differ" in ie.message
    # After a kernel_run in the same child, on CPU-made inputs, only the kernel can have parted them.
    sv = checker.check(case, 7, tampered, right, cacheable=False, after_kernel=True)
    assert sv.verdict is Verdict.SV and "after the kernel had run" in sv.message
    # Device generation is unverified here: a mismatch there stays the judge's failure.
    on_device = OracleChecker(problem, oracle_threads=threads, generation_device="cuda")
    on_device._last = ((case.name, case.case_set, 7), inputs)  # the inputs as made (no GPU here)
    assert on_device.check(case, 7, tampered, right, cacheable=False, after_kernel=True).verdict is Verdict.IE


def test_a_prefetched_truth_is_the_one_checked_and_only_for_its_own_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """The correctness stage starts the oracle beside the child's call (pipeline._check_case): the
    check must use that truth for that call, and compute afresh for any other seed."""
    problem = load_problem("add_mul_relu")
    case = next(c for c in problem.cases_for(Backend.CPU) if c.dtype == "float32")
    real_oracle = problem.module.oracle
    seeds_seen: list[float] = []

    def oracle(case, inputs):  # type: ignore[no-untyped-def]
        seeds_seen.append(float(inputs["x"].reshape(-1)[0]))
        return real_oracle(case, inputs)

    monkeypatch.setattr(problem.module, "oracle", oracle)
    checker = OracleChecker(problem)
    try:
        for seed in (7, 8):
            inputs = make_inputs(problem.module, case, seed, "cpu")
            digests = {k: fingerprint(v) for k, v in inputs.items() if isinstance(v, torch.Tensor)}
            outcome = CallOutcome(rc=0, elapsed_ns=1, digest_before=digests, digest_after=digests, new_threads=0,
                                  late_writes=[])
            right = {"y": real_oracle(case, inputs)["y"].to(torch.float32)}
            checker.prefetch(case, 7, cacheable=False)  # always seed 7: the check of seed 8 must not use it
            assert checker.check(case, seed, outcome, right, cacheable=False).verdict is Verdict.AC
            assert checker.check(case, seed, outcome, {"y": right["y"] + 1.0}, cacheable=False).verdict is Verdict.WA
        checker.close()  # the unused prefetch of seed 7 has run by now
        first_7 = float(make_inputs(problem.module, case, 7, "cpu")["x"].reshape(-1)[0])
        first_8 = float(make_inputs(problem.module, case, 8, "cpu")["x"].reshape(-1)[0])
        # seed 7: the prefetch, then the WA check afresh; seed 8: a prefetch of 7 (run in the background,
        # when it runs) left unused, and two of 8 made afresh
        assert sorted(seeds_seen) == sorted([first_7, first_7, first_7, first_8, first_8])
    finally:
        checker.close()
    # On a device the child's buffers fill its memory during the call: nothing is started beside it.
    on_device = OracleChecker(problem, oracle_device="cuda")
    on_device.prefetch(case, 7, cacheable=False)
    assert on_device._pool is None and on_device._ahead is None


def _sfag_call(case_name: str, seed: int):  # type: ignore[no-untyped-def]
    problem = load_problem("sparse_flash_attention_grad")
    case = next(c for c in problem.cases_for(Backend.CPU) if c.name == case_name)
    inputs = make_inputs(problem.module, case, seed, "cpu")
    digests = {k: fingerprint(v) for k, v in inputs.items() if isinstance(v, torch.Tensor)}
    outcome = CallOutcome(rc=0, elapsed_ns=1, digest_before=digests, digest_after=digests, new_threads=0,
                          late_writes=[])
    return problem, case, inputs, outcome


def test_r_runs_beside_g_on_one_thread_each_and_gives_the_same_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    """A one-thread CPU oracle on a host of two cores or more: R on the checker's side thread while G runs
    on the calling one (both children are idle during a check), each with one torch thread."""
    import threading

    problem, case, inputs, outcome = _sfag_call("t02_mode0_small_k_bs16", 5)  # bfloat16: G and R
    module = problem.module
    real_oracle, real_reference = module.oracle, module.reference
    want_g, want_r = real_oracle(case, inputs), real_reference(case, inputs)
    seen: dict[str, tuple[int, int]] = {}

    def oracle(case, inputs):  # type: ignore[no-untyped-def]
        seen["G"] = (threading.get_ident(), torch.get_num_threads())
        return real_oracle(case, inputs)

    def reference(case, inputs):  # type: ignore[no-untyped-def]
        seen["R"] = (threading.get_ident(), torch.get_num_threads())
        return real_reference(case, inputs)

    monkeypatch.setattr(module, "oracle", oracle)
    monkeypatch.setattr(module, "reference", reference)
    monkeypatch.setattr("judge.call_check.os.sched_getaffinity", lambda pid: {0, 1})
    before = torch.get_num_threads()
    checker = OracleChecker(problem, oracle_threads=1)
    try:
        g, r = checker._truth(case, 5, inputs, cacheable=False)
        assert seen["G"] == (threading.get_ident(), 1) and seen["R"][1] == 1
        assert seen["R"][0] != threading.get_ident()
        assert all(torch.equal(g[k], want_g[k]) for k in want_g) and all(torch.equal(r[k], want_r[k]) for k in want_r)
        assert checker.check(case, 5, outcome, want_r, cacheable=False).verdict is Verdict.AC
        assert torch.get_num_threads() == before
    finally:
        checker.close()
    # One core, or an oracle given several threads: G then R on the calling thread, as before.
    monkeypatch.setattr("judge.call_check.os.sched_getaffinity", lambda pid: {0})
    alone = OracleChecker(problem, oracle_threads=1)
    alone._truth(case, 5, inputs, cacheable=False)
    assert alone._side is None and seen["R"][0] == threading.get_ident()
    assert OracleChecker(problem, oracle_threads=2)._side is None


def test_a_failing_oracle_waits_for_the_reference_beside_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing of a check may run on into the next timed call: G's error leaves only once R is done."""
    import time

    problem, case, inputs, _ = _sfag_call("t02_mode0_small_k_bs16", 5)
    finished: list[bool] = []

    def reference(case, inputs):  # type: ignore[no-untyped-def]
        time.sleep(0.2)
        finished.append(True)

    def oracle(case, inputs):  # type: ignore[no-untyped-def]
        raise RuntimeError("oracle failed")

    monkeypatch.setattr(problem.module, "oracle", oracle)
    monkeypatch.setattr(problem.module, "reference", reference)
    monkeypatch.setattr("judge.call_check.os.sched_getaffinity", lambda pid: {0, 1})
    checker = OracleChecker(problem, oracle_threads=1)
    try:
        with pytest.raises(RuntimeError, match="oracle failed"):
            checker._truth(case, 5, inputs, cacheable=False)
        assert finished == [True]
    finally:
        checker.close()
