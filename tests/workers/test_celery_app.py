"""The Celery app's delivery settings, the task on the Celery path, and the dispatcher's failure mode."""

from __future__ import annotations

import socket
import time

import pytest

from api.dispatch import DispatchUnavailable
from api.store.enums import RunStatus
from api.store.submissions import submission_detail
from judge.backends import Backend
from judge.verdict import Verdict
from workers.celery_app import JUDGE_TASK, CeleryDispatcher, make_celery
from workers.worker import WorkerConfigError, backend_for_queue


def test_delivery_settings_follow_the_issue(settings) -> None:
    app = make_celery(settings)
    conf = app.conf
    assert conf.task_acks_late and conf.task_reject_on_worker_lost
    assert conf.worker_prefetch_multiplier == 1 and conf.worker_concurrency == 1 and conf.worker_pool == "prefork"
    assert conf.broker_url == "memory://" and conf.task_ignore_result
    # Redis must not hand a task to a second worker while the first is within the run's deadline.
    assert conf.broker_transport_options["visibility_timeout"] > settings.run_deadline_s
    # A hung worker is stopped (its message acknowledged) before Redis would hand the message on.
    assert settings.run_deadline_s < conf.task_time_limit < conf.broker_transport_options["visibility_timeout"]
    assert "max_retries" not in conf.broker_transport_options  # a worker keeps reconnecting
    assert make_celery(settings, publisher=True).conf.broker_transport_options["max_retries"] == 0
    task = app.tasks[JUDGE_TASK]
    assert task.acks_late and task.reject_on_worker_lost and task.max_retries is None


def test_the_task_judges_through_judge_run_and_retries_internal_errors(ctx, submit, fake_judge) -> None:
    judge = fake_judge(Verdict.IE, Verdict.AC)
    app = make_celery(ctx.settings, ctx=ctx)
    app.conf.task_always_eager = True  # Celery runs a retry at once when eager
    created = submit()
    app.tasks[JUDGE_TASK].apply(kwargs={"run_id": created.run_id})
    with ctx.db.session() as session:
        run = submission_detail(session, submission_id=created.submission_id).runs[0]
    assert (run.status, run.verdict, run.attempt) == (RunStatus.DONE, Verdict.AC, 2)
    assert judge.calls == 2
    app.tasks[JUDGE_TASK].apply(kwargs={"run_id": created.run_id})  # redelivered after the end: no-op
    assert judge.calls == 2


def test_a_broker_that_is_down_is_reported_at_once(settings) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings.broker_url = f"redis://127.0.0.1:{port}/0"
    dispatcher = CeleryDispatcher(make_celery(settings, publisher=True))
    started = time.monotonic()
    with pytest.raises(DispatchUnavailable, match="broker is unavailable"):
        dispatcher.enqueue(1, "judge.cpu")
    # An upload must not hang on a dead broker: without max_retries = 0 kombu retries for ever. The
    # bound is generous, so a loaded host cannot fail it; a refused connect takes milliseconds.
    assert time.monotonic() - started < 20.0


def test_the_dispatcher_puts_the_task_on_the_runs_queue(settings) -> None:
    app = make_celery(settings, publisher=True)  # memory:// broker: in this process
    CeleryDispatcher(app).enqueue(7, "judge.cuda.h100")
    with app.connection_for_read() as conn:
        message = conn.SimpleQueue("judge.cuda.h100").get(timeout=5)
        assert message.headers["task"] == JUDGE_TASK
        assert message.payload[1] == {"run_id": 7}  # (args, kwargs, embed)
        message.ack()


@pytest.mark.parametrize(("queue", "backend"), [("judge.cpu", Backend.CPU), ("judge.cuda.h100", Backend.CUDA),
                                                ("judge.npu.Ascend910B3", Backend.NPU)])
def test_queues_name_their_backend(queue: str, backend: Backend) -> None:
    assert backend_for_queue(queue) is backend


@pytest.mark.parametrize("queue", ["cpu", "judge.gpu", "judge.cuda", "judge.cpu.x", "judge.npu."])
def test_unknown_queues_are_refused(queue: str) -> None:
    with pytest.raises(WorkerConfigError, match="unknown queue"):
        backend_for_queue(queue)


def test_a_takeover_stays_one_when_the_store_is_down(ctx, monkeypatch) -> None:
    """A redelivered task that meets a database outage before its claim retries as a takeover
    still; otherwise the retry skips the run, which then blocks the team until its deadline."""
    from workers.tasks import Outcome, RunOutcome, StoreUnavailableError

    seen: list[bool] = []

    def judge_run(_ctx, run_id: int, *, take_over: bool = False) -> RunOutcome:
        seen.append(take_over)
        if len(seen) == 1:
            raise StoreUnavailableError("database unavailable during claim", held=False)
        return RunOutcome(run_id, Outcome.SKIPPED)

    monkeypatch.setattr("workers.celery_app.judge_run", judge_run)
    app = make_celery(ctx.settings, ctx=ctx)
    app.conf.task_always_eager = True
    app.tasks[JUDGE_TASK].apply(kwargs={"run_id": 1, "take_over": True})
    assert seen == [True, True]
