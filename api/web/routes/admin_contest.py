"""Organisers set up competitions, problems, teams, reviewers and tokens (every action audited)."""

from __future__ import annotations

from fastapi import APIRouter

from api.store.competitions import attach_problem, create_competition, list_competitions, update_competition
from api.store.enums import Role
from api.store.final_ranking import set_final_published
from api.store.teams import (
    add_reviewer,
    create_team,
    get_team,
    list_reviewers,
    list_teams,
    remove_reviewer,
    set_finalists,
)
from api.store.tokens import issue_token, list_tokens, revoke_token
from api.store.workers import list_workers
from api.web.deps import AdminDep, NowDep, SessionDep, SettingsDep
from api.web.schemas.bounds import ReviewerId, TeamId, TokenId
from api.web.schemas.competitions import (
    CompetitionCreate,
    CompetitionPublic,
    CompetitionUpdate,
    FinalPublish,
    FreezeUpdate,
    ProblemAttach,
)
from api.web.schemas.people import (
    AdminTokenCreate,
    FinalistsUpdate,
    ReviewerCreate,
    ReviewerCreated,
    ReviewerPublic,
    TeamCreate,
    TeamCreated,
    TeamPublic,
    TokenCreated,
    TokenPublic,
)
from api.web.setup_notes import default_backends, freeze_note
from judge.problem import load_problem

router = APIRouter(prefix="/api/v1/admin", tags=["organisers"])


@router.get("/competitions", response_model=list[CompetitionPublic])
def competitions(_admin: AdminDep, session: SessionDep) -> list[CompetitionPublic]:
    return [CompetitionPublic.model_validate(c) for c in list_competitions(session)]


@router.post("/competitions", status_code=201, response_model=CompetitionPublic)
def new_competition(
    body: CompetitionCreate, admin: AdminDep, session: SessionDep, settings: SettingsDep, now: NowDep
) -> CompetitionPublic:
    """A competition; quotas default to the server's settings, the freeze to 30 minutes before the end."""
    options = body.model_dump(exclude={"slug", "title", "starts_at", "ends_at"}, exclude_none=True)
    quotas = {k: options.pop(k, getattr(settings, k)) for k in ("quota_per_day", "min_interval_s", "max_in_flight")}
    view = create_competition(
        session, slug=body.slug, title=body.title, starts_at=body.starts_at, ends_at=body.ends_at, actor=admin,
        now=now, freeze_before_end_s=settings.freeze_before_end_s, options=options, **quotas,
    )  # fmt: skip
    answer = CompetitionPublic.model_validate(view)
    answer.notes = [freeze_note(view, settings.freeze_before_end_s)]
    return answer


@router.patch("/competitions/{slug}", response_model=CompetitionPublic)
def edit_competition(
    slug: str, body: CompetitionUpdate, admin: AdminDep, session: SessionDep, now: NowDep
) -> CompetitionPublic:
    """Change settings; scoring changes recompute the standings. A new `ends_at` moves the
    freeze with it, the same time before the end, unless `freeze_at` is set in the same change."""
    changes = body.model_dump(exclude_none=True)
    return CompetitionPublic.model_validate(
        update_competition(session, slug=slug, changes=changes, actor=admin, now=now)
    )


@router.put("/competitions/{slug}/freeze", response_model=CompetitionPublic)
def set_freeze(slug: str, body: FreezeUpdate, admin: AdminDep, session: SessionDep, now: NowDep) -> CompetitionPublic:
    """Set the freeze time (null: never freeze)."""
    view = update_competition(session, slug=slug, changes={"freeze_at": body.freeze_at}, actor=admin, now=now,
                              action="competition.freeze")  # fmt: skip
    return CompetitionPublic.model_validate(view)


@router.put("/competitions/{slug}/final", response_model=CompetitionPublic)
def publish_final(
    slug: str, body: FinalPublish, admin: AdminDep, session: SessionDep, now: NowDep
) -> CompetitionPublic:
    """Publish (or hide) the final ranking: a snapshot, taken on first publishing, which only a
    recompute changes. Before the window ends this is refused (409) unless `override` and a `reason`."""
    view = set_final_published(session, competition=slug, published=body.published, actor=admin, now=now,
                               override=body.override, reason=body.reason)  # fmt: skip
    return CompetitionPublic.model_validate(view)


