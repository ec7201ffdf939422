"""Where the team CLI finds the server and the token: flags, then environment, then the config file.

`opjudge login` writes ~/.config/opjudge/config.toml (or under $XDG_CONFIG_HOME)
with mode 0600 from the moment it exists: it holds the team's token.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from judge.errors import UserFacingError

DEFAULT_URL = "http://127.0.0.1:8000"
URL_ENV, TOKEN_ENV = "OPJUDGE_URL", "OPJUDGE_TOKEN"


class ConfigError(UserFacingError):
    """No usable server URL or token, or an unreadable config file."""


@dataclass(frozen=True)
class ClientConfig:
    url: str
    token: str
    url_from: str  # "flag", "environment", "config file" or "default": named in error messages
    token_from: str


def config_path() -> Path:
    """The config file: $XDG_CONFIG_HOME/opjudge/config.toml, else ~/.config/opjudge/config.toml."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "opjudge" / "config.toml"


def read_config_file(path: Path | None = None) -> dict[str, str]:
    """The saved `url` and `token` (empty when there is no file)."""
    path = path or config_path()
    try:
        if not path.is_file():
            return {}
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        # UnicodeDecodeError: a file that is not UTF-8 (TOML is UTF-8 only), e.g. saved by another tool.
        raise ConfigError(f"cannot read {path}: {error}; fix it or run `opjudge login` again") from None
    return {key: str(data[key]) for key in ("url", "token") if isinstance(data.get(key), str)}


def write_config_file(*, url: str, token: str, path: Path | None = None) -> Path:
    """Save the server URL and token, readable by the owner only (0600 from creation on)."""
    path = path or config_path()
    text = (
        "# Written by `opjudge login`; it holds your team's token, keep it private.\n"
        f"url = {_toml_string(url)}\ntoken = {_toml_string(token)}\n"
    )
    temporary = path.with_suffix(".toml.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(temporary, 0o600)  # an existing temporary file keeps its old mode through O_CREAT
        temporary.replace(path)
    except OSError as error:  # a read-only home, or XDG_CONFIG_HOME pointing nowhere writable
        raise ConfigError(
            f"cannot write {path}: {error}; fix it (or set XDG_CONFIG_HOME to a writable folder) "
            "and run `opjudge login` again"
        ) from None
    return path


def resolve(*, url: str | None, token: str | None, need_token: bool = True) -> ClientConfig:
    """The URL and token to use: each from the flag, else the environment, else the config file."""
    saved = read_config_file()
    url_value, url_from = _pick(url, URL_ENV, saved.get("url"))
    token_value, token_from = _pick(token, TOKEN_ENV, saved.get("token"))
    if url_value is None:
        url_value, url_from = DEFAULT_URL, "default"
    if need_token and not token_value:
        raise ConfigError(
            f"no token: run `opjudge login`, set {TOKEN_ENV}, or pass --token (it starts with 'opj_')"
        )
    return ClientConfig(url_value.rstrip("/"), token_value or "", url_from, token_from or "none")


def _pick(flag: str | None, env: str, saved: str | None) -> tuple[str | None, str | None]:
    if flag:
        return flag, "flag"
    if os.environ.get(env):
        return os.environ[env], "environment"
    if saved:
        return saved, "config file"
    return None, None


def _toml_string(value: str) -> str:
    if any(ord(c) < 0x20 or c in '"\\' for c in value):
        raise ConfigError("the URL and token cannot contain quotes, backslashes or control characters")
    return f'"{value}"'
