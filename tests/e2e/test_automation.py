"""Automation (docs/automation.md): every team command's `--json` and exit codes against a live
`opjudge serve`, and the loop of docs/automation.md run as written."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest_pages import AMR_BASELINE, AMR_FIXTURES, LiveSite, start_site

REPO = Path(__file__).resolve().parents[2]
OPJUDGE = [sys.executable, "-c", "from api.cli import main; main()"]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveSite]:
    work = tmp_path_factory.mktemp("automation-site")
    live = start_site(work, tmp_path_factory.getbasetemp() / "oracle-cache", work)
    try:
        yield live
    finally:
        live.process.stop()


def new_team(site: LiveSite, name: str) -> str:
    created = site.call("POST", "/api/v1/admin/competitions/demo/teams", site.tokens.admin, json={"name": name})
    assert created.status_code == 201, created.text
    return str(created.json()["token"]["token"])


def team_env(site: LiveSite, token: str, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPJUDGE_")}
    env.update(XDG_CONFIG_HOME=str(home / "config"), OPJUDGE_URL=site.base, OPJUDGE_TOKEN=token, COLUMNS="80",
               PATH=f"{Path(sys.executable).parent}:{env.get('PATH', '/usr/bin:/bin')}")  # fmt: skip
    return env


def run(args: list[str], env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*OPJUDGE, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def test_every_command_answers_json_with_the_documented_exit_codes(site: LiveSite, tmp_path: Path) -> None:
    env = team_env(site, new_team(site, "json-team"), tmp_path)
    problems = run(["problems", "--json"], env)
    assert problems.returncode == 0, problems.stderr
    assert {p["slug"] for p in json.loads(problems.stdout)} == {"add_mul_relu", "sparse_flash_attention_grad"}
    local = run(["problems", "--local", "--json"], env)
    assert json.loads(local.stdout)[0]["where"] == "this checkout"
    problem = run(["problem", "add_mul_relu", "--json"], env)
    assert json.loads(problem.stdout)["header_name"] == "add_mul_relu.h"
    header = run(["problem", "add_mul_relu", "--header"], env, cwd=tmp_path)
    assert header.returncode == 0 and "kernel_run" in (tmp_path / "add_mul_relu.h").read_text()
    shown = run(["problem", "add_mul_relu"], env)  # the statement and the cases, in 80 columns
    assert "t01_one" in shown.stdout and max(len(line) for line in shown.stdout.splitlines()) <= 80
    board = run(["board", "--json"], env)
    assert board.returncode == 0 and json.loads(board.stdout)["competition"] == "demo"
    first = run(["submit", str(AMR_BASELINE), "--problem", "add_mul_relu", "--mode", "test", "--no-wait",
                 "--json"], env)  # fmt: skip
    assert first.returncode == 0, first.stderr
    created = json.loads(first.stdout)
    # The place in the queue, unless the idle embedded worker took the run at once.
    assert created["mode"] == "test" and (created["queue"] is None or created["queue"]["position"] >= 1)
    again = run(["submit", str(AMR_BASELINE), "--problem", "add_mul_relu", "--mode", "test", "--no-wait",
                 "--json"], env)  # fmt: skip
    assert again.returncode == 75, again.stderr  # 10 s between two test runs: try again later
    refusal = json.loads(again.stdout)
    assert refusal["status"] == 429 and refusal["exit_code"] == 75 and 1 <= refusal["retry_after_s"] <= 10
    waited = run(["status", str(created["id"]), "--wait", "--json"], env)
    assert waited.returncode == 0, waited.stderr
    detail = json.loads(waited.stdout)
    assert detail["submission"]["verdict"] == "AC" and {c["case_set"] for c in detail["runs"][0]["cases"]} == {"tests"}
    listed = run(["status", "--json"], env)
    assert [s["mode"] for s in json.loads(listed.stdout)] == ["test"]
    usage = run(["submit", str(AMR_BASELINE), "--problem", "add_mul_relu", "--mode", "fast", "--json"], env)
    assert usage.returncode == 2 and "test, benchmark or ranked" in json.loads(usage.stdout)["error"]
    binary = tmp_path / "kernel.cpp"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(64))
    refused = run(["submit", str(binary), "--problem", "add_mul_relu", "--mode", "benchmark", "--json"], env)
    assert refused.returncode == 1 and json.loads(refused.stdout)["status"] == 422  # never judged, nothing used
    statuses = run(["status", "--json"], env)
    assert len(json.loads(statuses.stdout)) == 1


def test_the_documented_loop_goes_from_test_to_benchmark(site: LiveSite, tmp_path: Path) -> None:
    text = (REPO / "docs" / "automation.md").read_text()
    script = re.search(r"```sh\n(#!/usr/bin/env bash\n# iterate\.sh.*?)```", text, re.S)
    assert script is not None, "docs/automation.md has no iterate.sh"
    (tmp_path / "iterate.sh").write_text(script.group(1))
    (tmp_path / "kernel.cpp").write_bytes((AMR_FIXTURES / "wrong_no_relu.cpp").read_bytes())
    (tmp_path / "edit-kernel.sh").write_text(f"#!/bin/sh\ncp {AMR_BASELINE} kernel.cpp\n")  # the "agent"
    (tmp_path / "edit-kernel.sh").chmod(0o755)
    env = {**team_env(site, new_team(site, "loop-team"), tmp_path), "P": "add_mul_relu"}
    done = subprocess.run(["bash", "iterate.sh"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert done.stdout.startswith("WA"), done.stdout  # the first test run, and why
    assert "b01_4m_f32" in done.stdout and "x the baseline" in done.stdout and "score vs baseline:" in done.stdout
