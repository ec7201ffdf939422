"""`opjudge admin-token` and the worker's refusals, through the real Typer app."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from api.cli import build_app
from api.store.db import Database
from api.store.enums import Role
from api.store.tokens import authenticate
from workers.settings import WorkerSettings
from workers.worker import WorkerConfigError, run_worker


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path):  # type: ignore[no-untyped-def]
    for name in ("OPJUDGE_BROKER_URL", "OPJUDGE_DEV_MODE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPJUDGE_DATABASE_URL", f"sqlite:///{tmp_path / 'opjudge.db'}")
    monkeypatch.setenv("OPJUDGE_JUDGE_SECRET", "judge-secret-for-command-tests")
    monkeypatch.setenv("OPJUDGE_TOKEN_PEPPER", "token-pepper-for-command-tests")
    return tmp_path


def test_admin_token_issues_a_working_organiser_token(env) -> None:
    result = CliRunner().invoke(build_app(), ["admin-token", "--label", "ops"])  # type: ignore[arg-type]
    assert result.exit_code == 0, result.output
    token = result.output.strip().splitlines()[-1]
    settings = WorkerSettings()
    db = Database(settings)
    try:
        with db.session() as session:
            principal = authenticate(session, token=token, pepper=settings.pepper)
    finally:
        db.dispose()
    assert principal.role is Role.ADMIN and principal.label == "ops"


def test_a_worker_needs_a_real_broker(env) -> None:
    result = CliRunner().invoke(build_app(), ["worker", "--queue", "judge.cpu"])  # type: ignore[arg-type]
    assert result.exit_code == 2
    assert "needs a real broker" in result.output


def test_a_worker_refuses_an_unknown_queue(env, monkeypatch) -> None:
    monkeypatch.setenv("OPJUDGE_BROKER_URL", "redis://127.0.0.1:1/0")
    result = CliRunner().invoke(build_app(), ["worker", "--queue", "judge.gpu"])  # type: ignore[arg-type]
    assert result.exit_code == 2 and "unknown queue 'judge.gpu'" in result.output


def test_a_strict_worker_without_the_sandbox_refuses_to_start(env, monkeypatch) -> None:
    monkeypatch.setattr("workers.worker.describe_worker", lambda *a, **k: {
        "sandbox": "degraded", "sandbox.namespaces": "unavailable: no user namespaces"})
    settings = WorkerSettings(broker_url="redis://127.0.0.1:1/0", sandbox_mode="strict")
    with pytest.raises(WorkerConfigError, match="this host gives 'degraded'") as caught:
        run_worker(settings, queue="judge.cpu", name=None, concurrency=1, loglevel="info", reaper=False)
    assert "no user namespaces" in str(caught.value)


def test_a_worker_restarted_under_its_name_releases_its_earlier_runs(env, monkeypatch) -> None:
    from api.store.db import upgrade_database
    from api.store.enums import RunStatus
    from api.store.runs import claim_run
    from api.store.seed import seed_demo
    from api.store.submissions import create_submission, submission_detail
    from api.store.types import utcnow
    from judge.backends import Backend

    settings = WorkerSettings(broker_url="redis://127.0.0.1:1/0", sandbox_mode="off")
    upgrade_database(settings)
    db = Database(settings)
    try:
        with db.session() as session:
            seed_demo(session, settings)
            created = create_submission(session, team_id=1, problem="add_mul_relu", backend=Backend.CPU,
                                        files=[("kernel.cpp", b"int x;")], queue="judge.cpu", now=utcnow())
            assert claim_run(session, run_id=created.run_id, worker="judge.cpu@fixed") is not None

        class Started(Exception):
            pass

        def no_celery(*args, **kwargs):  # type: ignore[no-untyped-def]
            raise Started  # stop where the Celery worker would start

        monkeypatch.setattr("workers.worker.describe_worker", lambda *a, **k: {"sandbox": "off"})
        monkeypatch.setattr("workers.worker.make_celery", no_celery)
        with pytest.raises(Started):
            run_worker(settings, queue="judge.cpu", name="judge.cpu@fixed", concurrency=1, loglevel="info",
                       reaper=False)
        with db.session() as session:
            run = submission_detail(session, submission_id=created.submission_id).runs[0]
        assert run.status is RunStatus.PENDING  # a reaper hands it out again, not its deadline
    finally:
        db.dispose()
