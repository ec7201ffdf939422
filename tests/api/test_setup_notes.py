"""The set-up answers say what a default the organiser did not choose came to: the
freeze of a new competition, and the backends an attached problem got (those a worker serves)."""

from __future__ import annotations

from datetime import timedelta

from fastapi.testclient import TestClient

from api.settings import Settings
from api.store.views import WorkerView
from api.web.setup_notes import default_backends
from judge.backends import Backend
from tests.api.conftest import START, Contest


def _create(client: TestClient, contest: Contest, slug: str, length: timedelta) -> dict:  # type: ignore[type-arg]
    body = {"slug": slug, "title": slug, "starts_at": START.isoformat(), "ends_at": (START + length).isoformat()}
    created = client.post("/api/v1/admin/competitions", headers=contest.auth("admin"), json=body)
    assert created.status_code == 201, created.text
    return created.json()


def test_the_create_answer_says_when_the_board_freezes(client: TestClient, contest: Contest) -> None:
    long = _create(client, contest, "long", timedelta(days=2))
    note = long["notes"][0]
    assert note.startswith(f"the board freezes at {long['freeze_at'][:16]}") and "30 minutes before the end" in note
    short = _create(client, contest, "short", timedelta(minutes=6))
    assert "frozen from the start" in short["notes"][0] and "30 minutes" in short["notes"][0]


def test_an_embedded_server_attaches_the_cpu_backend_and_says_so(client: TestClient, contest: Contest) -> None:
    _create(client, contest, "spring", timedelta(days=2))
    attached = client.post("/api/v1/admin/competitions/spring/problems", headers=contest.auth("admin"),
                           json={"problem": "sparse_flash_attention_grad"})  # fmt: skip
    assert attached.status_code == 200, attached.text
    assert attached.json()["problems"][0]["backends"] == ["cpu"]  # not cuda and npu, which nothing here judges
    assert "embedded server" in attached.json()["notes"][0]
    named = client.post("/api/v1/admin/competitions/spring/problems", headers=contest.auth("admin"),
                        json={"problem": "sparse_flash_attention_grad", "backends": ["cpu", "cuda"]})  # fmt: skip
    assert named.json()["problems"][0]["backends"] == ["cpu", "cuda"] and named.json()["notes"] == []


def test_with_workers_the_default_is_what_they_served_lately() -> None:
    settings = Settings(broker_url="redis://127.0.0.1:6379/0", judge_secret="s" * 32, token_pepper="p" * 32)
    offered = [Backend.CPU, Backend.CUDA, Backend.NPU]
    now = START

    def seen(queue: str, ago_s: float) -> WorkerView:
        return WorkerView(f"{queue}@h.1", queue, {}, now - timedelta(hours=1), now - timedelta(seconds=ago_s))

    chosen, note = default_backends(offered, settings, [seen("judge.cuda.h200", 30), seen("judge.npu.910b", 3600)],
                                    now)  # fmt: skip
    assert chosen == [Backend.CUDA] and "served in the last 10 minutes" in note
    chosen, note = default_backends(offered, settings, [seen("judge.cpu", 7200)], now)
    assert chosen == offered and "no worker serving them has been seen" in note
