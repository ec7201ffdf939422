"""The OpenAPI reference at /docs, with Swagger UI's files served from the installed package.

FastAPI's default /docs loads Swagger UI from a CDN, so it is a blank page on a
contest network without internet (issue 17 item 5). The same page is served here
with its script and stylesheet from the `swagger-ui-bundle` package, under
/docs/assets/. ReDoc (also CDN-only) is left out.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse
from swagger_ui_bundle import swagger_ui_path

from api.store import NotFoundError

ASSETS = Path(swagger_ui_path)
_TYPES = {".js": "text/javascript", ".css": "text/css", ".png": "image/png"}


def install(app: FastAPI) -> None:
    """Add /docs and its assets (create the app with `docs_url=None, redoc_url=None`)."""

    @app.get("/docs", include_in_schema=False)
    def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url=app.openapi_url or "/openapi.json", title=f"{app.title} API",
                                   swagger_js_url="/docs/assets/swagger-ui-bundle.js",
                                   swagger_css_url="/docs/assets/swagger-ui.css",
                                   swagger_favicon_url="/favicon.ico")  # fmt: skip

    @app.get("/docs/assets/{name}", include_in_schema=False)
    def swagger_asset(name: str) -> FileResponse:
        path = ASSETS / name
        if "/" in name or name.startswith(".") or path.suffix not in _TYPES or not path.is_file():
            raise NotFoundError(f"no documentation asset {name!r}")
        return FileResponse(path, media_type=_TYPES[path.suffix], headers={"Cache-Control": "public, max-age=86400"})
