"""Machine review finds a renamed copy between two teams, not an independent
kernel, with the baseline subtracted; decisions per pair are audited and survive a new job."""

from __future__ import annotations

from typing import Any

import pytest

from api.store.audit import list_audit
from api.store.jobs import JobKind, get_job, start_job
from api.store.models import Submission
from api.store.similarity import Decision, decide_pair, list_pairs
from api.store.submissions import create_submission
from api.store.types import utcnow
from judge.backends import Backend
from judge.verdict import Verdict
from tests.workers.conftest import BASELINE
from workers.context import WorkerContext
from workers.organiser_jobs import run_organiser_job
from workers.similarity_job import GUARANTEE_T

pytest.importorskip("copydetect")

ORIGINAL = """
static void blocked_pass(const float* in, float* out, long count) {
    const long block = 64;
    for (long start = 0; start < count; start += block) {
        long stop = start + block < count ? start + block : count;
        float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (long i = start; i + 8 <= stop; i += 8) {
            for (int lane = 0; lane < 8; ++lane) {
                float v = (in[i + lane] + 1.0f) * 2.0f;
                acc[lane] = v > 0.0f ? v : 0.0f;
                out[i + lane] = acc[lane];
            }
        }
        for (long i = stop - (stop - start) % 8; i < stop; ++i) {
            float v = (in[i] + 1.0f) * 2.0f;
            out[i] = v > 0.0f ? v : 0.0f;
        }
    }
}
"""
# The same code, every name changed, comments and spacing added: what a copier does.
RENAMED = """
// our own fast path
static void fast_path(const float* src, float* dst, long total)
{
    const long chunk = 64;   // tuned
    for (long first = 0; first < total; first += chunk) {
        long last = first + chunk < total ? first + chunk : total;
        float keep[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (long j = first; j + 8 <= last; j += 8) {
            for (int k = 0; k < 8; ++k) {
                float t = (src[j + k] + 1.0f) * 2.0f;
                keep[k] = t > 0.0f ? t : 0.0f;
                dst[j + k] = keep[k];
            }
        }
        for (long j = last - (last - first) % 8; j < last; ++j) {
            float t = (src[j] + 1.0f) * 2.0f;
            dst[j] = t > 0.0f ? t : 0.0f;
        }
    }
}
"""
INDEPENDENT = """
static int relu_scalar(const float* x, float* y, long n) {
    if (n < 0) return 1;
    long i = 0;
    while (i < n) {
        const float shifted = x[i] + 1.0f;
        const float doubled = shifted + shifted;
        y[i] = doubled < 0.0f ? 0.0f : doubled;
        i++;
    }
    return 0;
}
"""


def _judged(ctx: WorkerContext, team_id: int, extra: str, score: float) -> int:
    with ctx.db.session() as session:
        created = create_submission(session, team_id=team_id, problem="add_mul_relu", backend=Backend.CPU,
                                    files=[("kernel.cpp", BASELINE.read_bytes() + extra.encode())],
                                    queue="judge.cpu", now=utcnow())  # fmt: skip
        row = session.get_one(Submission, created.submission_id)
        row.verdict, row.score = Verdict.AC, score  # as if judged: machine review reads judged submissions
        session.commit()
        return created.submission_id


def _job(ctx: WorkerContext, **params: Any) -> dict[str, Any]:
    with ctx.db.session() as session:
        job = start_job(session, competition="demo", kind=JobKind.SIMILARITY, params=params, actor=None, now=utcnow())
    assert run_organiser_job(ctx, job.id) == "done"
    with ctx.db.session() as session:
        return get_job(session, job_id=job.id).result


def test_a_renamed_copy_is_found_and_an_independent_kernel_is_not(ctx: WorkerContext, demo) -> None:  # noqa: ANN001
    alpha = _judged(ctx, 1, ORIGINAL, 120.0)
    bravo = _judged(ctx, 2, RENAMED, 118.0)
    charlie = _judged(ctx, 3, INDEPENDENT, 90.0)
    _judged(ctx, 3, "", 80.0)  # charlie's latest: the baseline as it is, all boilerplate
    result = _job(ctx, threshold=0.5)
    assert result["documents"] == 4 and result["pairs"] >= 1
    with ctx.db.session() as session:
        pairs = list_pairs(session, competition="demo", minimum=0.5)
        found = {(p.submission_a, p.submission_b): p for p in pairs}
        assert (alpha, bravo) in found and found[(alpha, bravo)].similarity >= 0.8
        assert not any(charlie in key for key in found)
        regions = found[(alpha, bravo)].regions
        assert regions["a"] and all(name == "kernel.cpp" and start < end for name, start, end in regions["a"])
        # Nothing of the baseline matches, except a k-gram or two across its end and the added code's start
        # (copydetect hashes with Python's salted hash(): which k-grams winnowing keeps varies by process).
        base = len(BASELINE.read_bytes())
        assert sum(max(0, min(end, base) - start) for _n, start, end in regions["a"]) < 4 * GUARANTEE_T
        assert max(end for _n, _s, end in regions["a"]) > base + len(ORIGINAL) // 2
        pair = found[(alpha, bravo)]
        with pytest.raises(Exception, match="say why"):
            decide_pair(session, pair_id=pair.id, decision=Decision.FLAGGED, note=" ", actor=None, now=utcnow())
        session.rollback()
        decided = decide_pair(session, pair_id=pair.id, decision=Decision.FLAGGED, note="same blocking, renamed",
                              actor=None, now=utcnow())  # fmt: skip
        assert decided.decision is Decision.FLAGGED
        assert any(e.action == "similarity.decide" for e in list_audit(session))
    _job(ctx, threshold=0.5)  # a later job refreshes the pair and keeps the decision
    with ctx.db.session() as session:
        again = {(p.submission_a, p.submission_b): p for p in list_pairs(session, competition="demo")}
        assert again[(alpha, bravo)].decision is Decision.FLAGGED and again[(alpha, bravo)].id == pair.id
