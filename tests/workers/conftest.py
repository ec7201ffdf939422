"""Fixtures for the workers: a seeded SQLite store, a worker context, stand-in judges."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from api.dispatch import DispatchUnavailable
from api.store import NewSubmission, create_submission, seed_demo, upgrade_database
from api.store.seed import DemoSeed
from api.store.types import utcnow
from judge.backends import Backend, Stage
from judge.modes import RunMode
from judge.results import CaseResult, JudgeResult
from judge.verdict import Verdict
from workers.context import WorkerContext
from workers.settings import WorkerSettings

REPO = Path(__file__).resolve().parents[2]
BASELINE = REPO / "reference_kernels" / "add_mul_relu" / "cpu" / "baseline.cpp"
FIXTURES = REPO / "tests" / "submissions" / "add_mul_relu" / "cpu"


@pytest.fixture
def settings(tmp_path: Path) -> WorkerSettings:
    return WorkerSettings(
        database_url=f"sqlite:///{tmp_path / 'opjudge.db'}",
        judge_secret="judge-secret-for-worker-tests-0123",
        token_pepper="token-pepper-for-worker-tests-0123",
        work_root=tmp_path / "work",
        cache_dir=tmp_path / "cache",
        min_interval_s=0,
        max_in_flight=20,
        run_case_sets="tests",
        retry_backoff_s=0,
        max_attempts=2,
        dispatch_grace_s=0,
    )


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
