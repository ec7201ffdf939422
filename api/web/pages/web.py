"""Rendering for the pages: the Jinja2 environment, its filters, and HTML responses with safe headers.

Pages are server-rendered from the same store queries as the JSON API; the only
JavaScript is api/web/static/opjudge.js, which polls fragments rendered by the same
templates. Every response carries a strict Content-Security-Policy (scripts only
from /static, no inline script), and personal pages are never cached.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from fastapi import Request, Response
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from api.store.enums import RunStatus
from api.store.views import Principal
from api.web.boardcache import Encoded
from api.web.errors import STATUS
from judge.verdict import Verdict

TEMPLATES_DIR = Path(__file__).resolve().parent.parent / "templates"

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}

# What a team reads next to a verdict code: docs/rules.md's table, in plain words.
VERDICT_WORDS = {
    Verdict.AC: "Accepted: every case passed",
    Verdict.WA: "Wrong answer: a case's output is outside the allowed error",
    Verdict.CE: "Compile error: the sources did not build",
    Verdict.SV: "Security violation: the policy check or the sandbox refused the submission",
    Verdict.TLE: "Time limit exceeded",
    Verdict.MLE: "Memory limit exceeded",
    Verdict.RE: "Runtime error: the kernel crashed or returned an error",
    Verdict.IE: "Internal error: the judge failed, not your submission; it is retried and not charged",
}


# What each run mode judged (docs/rules.md "Run modes"), for the report and the team page.
MODE_WORDS = {
    "test": "source check, build and correctness on the tests only; nothing timed",
    "benchmark": "tests, and the benchmarks timed against the baseline; no private cases",
    "ranked": "every case set judged; counts on the board",
}


@cache
def environment() -> Environment:
    """The pages' Jinja2 environment (built once, on first use)."""
    env = Environment(
        loader=FileSystemLoader(TEMPLATES_DIR),
        autoescape=select_autoescape(["html"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        score=fmt_score, ms=fmt_ms, ratio=fmt_ratio, rate=fmt_rate, sci=fmt_sci, iso=fmt_iso, hhmm=fmt_hhmm,
        when=fmt_when, heat_hue=heat_hue, size=fmt_size,
    )  # fmt: skip
    env.globals.update(VERDICT_WORDS=VERDICT_WORDS, MODE_WORDS=MODE_WORDS, RunStatus=RunStatus, Verdict=Verdict)
    return env


def render_fragment(name: str, **context: Any) -> str:
    """A template rendered to a string (fragments the page's script swaps in)."""
    return environment().get_template(name).render(**context)


def page_html(request: Request, name: str, **context: Any) -> str:
    """A full page's HTML: the template with the viewer, CSRF token and hall mode of this request."""
    viewer: Principal | None = getattr(request.state, "viewer", None)
    base = {
        "request": request,
        "viewer": viewer,
        "csrf": getattr(request.state, "csrf", ""),
        "hall": False,
        "path": request.url.path,
        "competition_slug": viewer.competition_slug if viewer else None,
    }
    return render_fragment(name, **(base | context))


def render(request: Request, name: str, *, status_code: int = 200, **context: Any) -> HTMLResponse:
    """A full page as a response (see `page_html`)."""
    return html_response(page_html(request, name, **context), status_code=status_code)


def html_response(html: str, *, status_code: int = 200, headers: dict[str, str] | None = None) -> HTMLResponse:
    """HTML with the security headers; never stored by caches (pages can be personal)."""
    merged = SECURITY_HEADERS | {"Cache-Control": "no-store"} | (headers or {})
    return HTMLResponse(html, status_code=status_code, headers=merged)


def accepts_gzip(accept_encoding: str) -> bool:
    """Whether an Accept-Encoding header allows gzip (RFC 9110 12.5.3: `gzip;q=0` refuses it)."""
    quality: dict[str, float] = {}
    for item in accept_encoding.lower().split(","):
        coding, *params = (part.strip() for part in item.split(";"))
        q = next((param[2:] for param in params if param.startswith("q=")), "1")
        try:
            quality[coding] = float(q)
        except ValueError:
            quality[coding] = 0.0
    return quality.get("gzip", quality.get("x-gzip", quality.get("*", 0.0))) > 0


def shared_html_response(request: Request, page: Encoded) -> Response:
    """A page that is the same for every anonymous reader, from its cached encodings.

    Compressed when the client takes gzip, 304 when it has this version; revalidated
    on every load (`no-cache`), and never shared across cookies by a proxy.
    """
    headers = SECURITY_HEADERS | {"Cache-Control": "no-cache", "ETag": page.etag, "Vary": "Accept-Encoding, Cookie"}
    if page.etag in (tag.strip() for tag in request.headers.get("if-none-match", "").split(",")):
        return Response(status_code=304, headers=headers)
    if accepts_gzip(request.headers.get("accept-encoding", "")):
        return Response(page.gzip, media_type="text/html; charset=utf-8",
                        headers=headers | {"Content-Encoding": "gzip"})  # fmt: skip
    return Response(page.body, media_type="text/html; charset=utf-8", headers=headers)


def status_of(error: Exception) -> int:
    """The status the JSON API answers for this typed error (api/web/errors.py chooses them)."""
    return next((STATUS[c] for c in type(error).__mro__ if c in STATUS), 400)


def error_page(request: Request, error: Exception) -> HTMLResponse:
    """A typed store/upload error as an HTML page, with the status the JSON API would answer."""
    status = status_of(error)
    titles = {401: "Please log in", 403: "Not allowed", 404: "Not found", 409: "Conflict", 413: "Too large",
              422: "Cannot use that", 429: "Please wait"}  # fmt: skip
    headers = {}
    retry = getattr(error, "retry_after_s", None)
    if retry is not None:
        headers["Retry-After"] = str(retry)
    response = render(request, "error.html", status_code=status, title=titles.get(status, "Error"),
                      message=str(error))  # fmt: skip
    response.headers.update(headers)
    return response


# ---- filters ---------------------------------------------------------------------------------


def fmt_score(value: float | None, digits: int = 2) -> str:
    return "—" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def fmt_ms(ns: float | None) -> str:
    """A duration in nanoseconds as ms or µs with 3 significant figures."""
    if ns is None:
        return "—"
    if ns >= 1e6:
        return f"{ns / 1e6:.3g} ms" if ns < 1e9 else f"{ns / 1e9:.3g} s"
    return f"{ns / 1e3:.3g} µs"


def fmt_ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}×"


def fmt_rate(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.1f}" if value >= 10 else f"{value:.3g}"


def fmt_sci(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "NaN" if value is not None else "—"
    if value == 0:
        return "0"
    if not math.isfinite(value):
        return "∞"
    return f"{value:.2e}" if abs(value) < 1e-2 or abs(value) >= 1e4 else f"{value:.4g}"


def fmt_size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KiB"


def fmt_iso(moment: datetime | None) -> str:
    return "" if moment is None else moment.astimezone(UTC).isoformat()


def fmt_hhmm(moment: datetime | None) -> str:
    """HH:MM UTC (the page's script shows it in the reader's zone)."""
    return "—" if moment is None else moment.astimezone(UTC).strftime("%H:%M UTC")


def fmt_when(moment: datetime | None) -> str:
    return "—" if moment is None else moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def heat_hue(score: float | None) -> int:
    """A hue for a case score: red at 0, amber at 50, green at 100, teal above (baseline mode)."""
    if score is None:
        return 0
    if score > 100:
        return min(185, 125 + int((score - 100) * 0.6))
    return max(0, min(125, int(score * 1.25)))
