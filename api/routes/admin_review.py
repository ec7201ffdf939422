"""Organisers' tools of issue 18: the final ranking's snapshot and its audited recomputation."""

from __future__ import annotations

from fastapi import APIRouter

from api.deps import AdminDep, NowDep, SessionDep
from api.schemas.organisers import FinalStatePublic, RecomputePublic, RecomputeRequest
from api.store import final_state, recompute_final

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
