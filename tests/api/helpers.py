"""Builders for results and uploads used across the API tests."""

from __future__ import annotations

from typing import Any

from httpx import Response

from judge.backends import Backend, CaseSet
from judge.conditions import RunConditions
from judge.results import CaseResult, JudgeResult, TimingStats
from judge.verdict import Verdict

KERNEL = b'#include "add_mul_relu.h"\nint kernel_run(void) { return 0; }\n'


def result(
    problem: str = "add_mul_relu",
    verdict: Verdict = Verdict.AC,
    *,
    benchmarks: dict[str, float] | None = None,
    private: dict[str, float] | None = None,
    failed: tuple[str, ...] = (),
) -> JudgeResult:
    """A JudgeResult with the given ratio per timed case; `failed` cases did not pass."""
    cases = [CaseResult(name="t1", case_set=CaseSet.TESTS, passed="t1" not in failed)]
    for case_set, ratios in ((CaseSet.BENCHMARKS, benchmarks or {}), (CaseSet.PRIVATE, private or {})):
        for name, ratio in ratios.items():
            passed = name not in failed
            cases.append(CaseResult(
                name=name, case_set=case_set, passed=passed, verdict=Verdict.AC if passed else Verdict.WA,
                timing=TimingStats(1000.0 * ratio, 1000.0 * ratio, 990.0 * ratio, 5.0, 50),
                baseline_timing=TimingStats(1000.0, 1000.0, 990.0, 5.0, 50), ratio=ratio, gflops=1.5, flops=3e6,
                sizes={"n": 1024}, baseline="baseline kernel",
            ))  # fmt: skip
    return JudgeResult(
        verdict=verdict, problem=problem, backend=Backend.CPU, message="all cases passed" if verdict is Verdict.AC
        else "case b1 failed", compile_log="g++ ok", cases=cases,
        host={"host": "box"}, conditions=RunConditions(toolchain="g++ 12"),
    )  # fmt: skip


def upload(client: Any, headers: dict[str, str], *, problem: str = "add_mul_relu", backend: str = "cpu",
           files: list[tuple[str, bytes]] | None = None) -> Response:  # fmt: skip
    """POST a submission the way curl -F would."""
    parts = [("files", (name, content, "text/x-c++src")) for name, content in (files or [("kernel.cpp", KERNEL)])]
    return client.post("/api/v1/submissions", headers=headers, data={"problem": problem, "backend": backend},
                       files=parts)  # fmt: skip



def stored_id(session: Any, public_id: str) -> int:
    """The database id of the submission a team's answer names by its public id (store functions take it).

    Ends the read (a rollback: call it with nothing uncommitted), so SQLite lets the app write next."""
    from api.store.submission_refs import submission_id_of  # noqa: PLC0415 - keeps this module's imports light

    found = submission_id_of(session, public_id)
    session.rollback()
    return found


def judge_run_id(session: Any, public_id: str) -> int:
    """The database id of the first (judge) run of the submission a team's answer names by its public id."""
    from sqlalchemy import func, select  # noqa: PLC0415

    from api.store.models import Run  # noqa: PLC0415

    found = int(session.scalar(select(func.min(Run.id)).where(Run.submission_id == stored_id(session, public_id))))
    session.rollback()
    return found


def public_id(session: Any, submission_id: int) -> str:
    """The public id teams see for the submission stored under `submission_id` (ends the read, as above)."""
    from api.store.models import Submission  # noqa: PLC0415

    found = str(session.get_one(Submission, submission_id).public_id)
    session.rollback()
    return found
