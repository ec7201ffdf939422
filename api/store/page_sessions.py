"""Page sessions: logging out revokes the session, not only the cookie.

A login opens a session for the token it was given: the cookie holds a random
secret `opjs_...`, the database its HMAC under the pepper (as for tokens) and the
token's id. A page request is the token's principal while the session is open,
unexpired and its token unrevoked; logging out marks the row revoked, so a copy
of the cookie (another browser, a stolen one) stops working at once.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from api.store.errors import AuthError
from api.store.models import ApiToken, PageSession
from api.store.tokens import hash_token, principal_of_digest
from api.store.views import Principal

SESSION_PREFIX = "opjs_"
_KEEP_EXPIRED = timedelta(days=1)  # expired rows are deleted this long after, at the next login


def is_session_secret(value: str) -> bool:
    return value.startswith(SESSION_PREFIX) and len(value) <= 100


def open_page_session(session: Session, *, token_id: int, pepper: bytes, now: datetime, max_age_s: int) -> str:
    """A new session for the token `token_id` (commits); returns the secret for the cookie."""
    secret = SESSION_PREFIX + secrets.token_urlsafe(32)
    session.execute(delete(PageSession).where(PageSession.expires_at < now - _KEEP_EXPIRED))
    session.add(PageSession(digest=hash_token(secret, pepper=pepper), token_id=token_id, created_at=now,
                            expires_at=now + timedelta(seconds=max_age_s)))  # fmt: skip
    session.commit()
    return secret


def session_principal(session: Session, *, secret: str, pepper: bytes, now: datetime) -> Principal:
    """The principal of an open page session; AuthError says why when it is not open."""
    row = session.execute(
        select(PageSession, ApiToken.digest).join(ApiToken, ApiToken.id == PageSession.token_id)
        .where(PageSession.digest == hash_token(secret, pepper=pepper))
    ).first()  # fmt: skip
    if row is None:
        raise AuthError("unknown page session")
    page_session, token_digest = row
    if page_session.revoked_at is not None:
        raise AuthError("this page session was logged out")
    if page_session.expires_at <= now:
        raise AuthError("this page session expired; log in again")
    return principal_of_digest(session, digest=token_digest)  # a revoked token ends the session too


def close_page_session(session: Session, *, secret: str, pepper: bytes, now: datetime) -> bool:
    """Revoke the session (commits); False when there was no open one."""
    done = session.execute(
        update(PageSession).where(PageSession.digest == hash_token(secret, pepper=pepper),
                                  PageSession.revoked_at.is_(None)).values(revoked_at=now)
    )  # fmt: skip
    session.commit()
    return bool(done.rowcount)  # type: ignore[attr-defined]
