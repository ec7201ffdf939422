"""The deployment files, checked without Docker (`make deploy-check` builds and runs them where it is).

The compose file must parse and name the services of docs/operations.md, "The parts"; every image it builds
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
                assert source.split("/")[0] not in _dockerignored(), f"{dockerfile}: COPY {source} is .dockerignored"


def _dockerignored() -> set[str]:
    lines = (REPO_ROOT / ".dockerignore").read_text().splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def test_the_build_context_leaves_out_the_venv_and_var():
    assert {".venv", "var", ".git"} <= _dockerignored()


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


WORKER_DOCKERFILES = sorted((REPO_ROOT / "docker").glob("worker-*/Dockerfile"))


def _shell_commands(dockerfile_text: str) -> list[list[str]]:
    """Each `&&`/`;`-separated command of the file's RUN lines, as words (continuations joined)."""
    joined = re.sub(r"\\\n", " ", dockerfile_text)
    commands = []
    for line in joined.splitlines():
        if match := re.match(r"\s*RUN\s+(.*)", line):
            commands += [part.split() for part in re.split(r"&&|;", match.group(1))]
    return commands


def test_there_are_worker_dockerfiles_to_check():
    assert {p.parent.name for p in WORKER_DOCKERFILES} >= {"worker-cpu", "worker-cuda", "worker-npu"}


@pytest.mark.parametrize("dockerfile", WORKER_DOCKERFILES, ids=lambda p: p.parent.name)
def test_every_worker_installs_the_project_editable(dockerfile):
    # api/settings.py puts REPO_ROOT beside its own file: installed into site-packages, problems/,
    # reference_kernels/ and var/ would be looked for there.
    commands = _shell_commands(dockerfile.read_text())
    installs = [words for words in commands if "pip" in words and "install" in words and "." in words]
    assert installs, f"{dockerfile}: no `pip install ... .` of the project found"
    for words in installs:
        before = words[words.index(".") - 1]
        assert before in ("-e", "--editable"), f"{dockerfile}: `{' '.join(words)}` is not an editable install"
    made = [folder for words in commands if words[:2] == ["mkdir", "-p"] for folder in words[2:]]
    for folder in ("var/work", "var/cache"):
        assert folder in made, f"{dockerfile}: does not create {folder}"


@pytest.mark.parametrize("dockerfile", WORKER_DOCKERFILES, ids=lambda p: p.parent.name)
def test_every_worker_sets_the_sandbox_mode_the_worker_reads(dockerfile):
    # workers/ read OPJUDGE_SANDBOX_MODE; OPJUDGE_SANDBOX alone is only the command line's fallback.
    assert re.search(r"^\s*(?:ENV\s+)?OPJUDGE_SANDBOX_MODE=(strict|auto)\b", dockerfile.read_text(), re.M), (
        f"{dockerfile}: sets no OPJUDGE_SANDBOX_MODE"
    )
