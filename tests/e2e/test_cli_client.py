"""The team CLI (`opjudge login/submit/status/board`) as a team runs it, against a live `opjudge serve`.

The first tests need no server: where the URL and token come from, and the
config file's mode. The rest run the real `opjudge` command in a subprocess
against the embedded server, whose in-process worker judges for real.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from api.client.config import ConfigError, config_path, read_config_file, resolve, write_config_file
from api.store.public_ids import PATTERN
from tests.e2e.conftest_pages import AMR_BASELINE, AMR_FIXTURES, LiveSite, start_site

OPJUDGE = [sys.executable, "-c", "from api.cli import main; main()"]


# ---- configuration (no server) ------------------------------------------------------------------


@pytest.fixture
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("OPJUDGE_URL", raising=False)
    monkeypatch.delenv("OPJUDGE_TOKEN", raising=False)
    return tmp_path / "config"


def test_the_config_file_is_private_and_read_back(config_home: Path) -> None:
    path = write_config_file(url="http://judge.example:8000", token="opj_team_abc")
    assert path == config_home / "opjudge" / "config.toml" == config_path()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_config_file() == {"url": "http://judge.example:8000", "token": "opj_team_abc"}


def test_flags_win_over_the_environment_which_wins_over_the_file(config_home: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    write_config_file(url="http://from-file", token="opj_file")
    assert (resolve(url=None, token=None).url, resolve(url=None, token=None).token) == ("http://from-file", "opj_file")
    monkeypatch.setenv("OPJUDGE_URL", "http://from-env/")
    monkeypatch.setenv("OPJUDGE_TOKEN", "opj_env")
    assert (resolve(url=None, token=None).url, resolve(url=None, token=None).token) == ("http://from-env", "opj_env")
    chosen = resolve(url="http://from-flag", token="opj_flag")
    assert (chosen.url, chosen.token, chosen.url_from, chosen.token_from) == (
        "http://from-flag", "opj_flag", "flag", "flag")


def test_no_token_anywhere_is_a_clear_error(config_home: Path) -> None:
    with pytest.raises(ConfigError, match="opjudge login"):
        resolve(url=None, token=None)


def test_a_config_file_that_is_not_utf8_is_one_clear_line(config_home: Path) -> None:
    path = config_path()
    path.parent.mkdir(parents=True)
    path.write_bytes(b'url = "http://caf\xe9"\n')  # Latin-1, as another editor may save it
    with pytest.raises(ConfigError, match=f"cannot read {path}.*run `opjudge login` again"):
        read_config_file()
    done = opjudge(["status"], home=config_home)
    assert done.returncode == 2 and "Traceback" not in done.stderr, explain(done)
    assert done.stderr.startswith(f"error: cannot read {path}") and done.stderr.count("\n") == 1, explain(done)


def test_an_unwritable_config_folder_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", "/proc/nonexistent")  # nothing can be created under /proc
    with pytest.raises(ConfigError, match="cannot write /proc/nonexistent/opjudge/config.toml.*XDG_CONFIG_HOME"):
        write_config_file(url="http://judge.example", token="opj_team_abc")
    (tmp_path / "opjudge").write_text("a file where the folder should be")
    with pytest.raises(ConfigError, match="cannot write"):
        write_config_file(url="http://judge.example", token="opj_team_abc", path=tmp_path / "opjudge" / "config.toml")


# ---- against a live server ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveSite]:
    work = tmp_path_factory.mktemp("cli-site")
    live = start_site(work, tmp_path_factory.getbasetemp() / "oracle-cache", work)
    try:
        yield live
    finally:
        live.process.stop()


def opjudge(args: list[str], *, home: Path, url: str | None = None, token: str | None = None,
            timeout_s: float = 300) -> subprocess.CompletedProcess[str]:
    """Run `opjudge ARGS` as a team would, with its own config folder; output as text."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPJUDGE_")}
    env.update(XDG_CONFIG_HOME=str(home), COLUMNS="160", NO_COLOR="1")
    if url:
        env["OPJUDGE_URL"] = url
    if token:
        env["OPJUDGE_TOKEN"] = token
    return subprocess.run([*OPJUDGE, *args], env=env, capture_output=True, text=True, timeout=timeout_s)


def explain(done: subprocess.CompletedProcess[str]) -> str:
    return f"exit {done.returncode}\n--- stdout ---\n{done.stdout}\n--- stderr ---\n{done.stderr}"


@pytest.mark.slow
def test_login_saves_the_token_and_board_uses_it(site: LiveSite, tmp_path: Path) -> None:
    done = opjudge(["login", "--url", site.base, "--token", site.tokens.teams["alpha"]], home=tmp_path)
    assert done.returncode == 0, explain(done)
    assert "team alpha" in done.stdout
    saved = tmp_path / "opjudge" / "config.toml"
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    board = opjudge(["board"], home=tmp_path)  # URL and token from the file
    assert board.returncode == 0, explain(board)
    assert "opjudge demo: leaderboard" in board.stdout and "no results yet" in board.stdout


