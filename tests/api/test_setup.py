"""Settings, migrations and the demo seed."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from pydantic import ValidationError

from api.settings import Settings
from api.store.audit import list_audit
from api.store.db import Database, upgrade_database
from api.store.enums import Role
from api.store.models import Base
from api.store.ranking import leaderboard
from api.store.seed import seed_demo
from api.store.teams import list_teams
from api.store.tokens import authenticate
from api.web.uploads import UploadInvalidError, check_file_name


def test_secrets_are_required_outside_dev_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPJUDGE_JUDGE_SECRET", "OPJUDGE_TOKEN_PEPPER", "OPJUDGE_DEV_MODE"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValidationError, match="OPJUDGE_JUDGE_SECRET is required"):
        Settings()
    with pytest.raises(ValidationError, match="at least 16 characters"):
        Settings(judge_secret="short", token_pepper="x" * 20)  # type: ignore[arg-type]
    dev = Settings(dev_mode=True)
    assert len(dev.pepper) >= 32 and dev.secret != dev.pepper and Settings(dev_mode=True).pepper != dev.pepper


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPJUDGE_DEV_MODE", "1")
    monkeypatch.setenv("OPJUDGE_DATABASE_URL", "postgresql+psycopg://db/opjudge")
    monkeypatch.setenv("OPJUDGE_MAX_FILES", "4")
    monkeypatch.setenv("OPJUDGE_SANDBOX_MODE", "strict")
    settings = Settings()
    assert settings.database_url == "postgresql+psycopg://db/opjudge" and settings.max_files == 4
    assert settings.sandbox_mode == "strict" and settings.broker_url == "memory://"
    monkeypatch.setenv("OPJUDGE_SANDBOX_MODE", "lax")
    with pytest.raises(ValidationError):
        Settings()


def test_default_quotas_of_zero_are_refused_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new competition takes these as its quotas, where the API refuses 0 (nobody could submit)."""
    monkeypatch.setenv("OPJUDGE_DEV_MODE", "1")
    for name in ("OPJUDGE_QUOTA_PER_DAY", "OPJUDGE_MAX_IN_FLIGHT"):
        monkeypatch.setenv(name, "0")
        with pytest.raises(ValidationError, match=name.removeprefix("OPJUDGE_").lower()):
            Settings()
        monkeypatch.setenv(name, "1")
    monkeypatch.setenv("OPJUDGE_MIN_INTERVAL_S", "0")  # no interval between submissions is a rule
    assert Settings().min_interval_s == 0


def test_migrations_match_the_models_and_rerun_safely(settings: Settings, database: Database) -> None:
    upgrade_database(settings, database=database)  # a second run is a no-op
    with database.engine.connect() as connection:
        diff = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    assert diff == []


def test_seed_demo_once_then_fresh_tokens(settings: Settings, database: Database) -> None:
    with database.session() as session:
        seed = seed_demo(session, settings)
        assert set(seed.team_tokens) == {"alpha", "bravo", "charlie"} and seed.competition == "demo"
        team = authenticate(session, token=seed.team_tokens["alpha"], pepper=settings.pepper)
        assert team.role is Role.TEAM and team.competition_slug == "demo"
        assert authenticate(session, token=seed.admin_token, pepper=settings.pepper).role is Role.ADMIN
        assert authenticate(session, token=seed.reviewer_token, pepper=settings.pepper).role is Role.REVIEWER
        board = leaderboard(session, competition="demo")
        assert board.problems == ("sparse_flash_attention_grad", "add_mul_relu") and board.rows == ()
        # A restart keeps the tokens (docs/operations.md: they survive restarts).
        kept = seed_demo(session, settings)
        assert kept.kept and kept.team_tokens == {}
        assert authenticate(session, token=seed.team_tokens["alpha"], pepper=settings.pepper).team_name == "alpha"
        # Asked for, new tokens replace them, and both show in the audit log.
        again = seed_demo(session, settings, reissue=True)
        assert again.team_tokens["alpha"] != seed.team_tokens["alpha"]
        assert len(list_teams(session, competition="demo")) == 3
        with pytest.raises(Exception, match="revoked"):
            authenticate(session, token=seed.team_tokens["alpha"], pepper=settings.pepper)
        assert authenticate(session, token=again.team_tokens["alpha"], pepper=settings.pepper).team_name == "alpha"
        (entry,) = [e for e in list_audit(session, competition="demo") if e.action == "demo.tokens_reissued"]
        assert seed.admin_token is not None and seed.admin_token[:13] in " ".join(entry.details["revoked"])
        assert len(entry.details["issued"]) == 5


@pytest.mark.parametrize("name", ["kernel.cpp", "add_mul_relu.cu", "util.h", "a-b_c.hpp", "K9.cc"])
def test_good_file_names(name: str) -> None:
    assert check_file_name(name) == name


@pytest.mark.parametrize("name", ["", "../x.cpp", "/etc/passwd.h", "a\\b.cpp", ".x.cpp", "a..b.cpp", "x y.cpp",
                                  "x.cpp\x00.h", "x.sh", "-rf.cpp", "a+b.cpp", "a" * 61 + ".cpp", "x.inc"])  # fmt: skip
def test_bad_file_names(name: str) -> None:
    with pytest.raises(UploadInvalidError):
        check_file_name(name)


@pytest.mark.parametrize("name,backend", [("kernel.txt", "cpu"), ("kernel.cu", "cpu"), ("x.inc", "cpu"),
                                          ("kernel.cu", "npu")])
def test_file_types_the_backends_policy_refuses_are_refused_at_upload(name: str, backend: str) -> None:
    from judge.backends import Backend

    with pytest.raises(UploadInvalidError, match=f"for the {backend} backend"):
        check_file_name(name, Backend(backend))
