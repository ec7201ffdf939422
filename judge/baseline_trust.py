"""Trusting a baseline only once the oracle has seen it right, and saying which baseline timed a case.

docs/rules.md times the problem's baseline beside the submission, and the score is their ratio. A
baseline that computes something else (a vendor operator outside its contract, a broken build of
the baseline kernel) would make that ratio meaningless, so every baseline's outputs are checked
against the oracle with the same pass rule as a submission's, on its first call of each case. A
baseline that fails is never used to score: the case is IE, and the worker's log has the reason
(a judge's fault, never the team's). Which baseline timed a case (the vendor operator or the baseline kernel) is
recorded with the case, for the report and the CSV export.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from judge.call_check import CallCheck
from judge.problem import Case
from judge.runner.calls import CallOutcome
from judge.verdict import Verdict

log = logging.getLogger(__name__)

VENDOR_MODULE = "vendor_baseline.py"  # judge/tracks/npu/baseline.py's seam, read here without its device
BASELINE_KERNEL = "baseline kernel"

Verify = Callable[[Case, int, CallOutcome], CallCheck]


def first_call_verifier(verify: Verify, names: Callable[[Case], str]) -> Verify:
    """A Verify for the baseline: the oracle's check of its first call of each case; AC on later calls.

    `verify` fetches the baseline's outputs and checks them; `names` says which baseline it is.
    A failure is IE with a reason naming the case (never its sizes: a private case's are hidden)."""
    seen: set[tuple[str, str]] = set()

    def check(case: Case, seed: int, outcome: CallOutcome) -> CallCheck:
        key = (case.case_set.value, case.name)
        if key in seen:
            return CallCheck(Verdict.AC)
        seen.add(key)
        result = verify(case, seed, outcome)
        if result.verdict is Verdict.AC:
            return result
        name = names(case)
        log.error("the baseline %s fails the pass rule on case %s (%s): %s; it is not used to score",
                  name, case.name, case.describe(), result.message)
        return CallCheck(Verdict.IE, f"the baseline ({name}) fails the pass rule on case {case.name}, so it "
                                     "cannot score this run: the judge's fault; the worker's log has the details")

    return check


class BaselineNames:
    """Which baseline times each case: the vendor operator where the runner has one and the case is
    inside its contract (the adapter's own `unsupported_reason`), else the baseline kernel."""

    def __init__(self, python_baseline: str, adapter_dir: Path, vendor_release: tuple[str, str] | None = None) -> None:
        self.python_baseline = python_baseline  # the name the baseline's child reported, "" for none
        # The adapter's contract is per vendor release (its CONTRACTS): the track's `vendor_release` of the
        # worker's runtime options, (product, version); None: the track names none.
        self.vendor_release = vendor_release
        self._reason: Callable[..., str | None] | None = None
        path = adapter_dir / VENDOR_MODULE
        if python_baseline and path.is_file():
            self._reason = _load(path).unsupported_reason

    def reason(self, case: Case) -> str | None:
        """Why the vendor operator does not time this case (None: it does)."""
        if self._reason is None:
            return "no vendor operator on this worker" if not self.python_baseline else "no adapter"
        # The adapters' keyword (reference_kernels/<problem>/<backend>/vendor_baseline.py) is the version's.
        version = self.vendor_release[1] if self.vendor_release else None
        return self._reason(case.params, case.dtype, case.flags, cann_version=version)

    def __call__(self, case: Case) -> str:
        return self.python_baseline if self.reason(case) is None else BASELINE_KERNEL


def _load(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location("opjudge_vendor_names", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
