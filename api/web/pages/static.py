"""The pages' vendored assets under /static (one stylesheet, one script; nothing fetched from elsewhere)."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse

from api.store.errors import NotFoundError

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
_TYPES = {".css": "text/css", ".js": "text/javascript", ".svg": "image/svg+xml", ".png": "image/png",
          ".ico": "image/x-icon"}

router = APIRouter(include_in_schema=False)


@router.get("/favicon.ico")
def favicon() -> FileResponse:
    """The site's icon (browsers ask for it on every site)."""
    return FileResponse(STATIC_DIR / "favicon.ico", media_type="image/x-icon",
                        headers={"Cache-Control": "public, max-age=86400"})  # fmt: skip


@router.get("/static/{name}")
def static_file(name: str) -> FileResponse:
    """A file from api/web/static by plain name (no sub-folders, so no path can escape it)."""
    path = STATIC_DIR / name
    if "/" in name or name.startswith(".") or path.suffix not in _TYPES or not path.is_file():
        raise NotFoundError(f"no static file {name!r}")
    # Short caching: assets change with deployments and carry no version in their names.
    return FileResponse(path, media_type=_TYPES[path.suffix], headers={"Cache-Control": "public, max-age=300",
                                                                       "X-Content-Type-Options": "nosniff"})
