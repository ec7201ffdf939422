"""Server-rendered pages (issue 5): leaderboard, submission reports, team, organiser and reviewer pages.

`install(app)` is the hook api/app.py calls; the pages use the same store
functions and dependencies as the JSON API, and add no state of their own.
"""

from __future__ import annotations

from fastapi import APIRouter, FastAPI

from api.pages import admin, auth, board, report, review, static, team

pages_router = APIRouter(include_in_schema=False)
for _module in (static, auth, board, report, team, admin, review):
    pages_router.include_router(_module.router)


def install(app: FastAPI) -> None:
    """Add the pages and their assets to the application."""
    app.include_router(pages_router)
