"""Data release (docs/organisers.md, "Data release"): the whole contest as Parquet files with a data card, for
publication after the contest ends; loadable with Hugging Face `datasets` (one config per file).

Files: `submissions` (each submission's sources, verdict and score), `results` (per case, of
the run that counts), `ranking` (the final ranking: the published snapshot, else as computed
now) and `reviews` (each reviewer's current total per finalist). `modes` chooses which run modes'
submissions are in it (ranked only by default: test runs and failed builds are drafts).

With `anonymise` nothing joins the release to the public board or to another release: team and
reviewer names become random pseudonyms (`team-3fa91c`, not numbered in any order the teams had),
submission numbers are random, times are kept to the day, file names become `file-1.cpp`, ..., the
free text that may name people (review comments, disqualification reasons) is left out, and the
ranking, whose scores and ranks the public final board shows beside the teams' names, is not in it.
The sources are kept as submitted, so a name written in them stays (the data card says so).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from api.store.audit import record_audit
from api.store.competitions import competition_row
from api.store.errors import ConflictError
from api.store.models import CaseResultRow, Problem, Reviewer, Run, Submission, SubmissionFile, Team
from api.store.ranking import leaderboard
from api.store.reviews import list_reviews
from api.store.views import Principal
from judge.modes import RunMode

_BATCH = 500


@dataclass(frozen=True)
class Release:
    folder: Path
    files: dict[str, int]  # parquet file -> rows
    anonymised: bool
    modes: tuple[RunMode, ...] = (RunMode.RANKED,)


def build_release(session: Session, *, competition: str, folder: Path, anonymise: bool, actor: Principal | None,
                  now: datetime, modes: tuple[RunMode, ...] = (RunMode.RANKED,)) -> Release:  # fmt: skip
    """Write the release into `folder` (audited; commits first). Refused before the window ends."""
    comp = competition_row(session, competition)
    if now < comp.ends_at:
        raise ConflictError(f"the data release is for after the contest; the window is open until "
                            f"{comp.ends_at.isoformat()}")  # fmt: skip
    record_audit(session, actor=actor, action="export.release", now=now, competition_id=comp.id, target=competition,
                 details={"anonymise": anonymise, "modes": [m.value for m in modes]})  # fmt: skip
    session.commit()
    names = _Names(session, comp.id, anonymise)
    folder.mkdir(parents=True, exist_ok=True)
    counts = {
        "submissions": _write(folder / "submissions.parquet", _SUBMISSIONS,
                              _submissions(session, comp.id, names, modes)),
        "results": _write(folder / "results.parquet", _RESULTS, _results(session, comp.id, names, modes)),
    }
    if not anonymise:  # its scores and ranks are on the public final board, beside the teams' names
        counts["ranking"] = _write(folder / "ranking.parquet", _RANKING, _ranking(session, competition, names))
    counts["reviews"] = _write(folder / "reviews.parquet", _REVIEWS, _reviews(session, comp.id, names))
    (folder / "README.md").write_text(data_card(comp.title, competition, counts, anonymise=anonymise, now=now,
                                                modes=modes))  # fmt: skip
    session.rollback()
    return Release(folder, counts, anonymise, modes)


class _Names:
    """Team and reviewer names and submission numbers as released: as they are, or random."""

    def __init__(self, session: Session, competition_id: int, anonymise: bool) -> None:
        teams = session.execute(select(Team.id, Team.name).where(Team.competition_id == competition_id)).all()
        reviewers = session.execute(select(Reviewer.id, Reviewer.name)
                                    .where(Reviewer.competition_id == competition_id)).all()
        self.anonymise = anonymise
        self.team = {i: _pseudonym("team", 3) if anonymise else name for i, name in teams}
        self.reviewer = {i: _pseudonym("reviewer", 2) if anonymise else name for i, name in reviewers}
        self._submissions: dict[int, int] = {}

    def submission(self, submission_id: int) -> int:
        """The submission's number: its id, or a random 9-digit number, the same across the release's files."""
        if not self.anonymise:
            return submission_id
        taken = set(self._submissions.values())
        while submission_id not in self._submissions:
            number = 100_000_000 + secrets.randbelow(900_000_000)
            if number not in taken:
                self._submissions[submission_id] = number
        return self._submissions[submission_id]

    def time(self, value: datetime) -> datetime:
        """To the day when anonymised: the public board shows a team's last submission to the microsecond."""
        return value.replace(hour=0, minute=0, second=0, microsecond=0) if self.anonymise else value

    def file(self, position: int, name: str) -> str:
        return f"file-{position}{PurePosixPath(name).suffix}" if self.anonymise else name

    def text(self, value: str | None) -> str | None:
        return None if self.anonymise else value