@pytest.mark.slow
def test_submit_of_the_baseline_ends_with_ac_and_the_case_table(site: LiveSite, tmp_path: Path) -> None:
    done = opjudge(["submit", str(AMR_BASELINE), "--problem", "add_mul_relu", "--backend", "cpu"],
                   home=tmp_path, url=site.base, token=site.tokens.teams["bravo"])  # fmt: skip
    assert done.returncode == 0, explain(done)
    out = done.stdout
    for step in ("queued", "building", "checking", "timing", "scored"):
        assert f"  {step} at " in out, explain(done)  # the steps, followed as they happened
    assert " AC " in out and "accepted" in out
    assert "cases" in out and "b01_4m_f32" in out and "b02_4m_bf16" in out and "t01_one" in out
    assert "score against the baseline:" in out
    listing = opjudge(["status"], home=tmp_path, url=site.base, token=site.tokens.teams["bravo"])
    assert listing.returncode == 0 and "AC" in listing.stdout, explain(listing)
    board = opjudge(["board"], home=tmp_path, url=site.base, token=site.tokens.teams["bravo"])
    assert board.returncode == 0, explain(board)
    assert "bravo (you)" in board.stdout and "baseline (reference)" in board.stdout


@pytest.mark.slow
def test_a_compile_error_ends_with_the_log_and_exit_1(site: LiveSite, tmp_path: Path) -> None:
    token = site.tokens.teams["charlie"]
    done = opjudge(["submit", str(AMR_FIXTURES / "ce_missing_semicolon.cpp"), "--problem", "add_mul_relu"],
                   home=tmp_path, url=site.base, token=token)  # fmt: skip
    assert done.returncode == 1, explain(done)
    assert " CE " in done.stdout and "compile error" in done.stdout
    assert "compiler log:" in done.stdout and "expected" in done.stdout and "error" in done.stdout
    submission_id = done.stdout.split("submission ", 1)[1].split()[0]
    assert PATTERN.fullmatch(submission_id), done.stdout  # the public id, not a number that counts uploads
    status = opjudge(["status", submission_id], home=tmp_path, url=site.base, token=token)
    assert status.returncode == 1 and " CE " in status.stdout, explain(status)


@pytest.mark.slow
def test_refusals_are_explained(site: LiveSite, tmp_path: Path) -> None:
    source = str(AMR_FIXTURES / "ok_simple.cpp")
    team = site.tokens.teams["alpha"]

    def submit(*extra: str, token: str = team, files: tuple[str, ...] = (source,)) -> subprocess.CompletedProcess[str]:
        return opjudge(["submit", *files, "--no-wait", *extra], home=tmp_path, url=site.base, token=token)

    unknown = submit("--problem", "add_mul_relu", token="opj_team_not-a-real-token")
    assert unknown.returncode == 1 and "401" in unknown.stderr and "opjudge login" in unknown.stderr

    reviewer = submit("--problem", "add_mul_relu", token=site.tokens.reviewer)
    assert reviewer.returncode == 1 and "403" in reviewer.stderr and "team token" in reviewer.stderr

    wrong_problem = submit("--problem", "no_such_problem")
    assert wrong_problem.returncode == 1 and "422" in wrong_problem.stderr, explain(wrong_problem)
    assert "no_such_problem" in wrong_problem.stderr

    huge = tmp_path / "huge.cpp"
    huge.write_text("// padding\n" * 60_000)  # ~660 KiB, over the 512 KiB per file
    too_large = submit("--problem", "add_mul_relu", files=(str(huge),))
    assert too_large.returncode == 1 and "413" in too_large.stderr and "too large" in too_large.stderr

    admin = site.tokens.admin
    patched = site.call("PATCH", "/api/v1/admin/competitions/demo", admin, json={"min_interval_s": 3600})
    assert patched.status_code == 200, patched.text
    try:
        # A compile error is judged in a second and counts like any submission towards the interval.
        first = submit("--problem", "add_mul_relu", files=(str(AMR_FIXTURES / "ce_missing_semicolon.cpp"),))
        second = submit("--problem", "add_mul_relu")
        refused = second if first.returncode == 0 else first
        assert refused.returncode == 75 and "429" in refused.stderr, explain(refused)  # 75: try again later
        assert "try again in" in refused.stderr and " s)" in refused.stderr
    finally:
        site.call("PATCH", "/api/v1/admin/competitions/demo", admin, json={"min_interval_s": 0})

    nothing = opjudge(["submit", source, "--problem", "add_mul_relu"], home=tmp_path / "empty", url=site.base)
    assert nothing.returncode == 2 and "no token" in nothing.stderr
