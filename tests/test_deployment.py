"""The deployment files, checked as far as this machine allows (it has no Docker daemon).

The compose file must parse and name the services issue 4 asks for; every image it builds
must have its Dockerfile; every file a Dockerfile copies must exist; each worker must serve
the queue the API routes its backend to.
"""

from __future__ import annotations

import re

import pytest

yaml = pytest.importorskip("yaml")

from tests.conftest import REPO_ROOT  # noqa: E402

COMPOSE = REPO_ROOT / "docker-compose.yml"


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def test_services_and_profiles(compose):
    services = compose["services"]
    assert {"postgres", "redis", "api", "worker-cpu", "flower"} <= services.keys()
    assert services["worker-cuda"]["profiles"] == ["cuda"]
    assert services["worker-npu"]["profiles"] == ["npu"]
    for name in ("postgres", "redis", "api", "worker-cpu", "flower"):
        assert "profiles" not in services[name], f"{name} must start without a profile"


def test_every_built_image_has_its_dockerfile_and_sources(compose):
    for name, service in compose["services"].items():
        build = service.get("build")
        if not build:
            continue
        context = REPO_ROOT / build["context"]
        dockerfile = context / build["dockerfile"]
        assert dockerfile.is_file(), f"{name}: {dockerfile} is missing"
        for line in dockerfile.read_text().splitlines():
            match = re.match(r"\s*(COPY|ADD)\s+(?!--from)(.+)", line)
            if not match:
                continue
            parts = [p for p in match.group(2).split() if not p.startswith("--")]
            for source in parts[:-1]:
                assert (context / source).exists(), f"{dockerfile}: COPY {source} does not exist"


def test_workers_listen_on_the_queues_the_api_routes_to(compose):
    worker_files = {"worker-cpu": "judge.cpu", "worker-cuda": "judge.cuda.", "worker-npu": "judge.npu."}
    for name, queue in worker_files.items():
        service = compose["services"][name]
        dockerfile = REPO_ROOT / service["build"]["dockerfile"]
        text = " ".join(str(service.get("command", ""))) + dockerfile.read_text()
        text += (REPO_ROOT / "docker/worker-npu/entrypoint.sh").read_text() if name == "worker-npu" else ""
        assert queue in text, f"{name} does not serve {queue}"


def test_secrets_are_required_not_written(compose):
    text = COMPOSE.read_text()
    for variable in ("OPJUDGE_JUDGE_SECRET", "OPJUDGE_TOKEN_PEPPER"):
        assert re.search(rf"{variable}: \$\{{{variable}:\?", text), f"{variable} must come from .env"
