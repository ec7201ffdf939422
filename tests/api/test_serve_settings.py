"""`opjudge serve` settings: an embedded server keeps its secrets; production must be given them."""

from __future__ import annotations

import stat

import pytest
from pydantic import ValidationError

from api.serve import serve_settings
from judge.backends import CaseSet
from workers.settings import WorkerSettings


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path):  # type: ignore[no-untyped-def]
    for name in ("OPJUDGE_JUDGE_SECRET", "OPJUDGE_TOKEN_PEPPER", "OPJUDGE_DEV_MODE", "OPJUDGE_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPJUDGE_DATABASE_URL", f"sqlite:///{tmp_path / 'var' / 'opjudge.db'}")
    return tmp_path


def test_an_embedded_server_generates_its_secrets_once(clean_env) -> None:
    first = serve_settings()
    path = clean_env / "var" / "secrets.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    second = serve_settings()
    assert first.secret == second.secret and first.pepper == second.pepper  # tokens survive a restart
    assert first.secret != first.pepper


def test_secrets_from_the_environment_win(clean_env, monkeypatch) -> None:
    monkeypatch.setenv("OPJUDGE_JUDGE_SECRET", "s" * 20)
    monkeypatch.setenv("OPJUDGE_TOKEN_PEPPER", "p" * 20)
    settings = serve_settings()
    assert (settings.secret, settings.pepper) == (b"s" * 20, b"p" * 20)
    assert not (clean_env / "var" / "secrets.json").exists()


def test_postgresql_without_secrets_is_refused(clean_env, monkeypatch) -> None:
    monkeypatch.setenv("OPJUDGE_DATABASE_URL", "postgresql+psycopg://opjudge@db/opjudge")
    with pytest.raises(ValidationError, match="OPJUDGE_JUDGE_SECRET is required"):
        serve_settings()


def test_run_case_sets_are_checked(monkeypatch) -> None:
    monkeypatch.setenv("OPJUDGE_DEV_MODE", "1")
    monkeypatch.setenv("OPJUDGE_RUN_CASE_SETS", "tests, benchmarks")
    assert WorkerSettings().case_sets_override == (CaseSet.TESTS, CaseSet.BENCHMARKS)
    monkeypatch.setenv("OPJUDGE_RUN_CASE_SETS", "test")
    with pytest.raises(ValidationError, match="unknown case set 'test'"):
        WorkerSettings()
