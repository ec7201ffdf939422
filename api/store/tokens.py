"""API tokens: `secrets` tokens with a visible prefix, stored only as HMAC-SHA256 with the pepper.

A token reads `opj_<role>_<random>`; the database keeps the digest and the
first characters (the prefix) so organisers can tell tokens apart without
holding them. Tokens are shown once, when issued, and can be revoked.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from api.store.audit import record_audit
from api.store.enums import Role
from api.store.errors import AuthError, InvalidInputError, NotFoundError
from api.store.models import ApiToken, Competition, Reviewer, Team
from api.store.views import IssuedToken, Principal, TokenInfo

_PREFIX_RANDOM_CHARS = 6  # random characters kept visible after "opj_<role>_"


def hash_token(token: str, *, pepper: bytes) -> str:
    """HMAC-SHA256(pepper, token) in hex: what the database stores instead of the token."""
    return hmac.new(pepper, token.encode(), hashlib.sha256).hexdigest()


def _new_token(role: Role) -> tuple[str, str]:
    head = f"opj_{role.value}_"
    token = head + secrets.token_urlsafe(30)
    return token, token[: len(head) + _PREFIX_RANDOM_CHARS]


def add_token(
    session: Session,
    *,
    pepper: bytes,
    role: Role,
    now: datetime,
    team_id: int | None = None,
    reviewer_id: int | None = None,
    label: str = "",
) -> IssuedToken:
    """Add a token row to the caller's transaction and return the secret (shown once)."""
    if (role is Role.TEAM) != (team_id is not None) or (role is Role.REVIEWER) != (reviewer_id is not None):
        raise InvalidInputError(f"a {role.value} token needs exactly its own owner")
    token, prefix = _new_token(role)
    row = ApiToken(
        digest=hash_token(token, pepper=pepper),
        prefix=prefix,
        role=role,
        team_id=team_id,
        reviewer_id=reviewer_id,
        label=label,
        created_at=now,
    )
    session.add(row)
    session.flush()
    return IssuedToken(row.id, token, prefix, role, team_id, reviewer_id)


def issue_token(
    session: Session,
    *,
    pepper: bytes,
    role: Role,
    actor: Principal | None,
    now: datetime,
    team_id: int | None = None,
    reviewer_id: int | None = None,
    label: str = "",
) -> IssuedToken:
    """Issue a token for a team, a reviewer or an admin (audited; commits)."""
    if team_id is not None and session.get(Team, team_id) is None:
        raise NotFoundError(f"no team {team_id}")
    if reviewer_id is not None and session.get(Reviewer, reviewer_id) is None:
        raise NotFoundError(f"no reviewer {reviewer_id}")
    issued = add_token(
        session, pepper=pepper, role=role, now=now, team_id=team_id, reviewer_id=reviewer_id, label=label
    )
    record_audit(
        session,
        actor=actor,
        action="token.issue",
        now=now,
        target=issued.prefix,
        details={"role": role.value, "team_id": team_id, "reviewer_id": reviewer_id, "label": label},
    )
    session.commit()
    return issued


def revoke_token(session: Session, *, token_id: int, actor: Principal | None, now: datetime) -> TokenInfo:
    """Revoke a token; revoking twice keeps the first time (audited; commits)."""
    row = session.get(ApiToken, token_id)
    if row is None:
        raise NotFoundError(f"no token {token_id}")
    if row.revoked_at is None:
        row.revoked_at = now
        record_audit(session, actor=actor, action="token.revoke", now=now, target=row.prefix)
        session.commit()
    return _info(row)


def revoke_tokens_of(
    session: Session, *, team_id: int | None = None, reviewer_id: int | None = None, now: datetime
) -> None:
    """Revoke every live token of a team or reviewer, in the caller's transaction."""
    query = update(ApiToken).where(ApiToken.revoked_at.is_(None)).values(revoked_at=now)
    if team_id is not None:
        query = query.where(ApiToken.team_id == team_id)
    elif reviewer_id is not None:
        query = query.where(ApiToken.reviewer_id == reviewer_id)
    else:
        raise InvalidInputError("say whose tokens to revoke")
    session.execute(query)


def list_tokens(session: Session, *, team_id: int | None = None, role: Role | None = None) -> list[TokenInfo]:
    """Tokens (never their secrets), newest first."""
    query = select(ApiToken).order_by(ApiToken.id.desc())
    if team_id is not None:
        query = query.where(ApiToken.team_id == team_id)
    if role is not None:
        query = query.where(ApiToken.role == role)
    return [_info(row) for row in session.scalars(query)]


def authenticate(session: Session, *, token: str, pepper: bytes) -> Principal:
    """The principal a bearer token stands for; AuthError says why when there is none."""
    if not token.startswith("opj_") or len(token) > 200:
        raise AuthError("the token is not an opjudge token (they start with 'opj_')")
    return principal_of_digest(session, digest=hash_token(token, pepper=pepper))


def principal_of_digest(session: Session, *, digest: str) -> Principal:
    """The principal of the token stored under `digest` (a page session holds its token's id)."""
    row = session.execute(
        select(ApiToken, Team, Reviewer, Competition)
        .outerjoin(Team, Team.id == ApiToken.team_id)
        .outerjoin(Reviewer, Reviewer.id == ApiToken.reviewer_id)
        .outerjoin(
            Competition,
            (Competition.id == Team.competition_id) | (Competition.id == Reviewer.competition_id),
        )
        .where(ApiToken.digest == digest)
    ).first()
    if row is None:
        raise AuthError("unknown token")
    api_token, team, reviewer, competition = row
    if api_token.revoked_at is not None:
        raise AuthError(f"token {api_token.prefix}… was revoked at {api_token.revoked_at.isoformat()}")
    if reviewer is not None and not reviewer.active:
        raise AuthError(f"reviewer {reviewer.name!r} was removed from the competition")
    return Principal(
        token_id=api_token.id,
        role=api_token.role,
        prefix=api_token.prefix,
        label=api_token.label,
        team_id=team.id if team else None,
        team_name=team.name if team else None,
        reviewer_id=reviewer.id if reviewer else None,
        reviewer_name=reviewer.name if reviewer else None,
        competition_id=competition.id if competition else None,
        competition_slug=competition.slug if competition else None,
    )


def _info(row: ApiToken) -> TokenInfo:
    return TokenInfo(
        row.id, row.prefix, row.role, row.label, row.team_id, row.reviewer_id, row.created_at, row.revoked_at
    )
