"""The README's short tour, run as written against `opjudge serve --seed-demo --judge-baselines`
(what `make run` starts): every request of it must succeed."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.e2e.services import OPJUDGE, Process, free_port, parse_demo_tokens, service_env, wait_until

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def tour_block() -> str:
    """The first sh block after the "A short tour" heading."""
    text = (REPO / "README.md").read_text()
    tour = text[text.index("## A short tour"):]
    found = re.search(r"```sh\n(.*?)```", tour, re.S)
    assert found is not None, "the README has no tour block"
    return found.group(1)


def test_the_readme_tour_works_as_written(tmp_path: Path, log_dir: Path) -> None:
    if shutil.which("curl") is None:
        pytest.skip("the tour uses curl")
    port = free_port()
    env = service_env(OPJUDGE_DATABASE_URL=f"sqlite:///{tmp_path / 'var' / 'opjudge.db'}",
                      OPJUDGE_WORK_ROOT=str(tmp_path / "work"), OPJUDGE_CACHE_DIR=str(tmp_path / "cache"),
                      OPJUDGE_MIN_INTERVAL_S="90", OPJUDGE_RUN_CASE_SETS="tests")  # the demo's real interval
    for name in ("OPJUDGE_JUDGE_SECRET", "OPJUDGE_TOKEN_PEPPER"):
        del env[name]  # as on a fresh clone
    argv = [*OPJUDGE, "serve", "--port", str(port), "--seed-demo", "--judge-baselines", "--log-level", "warning"]
    server = Process("tour-serve", argv, env=env, log_dir=log_dir)
    try:
        tokens = wait_until("the demo tokens", lambda: parse_demo_tokens(server.log_path.read_text()),
                            timeout_s=120, log=server.log)  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        wait_until("the server to answer", lambda: httpx.get(f"{base}/api/v1/competitions/demo", timeout=5)
                   .status_code == 200, timeout_s=90, log=server.log)  # fmt: skip
        block = tour_block()
        first, rest = block.split("\n", 1)
        assert first.startswith("T=opj_team_...; A=opj_admin_...; R=opj_reviewer_...; S=http://127.0.0.1:8000")
        # charlie, as the tour says; every curl must succeed (-f), xdg-open is left out.
        script = (f"set -euo pipefail\ncurl() {{ command curl -sS -f \"$@\"; echo; }}\nxdg-open() {{ :; }}\n"
                  f"T={tokens.teams['charlie']}; A={tokens.admin}; R={tokens.reviewer}; S={base}\n{rest}")
        done = subprocess.run(["bash", "-c", script], cwd=REPO, capture_output=True, text=True, timeout=180,
                              env={**env, "PATH": f"{Path(OPJUDGE[0]).parent}:/usr/bin:/bin"})  # fmt: skip
        assert done.returncode == 0, f"{done.stdout}\n{done.stderr}\n{server.log()}"
        assert '"mode":"test"' in done.stdout.replace(" ", "")  # the tour's submission, read back
        assert "429" not in done.stderr
    finally:
        server.stop()
