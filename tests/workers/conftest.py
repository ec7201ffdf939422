"""Fixtures for the workers: a seeded SQLite store, a worker context, stand-in judges."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from api.dispatch import DispatchUnavailable
from api.store.db import upgrade_database
from api.store.seed import DemoSeed, seed_demo
from api.store.submissions import create_submission
from api.store.types import utcnow
from api.store.views import NewSubmission
from judge.backends import Backend, Stage
from judge.modes import RunMode
from judge.results import CaseResult, JudgeResult
from judge.verdict import Verdict
from workers.context import WorkerContext
from workers.settings import WorkerSettings

REPO = Path(__file__).resolve().parents[2]
BASELINE = REPO / "reference_kernels" / "add_mul_relu" / "cpu" / "baseline.cpp"
FIXTURES = REPO / "tests" / "submissions" / "add_mul_relu" / "cpu"


def _settings(database: Path, folder: Path) -> WorkerSettings:
    return WorkerSettings(
        database_url=f"sqlite:///{database}",
        judge_secret="judge-secret-for-worker-tests-0123",
        token_pepper="token-pepper-for-worker-tests-0123",
        work_root=folder / "work",
        cache_dir=folder / "cache",
        min_interval_s=0,
        max_in_flight=20,
        run_case_sets="tests",
        retry_backoff_s=0,
        max_attempts=2,
        dispatch_grace_s=0,
    )


@pytest.fixture(scope="session")
def migrated_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite store migrated once per session (from empty: every migration runs here); each
    test's store starts as a copy of it, and `ctx` still runs the (then no-op) upgrade a worker runs."""
    folder = tmp_path_factory.mktemp("migrated-store")
    upgrade_database(_settings(folder / "template.db", folder))
    leftovers = [p.name for p in folder.glob("template.db-*")]
    assert not leftovers, f"SQLite left {leftovers} beside the template (a copy of the file alone would lose them)"
    return folder / "template.db"


@pytest.fixture
def settings(tmp_path: Path, migrated_store: Path) -> WorkerSettings:
    shutil.copyfile(migrated_store, tmp_path / "opjudge.db")
    return _settings(tmp_path / "opjudge.db", tmp_path)


@pytest.fixture
def ctx(settings: WorkerSettings) -> Iterator[WorkerContext]:
    upgrade_database(settings)
    context = WorkerContext(settings, name="judge.cpu@test.1")
    yield context
    context.close()


@pytest.fixture
def demo(ctx: WorkerContext) -> DemoSeed:
    with ctx.db.session() as session:
        return seed_demo(session, ctx.settings)


@pytest.fixture
def submit(ctx: WorkerContext, demo: DemoSeed) -> Callable[..., NewSubmission]:
    """Store a submission of team 1 (alpha) with a pending judge run, as the upload route does."""

    def make(source: bytes | None = None, name: str = "kernel.cpp", mode: RunMode = RunMode.RANKED) -> NewSubmission:
        with ctx.db.session() as session:
            return create_submission(
                session, team_id=1, problem="add_mul_relu", backend=Backend.CPU,
                files=[(name, source if source is not None else BASELINE.read_bytes())],
                queue="judge.cpu", now=utcnow(), mode=mode,
            )  # fmt: skip

    return make


class FakeJudge:
    """Stands in for `judge_submission`: returns the verdicts it is given, in order, and counts calls."""

    def __init__(self, *verdicts: Verdict | Exception) -> None:
        self.verdicts = list(verdicts)
        self.calls = 0
        self.requests: list[object] = []

    def __call__(self, request, *, host, reporter) -> JudgeResult:  # type: ignore[no-untyped-def]
        self.calls += 1
        self.requests.append(request)
        reporter.stage(Stage.POLICY)
        verdict = self.verdicts.pop(0) if len(self.verdicts) > 1 else self.verdicts[0]
        if isinstance(verdict, Exception):
            raise verdict
        case = CaseResult(name="t01_one", case_set=request.case_sets[0], passed=verdict is Verdict.AC,
                          verdict=verdict)
        return JudgeResult(verdict=verdict, problem=request.problem.slug, backend=request.backend,
                           message=f"fake {verdict.value}", cases=[case], host={"toolchain": "fake 1.0"})


@pytest.fixture
def fake_judge(monkeypatch: pytest.MonkeyPatch) -> Callable[..., FakeJudge]:
    def install(*verdicts: Verdict | Exception) -> FakeJudge:
        judge = FakeJudge(*verdicts)
        monkeypatch.setattr("workers.tasks.judge_submission", judge)
        return judge

    return install


class RecordingDispatcher:
    def __init__(self) -> None:
        self.sent: list[tuple[int, str]] = []

    def enqueue(self, run_id: int, queue: str, priority: int = 6) -> None:
        self.sent.append((run_id, queue))


class DownDispatcher:
    def enqueue(self, run_id: int, queue: str, priority: int = 6) -> None:
        raise DispatchUnavailable("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
