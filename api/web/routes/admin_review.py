"""Organisers' tools (docs/organisers.md): the final ranking's snapshot and its audited recomputation,
and organiser jobs run by a worker (re-audit under today's policy, machine review)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import FileResponse
from starlette.background import BackgroundTask

from api.store.data_release import build_release
from api.store.errors import InvalidInputError
from api.store.final_ranking import final_state, recompute_final
from api.store.jobs import JobKind, JobStatus, get_job, list_jobs, start_job
from api.store.similarity import Decision, decide_pair, get_pair, list_pairs, pair_sources
from api.web.deps import AdminDep, DispatcherDep, NowDep, SessionDep
from api.web.job_dispatch import dispatch_job
from api.web.schemas.bounds import JobId, PairId
from api.web.schemas.organisers import (
    FinalStatePublic,
    JobPublic,
    PairDecision,
    PairDetailPublic,
    PairPublic,
    ReauditRequest,
    RecomputePublic,
    RecomputeRequest,
    SimilarityRequest,
    SourceFilePublic,
)
from judge.modes import RunMode

router = APIRouter(prefix="/api/v1/admin", tags=["organisers"])


@router.get("/competitions/{slug}/final", response_model=FinalStatePublic)
def read_final(slug: str, _admin: AdminDep, session: SessionDep, now: NowDep) -> FinalStatePublic:
    """Whether the final ranking is published, the snapshot shown, and the earlier ones."""
    return FinalStatePublic.model_validate(final_state(session, competition=slug, now=now))


@router.post("/competitions/{slug}/final/recompute", response_model=RecomputePublic)
def recompute(slug: str, body: RecomputeRequest, admin: AdminDep, session: SessionDep, now: NowDep) -> RecomputePublic:
    """Replace the snapshot by the ranking the live standings give now; the answer (and the audit
    entry) lists what changed. `dry_run` only lists it. Needs `override` and a `reason` before the end."""
    done = recompute_final(session, competition=slug, actor=admin, now=now, reason=body.reason,
                           override=body.override, dry_run=body.dry_run)  # fmt: skip
    return RecomputePublic.model_validate(done)


@router.post("/competitions/{slug}/reaudit", status_code=202, response_model=JobPublic)
def reaudit(slug: str, body: ReauditRequest, admin: AdminDep, session: SessionDep, dispatcher: DispatcherDep,
            now: NowDep) -> JobPublic:  # fmt: skip
    """Rescan every stored submission's sources under today's policy (`rebuild`: also rebuild and
    recheck the libraries), in the background; the job's result lists what the policy refuses now,
    with the rule and the place. Nothing is disqualified or rejudged by it."""
    job = start_job(session, competition=slug, kind=JobKind.REAUDIT, params={"rebuild": body.rebuild,
                    "queue": body.queue}, actor=admin, now=now)  # fmt: skip
    return JobPublic.model_validate({**job.__dict__, "dispatch": dispatch_job(dispatcher, job, body.queue)})


@router.get("/competitions/{slug}/jobs", response_model=list[JobPublic])
def jobs(slug: str, _admin: AdminDep, session: SessionDep,
         kind: Annotated[JobKind | None, Query()] = None) -> list[JobPublic]:  # fmt: skip
    """The competition's organiser jobs, newest first."""
    return [JobPublic.model_validate(j) for j in list_jobs(session, competition=slug, kind=kind)]


@router.get("/jobs/{job_id}", response_model=JobPublic)
def job(job_id: JobId, _admin: AdminDep, session: SessionDep) -> JobPublic:
    return JobPublic.model_validate(get_job(session, job_id=job_id))


@router.post("/jobs/{job_id}/dispatch", response_model=JobPublic)
def redispatch(job_id: JobId, _admin: AdminDep, session: SessionDep, dispatcher: DispatcherDep) -> JobPublic:
    """Send a job that is still pending (the broker was down) to a worker again."""
    found = get_job(session, job_id=job_id)
    note = ""
    if found.status is JobStatus.PENDING:
        note = dispatch_job(dispatcher, found, str(found.params.get("queue", "judge.cpu")))
    return JobPublic.model_validate({**found.__dict__, "dispatch": note})


