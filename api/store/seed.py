"""The demo: a competition open now with both problems on the CPU, three teams, an admin and a reviewer."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from api.settings import Settings
from api.store.audit import record_audit
from api.store.competitions import attach_problem, create_competition, get_competition
from api.store.enums import Role
from api.store.errors import NotFoundError
from api.store.models import ApiToken, Reviewer, Team
from api.store.teams import add_reviewer, create_team, set_finalists
from api.store.tokens import add_token
from api.store.types import utcnow
from judge.backends import Backend
from judge.problem import load_problem

DEMO_COMPETITION = "demo"
DEMO_PROBLEMS = ("sparse_flash_attention_grad", "add_mul_relu")
DEMO_TEAMS = ("alpha", "bravo", "charlie")
DEMO_REVIEWER = "demo-reviewer"
DEMO_LABEL = "demo"


@dataclass(frozen=True)
class DemoSeed:
    competition: str
    team_tokens: dict[str, str]  # team name -> token, shown once; empty when the demo's tokens were kept
    admin_token: str | None
    reviewer_token: str | None

    @property
    def kept(self) -> bool:
        """The demo existed and its tokens were left as they were (nothing new to print)."""
        return self.admin_token is None


def seed_demo(session: Session, settings: Settings, *, reissue: bool = False) -> DemoSeed:
    """Create the demo and commit. When it exists, its tokens are kept (they survive restarts,
    docs/operations.md), unless `reissue`: then its demo tokens are revoked and fresh ones
    issued, both in the audit log (for a lost token, or after the pepper changed)."""
    now = utcnow()
    pepper = settings.pepper
    try:
        get_competition(session, slug=DEMO_COMPETITION)
    except NotFoundError:
        pass
    else:
        if not reissue:
            session.rollback()
            return DemoSeed(DEMO_COMPETITION, {}, None, None)
        return _reissue(session, pepper, now)
    create_competition(
        session, slug=DEMO_COMPETITION, title="opjudge demo", starts_at=now - timedelta(minutes=1),
        ends_at=now + timedelta(days=30), actor=None, now=now, quota_per_day=settings.quota_per_day,
        min_interval_s=settings.min_interval_s, max_in_flight=settings.max_in_flight,
        freeze_before_end_s=settings.freeze_before_end_s,
    )  # fmt: skip
    for slug in DEMO_PROBLEMS:
        problem = load_problem(slug, settings.problems_dir, settings.reference_dir)
        attach_problem(session, competition=DEMO_COMPETITION, problem=problem, backends=[Backend.CPU],
                       actor=None, now=now)  # fmt: skip
    tokens = {}
    team_ids = []
    for name in DEMO_TEAMS:
        team, issued = create_team(session, competition=DEMO_COMPETITION, name=name, pepper=pepper, actor=None,
                                   now=now)  # fmt: skip
        tokens[name] = issued.token
        team_ids.append(team.id)
    set_finalists(session, competition=DEMO_COMPETITION, team_ids=team_ids, actor=None, now=now)
    _, reviewer = add_reviewer(session, competition=DEMO_COMPETITION, name=DEMO_REVIEWER, pepper=pepper,
                               actor=None, now=now)  # fmt: skip
    admin = add_token(session, pepper=pepper, role=Role.ADMIN, now=now, label=DEMO_LABEL)
    session.commit()
    return DemoSeed(DEMO_COMPETITION, tokens, admin.token, reviewer.token)


def _reissue(session: Session, pepper: bytes, now: datetime) -> DemoSeed:
    comp = get_competition(session, slug=DEMO_COMPETITION)
    teams = session.execute(select(Team.id, Team.name).where(Team.competition_id == comp.id)).all()
    reviewer_id = session.scalar(
        select(Reviewer.id).where(Reviewer.competition_id == comp.id, Reviewer.name == DEMO_REVIEWER)
    )
    revoked = session.scalars(
        update(ApiToken)
        .where(ApiToken.revoked_at.is_(None))
        .where(ApiToken.team_id.in_([t for t, _ in teams]) | (ApiToken.reviewer_id == reviewer_id)
               | ((ApiToken.role == Role.ADMIN) & (ApiToken.label == DEMO_LABEL)))
        .values(revoked_at=now)
        .returning(ApiToken.prefix)
    ).all()  # fmt: skip
    tokens = {name: add_token(session, pepper=pepper, role=Role.TEAM, now=now, team_id=team_id, label=name)
              for team_id, name in teams if name in DEMO_TEAMS}  # fmt: skip
    reviewer = add_token(session, pepper=pepper, role=Role.REVIEWER, now=now, reviewer_id=reviewer_id,
                         label=DEMO_REVIEWER)  # fmt: skip
    admin = add_token(session, pepper=pepper, role=Role.ADMIN, now=now, label=DEMO_LABEL)
    issued = [t.prefix for t in (*tokens.values(), reviewer, admin)]
    record_audit(session, actor=None, action="demo.tokens_reissued", now=now, competition_id=comp.id,
                 target="demo tokens", details={"revoked": list(revoked), "issued": issued})  # fmt: skip
    session.commit()
    return DemoSeed(DEMO_COMPETITION, {n: t.token for n, t in tokens.items()}, admin.token, reviewer.token)