def _pseudonym(kind: str, nbytes: int) -> str:
    return f"{kind}-{secrets.token_hex(nbytes)}"  # a clash is harmless: names are labels, ids stay apart


def _schema(fields: list[tuple[str, Any]]) -> Any:
    import pyarrow as pa

    return pa.schema([(name, kind) for name, kind in fields])


def _types() -> dict[str, Any]:
    import pyarrow as pa

    return {"int": pa.int64(), "str": pa.string(), "float": pa.float64(), "bool": pa.bool_(),
            "time": pa.timestamp("us", tz="UTC"),
            "files": pa.list_(pa.struct([("name", pa.string()), ("content", pa.string())]))}  # fmt: skip


_SUBMISSIONS = [("submission_id", "int"), ("team", "str"), ("problem", "str"), ("backend", "str"),
                ("mode", "str"), ("created_at", "time"), ("verdict", "str"), ("score", "float"),
                ("disqualified", "bool"),
                ("disqualify_reason", "str"), ("files", "files")]  # fmt: skip
_RESULTS = [("submission_id", "int"), ("team", "str"), ("problem", "str"), ("backend", "str"), ("case", "str"),
            ("set", "str"), ("passed", "bool"), ("verdict", "str"), ("median_ns", "float"),
            ("baseline_median_ns", "float"), ("ratio", "float"), ("gflops", "float")]  # fmt: skip
_RANKING = [("rank", "int"), ("team", "str"), ("online_score", "float"), ("reviewer_score", "float"),
            ("reviewers", "int"), ("final_score", "float"), ("disqualified", "bool"), ("submissions", "str")]
_REVIEWS = [("reviewer", "str"), ("team", "str"), ("total", "float"), ("marks", "str"), ("comment", "str")]


