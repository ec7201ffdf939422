"""The service's settings: one pydantic-settings `Settings`, built once at start-up and passed down.

Every value can come from the environment with the `OPJUDGE_` prefix, e.g.
`OPJUDGE_DATABASE_URL=postgresql+psycopg://...`. Nothing here is read at import
time: `Settings()` reads the environment when the caller builds it.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

REPO_ROOT = Path(__file__).resolve().parent.parent
VAR_DIR = REPO_ROOT / "var"

KIB = 1024
MIB = 1024 * KIB


class Settings(BaseSettings):
    """Everything the API, the store and the workers are configured with."""

    model_config = SettingsConfigDict(env_prefix="OPJUDGE_", extra="ignore")

    # Development conveniences (generated secrets); never set in production.
    dev_mode: bool = False

    database_url: str = f"sqlite:///{VAR_DIR / 'opjudge.db'}"
    db_pool_size: int = 10  # per process; SQLite uses it too (one connection per thread in flight)
    db_max_overflow: int = 20
    db_pool_timeout_s: float = 10.0
    broker_url: str = "memory://"

    # Mixed into every case seed (docs/rules.md: "fresh inputs, made from a seed you cannot predict").
    judge_secret: SecretStr | None = None
    # HMAC key for API tokens: the database holds HMAC-SHA256(pepper, token), never the token.
    token_pepper: SecretStr | None = None

    sandbox_mode: Literal["strict", "auto", "off"] = "auto"
    # A memory cgroup per runner child (judge/sandbox/memcg.py): auto where the host allows one,
    # required (the worker refuses to start without one), off.
    memory_cgroup: Literal["auto", "required", "off"] = "auto"
    work_root: Path = VAR_DIR / "work"
    cache_dir: Path = VAR_DIR / "cache"
    problems_dir: Path = REPO_ROOT / "problems"
    reference_dir: Path = REPO_ROOT / "reference_kernels"

    # Device queue names: judge.cuda.<cuda_gpu>, judge.npu.<npu_soc> (docs/operations.md, "The parts").
    cuda_gpu: str = "default"
    npu_soc: str = "default"

    # Upload limits, enforced while the body streams in (api/web/bodylimit.py, api/web/uploads.py).
    max_body_bytes: int = Field(default=2 * MIB, gt=0)
    max_files: int = Field(default=16, gt=0)
    max_file_bytes: int = Field(default=512 * KIB, gt=0)

    # Defaults of a new competition's quotas (docs/rules.md, "Contest rules the service enforces").
    quota_per_day: int = Field(default=50, ge=1)
    min_interval_s: int = Field(default=90, ge=0)
    max_in_flight: int = Field(default=2, ge=1)
    freeze_before_end_s: int = Field(default=30 * 60, ge=0)

    # How long a claimed run may run before the reaper hands it to another worker.
    run_deadline_s: int = Field(default=30 * 60, gt=0)
    # A pending run younger than this is assumed to be on its way to the broker.
    dispatch_grace_s: float = Field(default=5.0, ge=0)

    # A leaderboard is re-read from the standings at most this often (it is at most this late).
    board_cache_ttl_s: float = Field(default=1.0, ge=0)

    # The HTTP server's limits (api/web/http_server.py); the reverse proxy in front should be stricter.
    http_request_timeout_s: float = Field(default=60.0, gt=0)  # one request's headers and body arrive within
    http_keepalive_timeout_s: int = Field(default=5, ge=1)  # an idle keep-alive connection is closed after
    http_max_header_bytes: int = Field(default=64 * KIB, ge=4 * KIB)  # request line and headers
    http_limit_concurrency: int = Field(default=512, ge=8)  # connections at once; beyond it, 503
    http_backlog: int = Field(default=256, ge=16)

    # Failed token checks per client address and minute before it is refused (api/web/ratelimit.py);
    # the counts' storage: memory (one API process) or redis://... (several).
    auth_failures_per_minute: int = Field(default=30, ge=1)
    # Bearer token Prometheus scrapes /metrics with (an admin token works too); None: admin tokens only.
    metrics_token: SecretStr | None = None
    rate_limit_storage_url: str = "memory://"

    cors_origins: list[str] = Field(default_factory=list)  # empty: CORS off
    # Behind a TLS-terminating proxy (docker-compose.yml): mark the login cookies Secure whatever
    # scheme reaches the app, and trust the proxy's X-Forwarded-Proto from these addresses.
    secure_cookies: bool = False
    # The proxies' own addresses or networks, comma-separated. The client is the rightmost
    # X-Forwarded-For hop that is not one of them (uvicorn's proxy middleware); "*" would make every
    # hop trusted, so the leftmost entry, which the client writes itself, would name the client.
    forwarded_allow_ips: str = "127.0.0.1"

    @model_validator(mode="after")
    def _proxies_named(self) -> Settings:
        if any(part.strip() == "*" for part in self.forwarded_allow_ips.split(",")):
            raise ValueError(
                "OPJUDGE_FORWARDED_ALLOW_IPS must name the proxy's own addresses or networks "
                "(such as 172.16.0.0/12 for a Docker bridge), not '*': with '*' a client names its own "
                "address in X-Forwarded-For (docs/operations.md, 'Logins and rate limits')")
        return self

    @model_validator(mode="after")
    def _secrets_present(self) -> Settings:
        # Production must be given both secrets; a development server may invent them,
        # which makes every token issued by an earlier process invalid (seed_demo issues new ones).
        for name in ("judge_secret", "token_pepper"):
            value = getattr(self, name)
            if value is not None and len(value.get_secret_value()) < 16:
                raise ValueError(f"OPJUDGE_{name.upper()} must be at least 16 characters")
            if value is None:
                if not self.dev_mode:
                    raise ValueError(
                        f"OPJUDGE_{name.upper()} is required (or set OPJUDGE_DEV_MODE=1 "
                        "to generate a throw-away value for development)"
                    )
                setattr(self, name, SecretStr(secrets.token_urlsafe(32)))
        return self

    @property
    def pepper(self) -> bytes:
        """The token pepper as bytes (always set after validation)."""
        assert self.token_pepper is not None
        return self.token_pepper.get_secret_value().encode()

    @property
    def secret(self) -> bytes:
        """The judge secret as bytes (always set after validation)."""
        assert self.judge_secret is not None
        return self.judge_secret.get_secret_value().encode()

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")