@router.post("/competitions/{slug}/problems", response_model=CompetitionPublic)
def add_problem(
    slug: str, body: ProblemAttach, admin: AdminDep, session: SessionDep, settings: SettingsDep, now: NowDep
) -> CompetitionPublic:
    """Use a problem package from the server's problems folder, on the backends named, else on those a
    worker serves (the embedded server: the CPU); the answer's notes say which and why."""
    problem = load_problem(body.problem, settings.problems_dir, settings.reference_dir)
    backends, notes = body.backends, []
    if not backends:
        backends, note = default_backends(list(problem.backends), settings, list_workers(session), now)
        notes.append(note)
    view = attach_problem(session, competition=slug, problem=problem, backends=backends, actor=admin, now=now)
    answer = CompetitionPublic.model_validate(view)
    answer.notes = notes
    return answer


@router.get("/competitions/{slug}/teams", response_model=list[TeamPublic])
def teams(slug: str, _admin: AdminDep, session: SessionDep) -> list[TeamPublic]:
    return [TeamPublic.model_validate(t) for t in list_teams(session, competition=slug)]


@router.post("/competitions/{slug}/teams", status_code=201, response_model=TeamCreated)
def new_team(
    slug: str, body: TeamCreate, admin: AdminDep, session: SessionDep, settings: SettingsDep, now: NowDep
) -> TeamCreated:
    """A team and its token (shown in this response only)."""
    team, token = create_team(session, competition=slug, name=body.name, pepper=settings.pepper, actor=admin, now=now)
    return TeamCreated(team=TeamPublic.model_validate(team), token=TokenCreated.model_validate(token))


@router.put("/competitions/{slug}/finalists", response_model=list[TeamPublic])
def finalists(slug: str, body: FinalistsUpdate, admin: AdminDep, session: SessionDep, now: NowDep) -> list[TeamPublic]:
    """Exactly these teams are the finalists reviewers mark."""
    chosen = set_finalists(session, competition=slug, team_ids=body.team_ids, actor=admin, now=now)
    return [TeamPublic.model_validate(t) for t in chosen]


@router.get("/teams/{team_id}/tokens", response_model=list[TokenPublic])
def team_tokens(team_id: TeamId, _admin: AdminDep, session: SessionDep) -> list[TokenPublic]:
    get_team(session, team_id=team_id)  # an unknown team is a 404, as for POST, not an empty list
    return [TokenPublic.model_validate(t) for t in list_tokens(session, team_id=team_id)]


@router.post("/teams/{team_id}/tokens", status_code=201, response_model=TokenCreated)
def new_team_token(
    team_id: TeamId, admin: AdminDep, session: SessionDep, settings: SettingsDep, now: NowDep
) -> TokenCreated:
    """Another token for a team (e.g. to replace a leaked one before revoking it)."""
    token = issue_token(session, pepper=settings.pepper, role=Role.TEAM, team_id=team_id, actor=admin, now=now)
    return TokenCreated.model_validate(token)


@router.post("/tokens", status_code=201, response_model=TokenCreated)
def new_admin_token(
    body: AdminTokenCreate, admin: AdminDep, session: SessionDep, settings: SettingsDep, now: NowDep
) -> TokenCreated:
    """A token for another organiser."""
    token = issue_token(session, pepper=settings.pepper, role=Role.ADMIN, label=body.label, actor=admin, now=now)
    return TokenCreated.model_validate(token)


@router.delete("/tokens/{token_id}", response_model=TokenPublic)
def revoke(token_id: TokenId, admin: AdminDep, session: SessionDep, now: NowDep) -> TokenPublic:
    """Revoke a token: it stops working at once."""
    return TokenPublic.model_validate(revoke_token(session, token_id=token_id, actor=admin, now=now))


@router.get("/competitions/{slug}/reviewers", response_model=list[ReviewerPublic])
def reviewers(slug: str, _admin: AdminDep, session: SessionDep) -> list[ReviewerPublic]:
    return [ReviewerPublic.model_validate(r) for r in list_reviewers(session, competition=slug)]


@router.post("/competitions/{slug}/reviewers", status_code=201, response_model=ReviewerCreated)
def new_reviewer(
    slug: str, body: ReviewerCreate, admin: AdminDep, session: SessionDep, settings: SettingsDep, now: NowDep
) -> ReviewerCreated:
    """A reviewer and their token (shown in this response only)."""
    reviewer, token = add_reviewer(session, competition=slug, name=body.name, pepper=settings.pepper, actor=admin,
                                   now=now)  # fmt: skip
    return ReviewerCreated(reviewer=ReviewerPublic.model_validate(reviewer), token=TokenCreated.model_validate(token))


@router.delete("/reviewers/{reviewer_id}", response_model=ReviewerPublic)
def drop_reviewer(reviewer_id: ReviewerId, admin: AdminDep, session: SessionDep, now: NowDep) -> ReviewerPublic:
    """Remove a reviewer: their tokens are revoked and their marks stop counting."""
    return ReviewerPublic.model_validate(remove_reviewer(session, reviewer_id=reviewer_id, actor=admin, now=now))
