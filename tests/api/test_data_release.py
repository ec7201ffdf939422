"""Issue 18 item 5: the data release, Parquet files with a data card that `datasets` loads,
team names anonymised on request, refused before the contest ends."""

from __future__ import annotations

import io
import zipfile
from datetime import timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.store import Session, list_audit
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
                                                 "ranking.parquet", "reviews.parquet"}  # fmt: skip
    submissions = pq.read_table(folder / "submissions.parquet").to_pylist()
    row = next(r for r in submissions if r["submission_id"] == alpha)
    assert row["team"] == "team-001" and row["files"] == [{"name": "kernel.cpp", "content": KERNEL.decode()}]
    assert row["verdict"] == "AC"
    results = pq.read_table(folder / "results.parquet").to_pylist()
    assert {(r["set"], r["case"]) for r in results if r["submission_id"] == alpha} >= {("private", "p1"),
                                                                                       ("benchmarks", "b1")}
    ranking = pq.read_table(folder / "ranking.parquet").to_pylist()
    assert [r["team"] for r in ranking if r["rank"]] == ["team-001", "team-002"]
    reviews = pq.read_table(folder / "reviews.parquet").to_pylist()
    assert reviews == [{"reviewer": "reviewer-01", "team": "team-001", "total": 70.0,
                        "marks": '{"code_quality": 20.0, "design": 30.0, "presentation": 20.0}', "comment": None}]
    everything = b"".join(p.read_bytes() for p in folder.iterdir())
    assert b"alpha" not in everything and b"rita" not in everything  # names and the comment are left out
    card = (folder / "README.md").read_text()
    assert card.startswith("---\n") and "config_name: submissions" in card and "team-NNN" in card
    assert any(e.action == "export.release" and e.details == {"anonymise": True} for e in list_audit(session))

    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    loaded = datasets.load_dataset(str(folder), "ranking", cache_dir=str(tmp_path / "hf"))
    assert loaded["train"].num_rows == len(ranking) and "final_score" in loaded["train"].column_names
    sources = datasets.load_dataset(str(folder), "submissions", cache_dir=str(tmp_path / "hf"))["train"]
    assert sources.num_rows == 2 and sources[0]["files"][0]["name"] == "kernel.cpp"


def test_without_anonymising_the_names_stay(client: TestClient, session: Session, contest: Contest, clock: Clock,
                                           tmp_path: Path) -> None:  # fmt: skip
    open_quotas(session, contest, clock)
    judged(session, contest, clock, "bravo", benchmarks={"b1": 0.6}, private={"p1": 0.6})
    clock.now = START + timedelta(days=2)
    folder = _release(client, contest, tmp_path)
    assert {r["team"] for r in pq.read_table(folder / "submissions.parquet").to_pylist()} == {"bravo"}