@router.post("/competitions/{slug}/similarity", status_code=202, response_model=JobPublic)
def machine_review(slug: str, body: SimilarityRequest, admin: AdminDep, session: SessionDep,
                   dispatcher: DispatcherDep, now: NowDep) -> JobPublic:  # fmt: skip
    """Compare, per problem, each team's latest and best submission with every other team's, in the
    background (winnowing fingerprints; the header and baselines subtracted); pairs at or above
    `threshold` are kept for the organisers to decide."""
    job = start_job(session, competition=slug, kind=JobKind.SIMILARITY, actor=admin, now=now,
                    params={"threshold": body.threshold, "queue": body.queue})  # fmt: skip
    return JobPublic.model_validate({**job.__dict__, "dispatch": dispatch_job(dispatcher, job, body.queue)})


@router.get("/competitions/{slug}/similar-pairs", response_model=list[PairPublic])
def similar_pairs(slug: str, _admin: AdminDep, session: SessionDep,
                  minimum: Annotated[float, Query(ge=0, le=1)] = 0.0) -> list[PairPublic]:  # fmt: skip
    """The pairs machine review kept, most similar first."""
    return [PairPublic.model_validate(p) for p in list_pairs(session, competition=slug, minimum=minimum)]


@router.get("/similar-pairs/{pair_id}", response_model=PairDetailPublic)
def similar_pair(pair_id: PairId, _admin: AdminDep, session: SessionDep) -> PairDetailPublic:
    """A pair with both submissions' files; `regions` says which characters match."""
    pair = get_pair(session, pair_id=pair_id)
    files = pair_sources(session, pair=pair)
    return PairDetailPublic(pair=PairPublic.model_validate(pair),
                            files_a=[SourceFilePublic(name=n, content=c) for n, c in files[pair.submission_a]],
                            files_b=[SourceFilePublic(name=n, content=c) for n, c in files[pair.submission_b]])


@router.put("/similar-pairs/{pair_id}", response_model=PairPublic)
def decide(pair_id: PairId, body: PairDecision, admin: AdminDep, session: SessionDep, now: NowDep) -> PairPublic:
    """Record the decision on a pair: `cleared`, `flagged` (with a note), or null (audited)."""
    decision = Decision(body.decision) if body.decision else None
    return PairPublic.model_validate(decide_pair(session, pair_id=pair_id, decision=decision, note=body.note,
                                                 actor=admin, now=now))  # fmt: skip


@router.get("/competitions/{slug}/release.zip", response_class=FileResponse)
def data_release(slug: str, admin: AdminDep, session: SessionDep, now: NowDep,
                 anonymise: Annotated[bool, Query(description="random pseudonyms and submission numbers, times "
                                                  "to the day, no ranking: nothing joins to the public board")] = False,
                 modes: Annotated[str, Query(description="run modes to include, comma-separated: test, benchmark, "
                                              "ranked")] = "ranked",
                 ) -> FileResponse:  # fmt: skip
    """The whole contest for publication, once it has ended: Parquet files (submissions with their
    sources, per-case results, final ranking, reviewers' totals) and a data card README.md that
    `datasets.load_dataset` reads (audited)."""
    work = Path(tempfile.mkdtemp(prefix="opjudge-release-"))
    try:
        release = build_release(session, competition=slug, folder=work / slug, anonymise=anonymise, actor=admin,
                                now=now, modes=_modes(modes))  # fmt: skip
        archive = shutil.make_archive(str(work / f"{slug}-release"), "zip", root_dir=work, base_dir=slug)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    name = f"{slug}-release{'-anonymised' if release.anonymised else ''}.zip"
    return FileResponse(archive, media_type="application/zip", filename=name,
                        background=BackgroundTask(shutil.rmtree, work, ignore_errors=True))  # fmt: skip


def _modes(value: str) -> tuple[RunMode, ...]:
    words = [w.strip() for w in value.split(",") if w.strip()]
    known = {m.value: m for m in RunMode}
    unknown = [w for w in words if w not in known]
    if unknown or not words:
        raise InvalidInputError(f"modes must be some of {', '.join(known)}, comma-separated; got {value!r}")
    return tuple(dict.fromkeys(known[w] for w in words))
