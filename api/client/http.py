"""A small httpx client for the team API (`/api/v1`), with refusals turned into clear messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from judge.errors import UserFacingError

USER_AGENT = "opjudge-cli/0.1"


class ClientError(UserFacingError):
    """The server refused the request or could not be reached; `message` says what to do."""

    def __init__(self, message: str, *, status: int | None = None, retry_after_s: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after_s = retry_after_s


class OpjudgeClient:
    """The calls the team CLI makes; each returns the decoded JSON or raises ClientError."""

    def __init__(self, url: str, token: str, *, timeout_s: float = 30.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        headers = {"User-Agent": USER_AGENT}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.url = url
        self._http = httpx.Client(base_url=url, headers=headers, timeout=timeout_s, transport=transport)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> OpjudgeClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def me(self) -> dict[str, Any]:
        """The calling team, its competition and its quota."""
        return self._json("GET", "/api/v1/me")

    def submit(self, files: list[Path], *, problem: str, backend: str, mode: str = "ranked") -> dict[str, Any]:
        """Upload source files in a run mode; the answer names the submission and its status URL (202)."""
        parts = []
        for path in files:
            try:
                parts.append(("files", (path.name, path.read_bytes(), "text/plain")))
            except OSError as error:
                raise ClientError(f"cannot read {path}: {error.strerror or error}") from None
        return self._json("POST", "/api/v1/submissions", data={"problem": problem, "backend": backend, "mode": mode},
                          files=parts)  # fmt: skip

    def submission(self, submission_id: str) -> dict[str, Any]:
        """A submission, named by the id `submit` and the list show, with its runs and per-case results."""
        return self._json("GET", f"/api/v1/submissions/{quote(submission_id.strip(), safe='')}")

    def submissions(self, *, limit: int = 20) -> list[dict[str, Any]]:
        """The team's latest submissions, newest first."""
        return self._json("GET", "/api/v1/submissions", params={"limit": limit})  # type: ignore[return-value]

    def problems(self) -> list[dict[str, Any]]:
        """The problems of the caller's competition (or of every competition, without a team token)."""
        return self._json("GET", "/api/v1/problems")  # type: ignore[no-any-return]

    def problem(self, slug: str) -> dict[str, Any]:
        """One problem: statement per backend, header, public cases, rules."""
        return self._json("GET", f"/api/v1/problems/{slug}")  # type: ignore[no-any-return]

    def leaderboard(self, competition: str, *, final: bool = False) -> dict[str, Any]:
        """The competition's board as this token sees it (own row live while frozen)."""
        params = {"final": "true"} if final else {}
        return self._json("GET", f"/api/v1/competitions/{competition}/leaderboard", params=params)

    def finals(self) -> dict[str, Any]:
        """The team's chosen finals and what it may choose (ranked_by `chosen`)."""
        return self._json("GET", "/api/v1/finals")

    def choose_finals(self, submission_ids: list[str]) -> dict[str, Any]:
        """Replace the team's finals."""
        return self._json("PUT", "/api/v1/finals", json={"submission_ids": submission_ids})

    def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.TimeoutException:
            raise ClientError(f"{self.url} did not answer in time; try again, or check the server") from None
        except httpx.HTTPError as error:
            raise ClientError(f"cannot reach {self.url}: {error}; check the URL (--url, OPJUDGE_URL)") from None
        if response.status_code >= 400:
            raise refusal(response)
        try:
            return response.json()
        except ValueError:
            raise ClientError(f"{self.url} answered {response.status_code} with something that is not JSON; "
                              "is this an opjudge server?") from None  # fmt: skip


def refusal(response: httpx.Response) -> ClientError:
    """A ClientError that says what the status means for a team and what to do next."""
    status = response.status_code
    detail = _detail(response)
    retry = _retry_after(response)
    advice = {
        401: f"the server does not accept this token ({detail}); run `opjudge login` with your team's token",
        403: f"not allowed: {detail}",
        404: f"not found: {detail}",
        413: f"the upload is too large: {detail}; send fewer or smaller source files",
        415: f"the server could not read the upload: {detail}",
        422: f"the server cannot use this request: {detail}",
        429: f"please wait: {detail}" + (f" (try again in {retry} s)" if retry else ""),
        503: f"the server is unavailable: {detail}" + (f"; try again in {retry} s" if retry else ""),
    }.get(status, f"the server answered {status}: {detail}")
    return ClientError(f"{advice} [HTTP {status}]", status=status, retry_after_s=retry)


def _detail(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:300] or response.reason_phrase
    detail = body.get("detail") if isinstance(body, dict) else None
    if isinstance(detail, list):  # FastAPI's validation errors: field and message
        return "; ".join(f"{'.'.join(str(p) for p in d.get('loc', [])[1:])}: {d.get('msg')}" for d in detail)
    return str(detail or body)


def _retry_after(response: httpx.Response) -> int | None:
    value = response.headers.get("retry-after", "")
    return int(value) if value.isdigit() else None
