"""The FastAPI application: `create_app(settings, dispatcher)`; OpenAPI at /docs.

Nothing is read from the environment here: the caller builds the settings
and the dispatcher once (api/cli.py for `opjudge serve`, tests for tests)
and runs `upgrade_database(settings)` before serving.
"""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi_offline import FastAPIOffline

from api.dispatch import RunDispatcher
from api.settings import Settings
from api.store.db import Database
from api.store.types import utcnow
from api.web.boardcache import BoardCache
from api.web.bodylimit import BodyLimitMiddleware
from api.web.errors import install_error_handlers
from api.web.metrics import install_metrics
from api.web.openapi_errors import install_error_schema
from api.web.ratelimit import AuthThrottle
from api.web.routes import admin_contest, admin_judging, admin_review, boards, finals, problems, reviews, submissions
from api.web.security_headers import SecurityHeadersMiddleware


def create_app(
    settings: Settings,
    dispatcher: RunDispatcher,
    *,
    database: Database | None = None,
    clock: Callable[[], datetime] = utcnow,
    pages: bool = True,
) -> FastAPI:
    """The API for `settings`, handing runs to `dispatcher`; `clock` lets tests move time.

    `pages=False` leaves out the server-rendered pages (api/web/pages, when present).
    """
    db = database or Database(settings)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        if database is None:  # we built it, we close it
            db.dispose()

    # /docs and /redoc with Swagger UI's and ReDoc's files served from the fastapi-offline package:
    # FastAPI's own pages load them from a CDN and are blank on a contest network without internet.
    app = FastAPIOffline(
        title="opjudge",
        summary="Judge and grading service for operator (kernel) optimisation contests",
        version="0.1.0",
        lifespan=lifespan,
        favicon_url="/favicon.ico",
        static_url="/docs/assets",
    )
    app.state.settings = settings
    app.state.database = db
    app.state.dispatcher = dispatcher
    app.state.clock = clock
    app.state.boards = BoardCache(ttl_s=settings.board_cache_ttl_s)
    app.state.auth_throttle = AuthThrottle.from_settings(settings)
    install_error_handlers(app)
    install_error_schema(app)
    for module in (submissions, boards, problems, reviews, admin_contest, admin_judging, admin_review, finals):
        app.include_router(module.router)
    install_metrics(app, settings, db)
    if pages:
        _include_pages(app)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
            allow_headers=["Authorization", "Content-Type"],
        )
    # Outermost: refuse an oversized body before anything else looks at it.
    app.add_middleware(BodyLimitMiddleware, max_body_bytes=settings.max_body_bytes)
    # Around even that: a 413 gets nosniff too.
    app.add_middleware(SecurityHeadersMiddleware)
    return app


def _include_pages(app: FastAPI) -> None:
    """The server-rendered pages (api/web/pages) when that package is present."""
    if importlib.util.find_spec("api.web.pages") is None:
        return
    from api.web import pages  # noqa: PLC0415 - optional part, absent from an API-only install

    install = getattr(pages, "install", None)
    if install is not None:
        install(app)