def _write(path: Path, fields: list[tuple[str, str]], rows: Iterator[dict[str, Any]]) -> int:
    """Rows to one Parquet file, `_BATCH` at a time (a contest's sources need not fit in memory)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = _types()
    schema = _schema([(name, types[kind]) for name, kind in fields])
    count, batch = 0, []
    with pq.ParquetWriter(path, schema, compression="zstd") as writer:
        for row in rows:
            batch.append(row)
            if len(batch) >= _BATCH:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                count, batch = count + len(batch), []
        writer.write_table(pa.Table.from_pylist(batch, schema=schema))
    return count + len(batch)


def _submissions(session: Session, competition_id: int, names: _Names,
                 modes: tuple[RunMode, ...]) -> Iterator[dict[str, Any]]:
    after = 0
    while True:
        rows = session.execute(
            select(Submission, Problem.slug).join(Problem, Problem.id == Submission.problem_id)
            .where(Submission.competition_id == competition_id, Submission.id > after, Submission.mode.in_(modes))
            .order_by(Submission.id).limit(_BATCH)
        ).all()  # fmt: skip
        if not rows:
            return
        files: dict[int, list[dict[str, str]]] = {}
        for sid, name, content in session.execute(
            select(SubmissionFile.submission_id, SubmissionFile.name, SubmissionFile.content)
            .where(SubmissionFile.submission_id.in_([s.id for s, _p in rows]))
            .order_by(SubmissionFile.submission_id, SubmissionFile.position)
        ):  # fmt: skip
            kept = files.setdefault(sid, [])
            kept.append({"name": names.file(len(kept) + 1, name),
                         "content": bytes(content).decode("utf-8", "replace")})
        for s, problem in rows:
            yield {"submission_id": names.submission(s.id), "team": names.team.get(s.team_id), "problem": problem,
                   "backend": s.backend.value, "mode": s.mode.value, "created_at": names.time(s.created_at),
                   "verdict": s.verdict and s.verdict.value,
                   "score": s.score, "disqualified": s.disqualified_at is not None,
                   "disqualify_reason": names.text(s.disqualify_reason), "files": files.get(s.id, [])}  # fmt: skip
        after = rows[-1][0].id


def _results(session: Session, competition_id: int, names: _Names,
             modes: tuple[RunMode, ...]) -> Iterator[dict[str, Any]]:
    rows = session.execute(
        select(Submission.id, Submission.team_id, Problem.slug, Submission.backend, CaseResultRow)
        .join(Run, Run.id == Submission.scored_run_id).join(Problem, Problem.id == Submission.problem_id)
        .join(CaseResultRow, CaseResultRow.run_id == Run.id)
        .where(Submission.competition_id == competition_id, Submission.mode.in_(modes))
        .order_by(Submission.id, CaseResultRow.position).execution_options(yield_per=1000)
    )  # fmt: skip
    for sid, team_id, problem, backend, c in rows:
        yield {"submission_id": names.submission(sid), "team": names.team.get(team_id), "problem": problem,
               "backend": backend.value,
               "case": c.name, "set": c.case_set.value, "passed": c.passed, "verdict": c.verdict.value,
               "median_ns": c.median_ns, "baseline_median_ns": c.baseline_median_ns, "ratio": c.ratio,
               "gflops": c.gflops}  # fmt: skip


def _ranking(session: Session, competition: str, names: _Names) -> Iterator[dict[str, Any]]:
    board = leaderboard(session, competition=competition, final=True)
    for row in board.rows:
        yield {"rank": row.rank, "team": names.team.get(row.team_id, row.team_name),
               "online_score": row.online_score, "reviewer_score": row.reviewer_score, "reviewers": row.reviewers,
               "final_score": row.final_score, "disqualified": row.disqualified,
               "submissions": json.dumps(row.submission_ids, sort_keys=True)}  # fmt: skip


def _reviews(session: Session, competition_id: int, names: _Names) -> Iterator[dict[str, Any]]:
    for r in list_reviews(session, competition_id=competition_id):
        yield {"reviewer": names.reviewer.get(r.reviewer_id), "team": names.team.get(r.team_id), "total": r.total,
               "marks": json.dumps(r.marks, sort_keys=True), "comment": names.text(r.comment)}  # fmt: skip


_WHAT = {
    "submissions": "every submission of the modes released: team, problem, backend, mode, time, verdict, "
                   "score against the baseline, "
                   "disqualified, and its source files (`files`: name, content)",
    "results": "per case of the run that counts: set (tests, benchmarks, private), passed, verdict, median time, "
               "the baseline's median time from the same run, ratio r = t_sub / t_base",
    "ranking": "the final ranking: online score (private cases), reviewer score, "
               "final score = online_weight x online + reviewer_weight x reviewer",
    "reviews": "each reviewer's current total (and rubric marks) per finalist team",
}


def data_card(title: str, slug: str, counts: dict[str, int], *, anonymise: bool, now: datetime,
              modes: tuple[RunMode, ...] = (RunMode.RANKED,)) -> str:
    """README.md with the YAML header `datasets` reads: one config per Parquet file."""
    configs = "".join(f"- config_name: {name}\n  data_files: {name}.parquet\n" for name in counts)
    table = "\n".join(f"| {name} | {count} | {_WHAT[name]} |" for name, count in counts.items())
    people = ("Team and reviewer names are random pseudonyms (`team-3fa91c`, `reviewer-9b2e`), submission numbers "
              "are random, times are kept to the day and file names are `file-1.cpp`, ... (an `#include` in a "
              "source names the original file); review comments and disqualification reasons are left out, and "
              "so is the final ranking, whose scores and ranks the public board shows beside the teams' names. "
              "Nothing here joins to the board or to another release. The sources are as submitted: a name a "
              "team wrote in its own code is still there."
              if anonymise else "Team and reviewer names are as registered.")  # fmt: skip
    people += f"\n\nRun modes released: {', '.join(m.value for m in modes)}."
    return f"""---
pretty_name: "{title} ({slug}), opjudge data release"
configs:
{configs}---

# {title}: submissions, results and final ranking

Exported by opjudge on {now.date().isoformat()}, after the contest ended.

| config | rows | what |
|---|---|---|
{table}

Load with `datasets.load_dataset("<this folder>", "submissions")` (or `results`, `ranking`, `reviews`),
or read each file with any Parquet reader.

## People

{people}

## Caveats

Times were measured on the organisers' hardware and compare only within one run (the ratio is the
figure to use). A disqualified submission is kept, marked, and not ranked.
"""
