"""The data release (docs/organisers.md), Parquet files with a data card that `datasets` loads,
team names anonymised on request, refused before the contest ends."""

from __future__ import annotations

import io
import zipfile
from datetime import timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.store.audit import list_audit
from api.store.db import Session
from api.store.final_ranking import set_final_published
from tests.api.conftest import START, Clock, Contest
from tests.api.helpers import KERNEL
from tests.api.judging import judged, open_quotas

pq = pytest.importorskip("pyarrow.parquet")


def _release(client: TestClient, contest: Contest, tmp_path: Path, **params: str) -> Path:
    answer = client.get(f"/api/v1/admin/competitions/{contest.slug}/release.zip", headers=contest.auth("admin"),
                        params=params)  # fmt: skip
    assert answer.status_code == 200, answer.text
    zipfile.ZipFile(io.BytesIO(answer.content)).extractall(tmp_path)
    return tmp_path / contest.slug


def test_the_release_is_parquet_with_a_data_card_and_anonymised_names(
    client: TestClient, session: Session, contest: Contest, clock: Clock, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    open_quotas(session, contest, clock)
    alpha = judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5}, private={"p1": 0.5})
    judged(session, contest, clock, "bravo", benchmarks={"b1": 0.6}, private={"p1": 0.6})
    marks = {"marks": {"design": 30, "code_quality": 20, "presentation": 20}, "comment": "alpha explained well"}
    assert client.put(f"/api/v1/review/teams/{contest.team_ids['alpha']}", headers=contest.auth("reviewer"),
                      json=marks).status_code == 200  # fmt: skip
    early = client.get(f"/api/v1/admin/competitions/{contest.slug}/release.zip", headers=contest.auth("admin"))
    assert early.status_code == 409 and "after the contest" in early.json()["detail"]

    clock.now = START + timedelta(days=1, hours=1)
    folder = _release(client, contest, tmp_path, anonymise="true")
    assert {p.name for p in folder.iterdir()} == {"README.md", "submissions.parquet", "results.parquet",
                                                 "reviews.parquet"}  # fmt: skip
    submissions = pq.read_table(folder / "submissions.parquet").to_pylist()
    assert len(submissions) == 2 and {r["mode"] for r in submissions} == {"ranked"}
    reviews = pq.read_table(folder / "reviews.parquet").to_pylist()
    assert len(reviews) == 1 and reviews[0]["comment"] is None  # alpha's review, under alpha's pseudonym
    row = next(r for r in submissions if r["team"] == reviews[0]["team"])
    assert row["files"] == [{"name": "file-1.cpp", "content": KERNEL.decode()}] and row["verdict"] == "AC"
    results = pq.read_table(folder / "results.parquet").to_pylist()
    assert {(r["set"], r["case"]) for r in results if r["submission_id"] == row["submission_id"]} >= {
        ("private", "p1"), ("benchmarks", "b1")}
    everything = b"".join(p.read_bytes() for p in folder.iterdir())
    assert b"alpha" not in everything and b"rita" not in everything  # names and the comment are left out
    card = (folder / "README.md").read_text()
    assert card.startswith("---\n") and "config_name: submissions" in card and "pseudonyms" in card
    assert any(e.action == "export.release" and e.details == {"anonymise": True, "modes": ["ranked"]}
               for e in list_audit(session))

    # Try the joins an attacker would: the public final board against the release.
    set_final_published(session, competition=contest.slug, published=True, actor=None, now=clock.now)
    answer = client.get(f"/api/v1/competitions/{contest.slug}/leaderboard", params={"final": "true"})
    assert answer.status_code == 200, answer.text
    board = answer.json()
    public_ids = {i for r in board["rows"] for i in r["submission_ids"].values()} | {alpha}
    assert not public_ids & {r["submission_id"] for r in submissions}  # no shared submission number
    last_times = {r.get("last_submission_at") for r in board["rows"]}
    released_times = {r["created_at"].isoformat() for r in submissions}
    assert not {t for t in last_times if t} & released_times  # times to the day only
    assert all(r["created_at"].hour == 0 and r["created_at"].minute == 0 for r in submissions)
    assert {r["team"] for r in submissions}.isdisjoint({"team-001", "team-002"})  # not numbered in id order
    again = _release(client, contest, tmp_path / "again", anonymise="true")
    assert {r["team"] for r in pq.read_table(again / "submissions.parquet").to_pylist()}.isdisjoint(
        {r["team"] for r in submissions})  # and not the same from one release to the next: no key across them

    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    sources = datasets.load_dataset(str(folder), "submissions", cache_dir=str(tmp_path / "hf"))["train"]
    assert sources.num_rows == 2 and sources[0]["files"][0]["name"] == "file-1.cpp"


def test_the_release_takes_the_modes_asked_for(client: TestClient, session: Session, contest: Contest, clock: Clock,
                                               tmp_path: Path) -> None:  # fmt: skip
    open_quotas(session, contest, clock)
    judged(session, contest, clock, "bravo", benchmarks={"b1": 0.6}, private={"p1": 0.6})
    clock.now = START + timedelta(days=2)
    bad = client.get(f"/api/v1/admin/competitions/{contest.slug}/release.zip", headers=contest.auth("admin"),
                     params={"modes": "ranked,draft"})  # fmt: skip
    assert bad.status_code == 422 and "modes must be some of" in bad.json()["detail"]
    folder = _release(client, contest, tmp_path, modes="test")
    assert pq.read_table(folder / "submissions.parquet").num_rows == 0  # the ranked one is left out
    assert "Run modes released: test." in (folder / "README.md").read_text()


def test_without_anonymising_the_names_stay(client: TestClient, session: Session, contest: Contest, clock: Clock,
                                           tmp_path: Path) -> None:  # fmt: skip
    open_quotas(session, contest, clock)
    judged(session, contest, clock, "bravo", benchmarks={"b1": 0.6}, private={"p1": 0.6})
    clock.now = START + timedelta(days=2)
    folder = _release(client, contest, tmp_path)
    assert {r["team"] for r in pq.read_table(folder / "submissions.parquet").to_pylist()} == {"bravo"}
