"""Standings: which entry of each team ranks, its score per docs/rules.md, and the cached table.

`compute_standings` ranks from SQL: the entries that can rank (the scored run of
each submission, or the run finished by `as_of`), narrowed in SQL to the one
that ranks per team and problem (`latest`), then scored with judge.scoring.
standings_cache.py stores the live result in the `standings` table, which boards read.

A team's online score is the mean of its per-problem scores over the
competition's problems (a problem without an entry counts 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from api.store.enums import RankedBy, RelativeTo, RunKind, RunStatus
from api.store.finals_pool import narrow_to_finals
from api.store.models import CaseResultRow, Competition, CompetitionProblem, Problem, Run, Submission, Team
from judge.backends import Backend, CaseSet
from judge.modes import RunMode
from judge.scoring import case_score_vs_baseline, case_score_vs_best, online_score
from judge.verdict import Verdict

RANKED_SETS = (CaseSet.BENCHMARKS, CaseSet.PRIVATE)  # public board, final ranking
_SCORED_KINDS = [k for k in RunKind if k.scored]


@dataclass(frozen=True)
class CaseCell:
    case: str
    score: float | None  # None: failed or not timed
    ratio: float | None  # t_sub / t_base
    passed: bool


@dataclass(frozen=True)
class EntryStanding:
    """The submission that ranks for one team and problem, with its case scores."""

    problem: str
    submission_id: int
    run_id: int
    backend: Backend
    submitted_at: datetime
    verdict: Verdict
    score: float
    cases: tuple[CaseCell, ...]
    disturbed: str = ""  # the ranked run's host stayed disturbed (judge/retime.py): marked on the board
    public_id: str = ""  # the submission's public id, the one boards show (docs/security.md, "Submission ids")


@dataclass(frozen=True)
class TeamStanding:
    team_id: int
    team_name: str
    rank: int | None  # None: nothing ranked (every entry disqualified)
    score: float  # online score: mean over the competition's problems
    tie_at: datetime | None  # the latest submission time among the ranked entries
    disqualified: bool
    last_submission_at: datetime | None  # of the team's latest judged submission
    latest_verdict: Verdict | None
    entries: dict[str, EntryStanding] = field(default_factory=dict)


@dataclass
class _Entry:
    submission_id: int
    team_id: int
    problem: str
    backend: Backend
    created_at: datetime
    run_id: int
    verdict: Verdict
    disturbed: str = ""
    public_id: str = ""
    cases: list[tuple[str, bool, float | None]] = field(default_factory=list)  # (case, passed, ratio)
    score: float = 0.0
    cells: tuple[CaseCell, ...] = ()


Reference = dict[tuple[str, Backend, str], float]  # (problem, backend, case) -> r*_c
_MAX_ROUNDS = 8  # `best` + `best`: rounds to settle which entries rank (two in practice)


def compute_standings(
    session: Session,
    *,
    competition_id: int,
    case_set: CaseSet,
    as_of: datetime | None = None,
    team_id: int | None = None,
    reference: Reference | None = None,
) -> list[TeamStanding]:
    """Rank every team on `case_set`, from the results finished by `as_of` (None: all of them).

    With `team_id`, only that team (its rank then means nothing). With `reference`,
    r*_c comes from it instead of the ranked entries: a frozen board scores a team's
    live row against the board's r*_c, so later results of other teams do not show.
    """
    comp = session.get_one(Competition, competition_id)
    problems = list(
        session.scalars(
            select(Problem.slug)
            .join(CompetitionProblem, CompetitionProblem.problem_id == Problem.id)
            .where(CompetitionProblem.competition_id == competition_id)
        )
    )
    # A run whose host stayed disturbed through its re-timing is marked on the public board but stays out of
    # the final ranking until an organiser re-times it (docs/rules.md, "Disturbed hosts").
    candidates = _candidates(competition_id, problems, as_of, team_id, calm_only=case_set is CaseSet.PRIVATE)
    # `chosen`: the final ranking takes the best of each team's finals; the public board its latest.
    chosen = comp.ranked_by is RankedBy.CHOSEN and case_set is CaseSet.PRIVATE
    latest_only = comp.ranked_by is RankedBy.LATEST or (comp.ranked_by is RankedBy.CHOSEN and not chosen)
    entries = _load_entries(session, candidates, case_set, latest_only=latest_only)
    pool = narrow_to_finals(session, entries) if chosen else entries
    ranked = _rank(pool, comp.relative_to, comp.score_cap, latest_only=latest_only, reference=reference)
    teams = _team_names(session, competition_id, team_id)
    # `entries` holds every judged entry in `best` mode, so the team's newest one is among them.
    standings = _aggregate(ranked, entries, teams, len(problems) or 1)
    standings += _disqualified_teams(session, competition_id, {s.team_id for s in standings}, teams, as_of, team_id)
    return standings


def reference_of(standings: list[TeamStanding]) -> Reference:
    """The r*_c a board was scored with: the lowest ratio of the accepted, ranked entries."""
    best: Reference = {}
    for standing in standings:
        for slug, entry in standing.entries.items():
            for cell in entry.cases:
                if cell.score is not None and cell.ratio is not None:
                    key = (slug, entry.backend, cell.case)
                    best[key] = min(best.get(key, cell.ratio), cell.ratio)
    return best


def _candidates(competition_id: int, problems: list[str], as_of: datetime | None, team_id: int | None, *,
                calm_only: bool = False) -> Select[Any]:
    """Every submission that can rank (of one team, with `team_id`), with the run whose results count.

    Only ranked-mode submissions rank (docs/rules.md "Run modes"): test and benchmark runs never reach a board.
    """
    if as_of is None:
        run_id = Submission.scored_run_id
        extra = []
    else:
        run_id = (
            select(Run.id)
            .where(
                Run.submission_id == Submission.id,
                Run.kind.in_(_SCORED_KINDS),
                Run.status == RunStatus.DONE,
                Run.verdict != Verdict.IE,
                Run.finished_at <= as_of,
            )
            .order_by(Run.finished_at.desc(), Run.id.desc())
            .limit(1)
            .correlate(Submission)
            .scalar_subquery()
        )
        extra = [Submission.created_at <= as_of]
    if team_id is not None:
        extra.append(Submission.team_id == team_id)
    if calm_only:
        extra.append(Run.disturbed == "")
    return (
        select(Submission.id.label("submission_id"), Submission.team_id, Problem.slug.label("problem"),
               Submission.backend, Submission.created_at, Run.id.label("run_id"), Run.verdict, Run.disturbed,
               Submission.public_id)
        .join(Problem, Problem.id == Submission.problem_id)
        .join(Run, Run.id == run_id)
        .where(Submission.competition_id == competition_id, Submission.disqualified_at.is_(None),
               Submission.mode == RunMode.RANKED, Problem.slug.in_(problems), *extra)
    )  # fmt: skip


def _load_entries(session: Session, candidates: Select[Any], case_set: CaseSet, *, latest_only: bool) -> list[_Entry]:
    if latest_only:
        # The team's latest judged submission per problem ranks: pick it in SQL.
        order = candidates.selected_columns
        numbered = candidates.add_columns(
            func.row_number()
            .over(
                partition_by=(order.team_id, order.problem),
                order_by=(order.created_at.desc(), order.submission_id.desc()),
            )
            .label("rn")
        ).subquery()
        chosen = select(*[numbered.c[c.key] for c in order]).where(numbered.c.rn == 1).subquery()
    else:
        chosen = candidates.subquery()
    entries = {
        row.run_id: _Entry(row.submission_id, row.team_id, row.problem, Backend(row.backend), row.created_at,
                           row.run_id, Verdict(row.verdict), row.disturbed or "", row.public_id)
        for row in session.execute(select(chosen))
    }  # fmt: skip
    cases = session.execute(
        select(CaseResultRow.run_id, CaseResultRow.name, CaseResultRow.passed, CaseResultRow.ratio)
        .where(CaseResultRow.case_set == case_set, CaseResultRow.run_id.in_(select(chosen.c.run_id)))
        .order_by(CaseResultRow.run_id, CaseResultRow.position)
    )
    for run_id, name, passed, ratio in cases:
        entries[run_id].cases.append((name, passed, ratio))
    return list(entries.values())


def _rank(
    entries: list[_Entry], relative_to: RelativeTo, cap: float, *, latest_only: bool, reference: Reference | None
) -> list[_Entry]:
    """Score `entries` and return those that rank (docs/rules.md "Scoring").

    r*_c is the lowest r_c of the accepted entries that rank. Under `latest` those are
    `entries` already. Under `best` which entry of a team ranks depends on its score,
    hence on r*_c: rank against every entry first, then against the entries chosen,
    until the choice no longer changes.
    """
    if latest_only:
        _score(entries, relative_to, cap, best=_with_fallback(reference, entries))
        return entries
    if reference is not None or relative_to is RelativeTo.BASELINE:
        _score(entries, relative_to, cap, best=_with_fallback(reference, entries))
        return _best_per_problem(entries)
    ranked = entries
    for _round in range(_MAX_ROUNDS):
        _score(entries, relative_to, cap, best=_lowest_ratios(ranked))
        chosen = _best_per_problem(entries)
        if {e.run_id for e in chosen} == {e.run_id for e in ranked}:
            return chosen
        ranked = chosen
    # No fixed point (the choice cycles): rank the last choice, scored against its own r*_c.
    _score(entries, relative_to, cap, best=_lowest_ratios(ranked))
    return ranked


def _with_fallback(reference: Reference | None, entries: list[_Entry]) -> Reference:
    """`reference` where it has a case, else the lowest ratio among `entries` (the team's own)."""
    return {**_lowest_ratios(entries), **(reference or {})}


def _lowest_ratios(pool: list[_Entry]) -> Reference:
    """r*_c over the accepted entries of `pool`."""
    best: Reference = {}
    for entry in pool:
        if _accepted(entry):
            for name, _passed, ratio in entry.cases:
                key = (entry.problem, entry.backend, name)
                best[key] = min(best.get(key, float("inf")), ratio)  # type: ignore[type-var]
    return best


def _score(entries: list[_Entry], relative_to: RelativeTo, cap: float, *, best: Reference) -> None:
    """Per-case scores and the mean, with r*_c from `best`."""
    for entry in entries:
        ok = _accepted(entry)
        cells = []
        for name, passed, ratio in entry.cases:
            value = None
            if ok and ratio is not None:
                if relative_to is RelativeTo.BEST:
                    # A case no ranked entry has: this entry would be the best of it.
                    value = case_score_vs_best(ratio, best.get((entry.problem, entry.backend, name), ratio))
                else:
                    value = case_score_vs_baseline(ratio, cap)
            cells.append(CaseCell(name, value, ratio, passed))
        entry.cells = tuple(cells)
        entry.score = online_score([c.score for c in cells if c.score is not None], ok)


def _accepted(entry: _Entry) -> bool:
    """AC, every case of the set passed and timed (a submission that fails any case scores 0)."""
    return (
        entry.verdict is Verdict.AC
        and bool(entry.cases)
        and all(passed and ratio is not None and ratio > 0 for _n, passed, ratio in entry.cases)
    )


def _best_per_problem(entries: list[_Entry]) -> list[_Entry]:
    """`best`: each team's highest-scoring entry per problem; ties to the earlier submission."""
    chosen: dict[tuple[int, str], _Entry] = {}
    for entry in entries:
        key = (entry.team_id, entry.problem)
        held = chosen.get(key)
        if held is None or (entry.score, -entry.created_at.timestamp()) > (held.score, -held.created_at.timestamp()):
            chosen[key] = entry
    return list(chosen.values())


def _aggregate(
    ranked: list[_Entry], latest: list[_Entry], teams: dict[int, str], n_problems: int
) -> list[TeamStanding]:
    by_team: dict[int, list[_Entry]] = {}
    for entry in ranked:
        by_team.setdefault(entry.team_id, []).append(entry)
    newest: dict[int, _Entry] = {}
    for entry in latest:
        held = newest.get(entry.team_id)
        if held is None or (entry.created_at, entry.submission_id) > (held.created_at, held.submission_id):
            newest[entry.team_id] = entry
    unsorted = []
    for team_id, team_entries in by_team.items():
        score = sum(e.score for e in team_entries) / n_problems
        unsorted.append(TeamStanding(
            team_id=team_id, team_name=teams.get(team_id, f"team {team_id}"), rank=None, score=score,
            tie_at=max(e.created_at for e in team_entries), disqualified=False,
            last_submission_at=newest[team_id].created_at, latest_verdict=newest[team_id].verdict,
            entries={e.problem: EntryStanding(e.problem, e.submission_id, e.run_id, e.backend, e.created_at,
                                              e.verdict, e.score, e.cells, e.disturbed, e.public_id)
                     for e in team_entries},
        ))  # fmt: skip
    # Ties go to the earlier submission (docs/rules.md); the team id only makes the order total.
    unsorted.sort(key=lambda s: (-round(s.score, 9), s.tie_at, s.team_id))
    return [_with_rank(s, i + 1) for i, s in enumerate(unsorted)]


def _with_rank(standing: TeamStanding, rank: int | None) -> TeamStanding:
    return TeamStanding(
        standing.team_id,
        standing.team_name,
        rank,
        standing.score,
        standing.tie_at,
        standing.disqualified,
        standing.last_submission_at,
        standing.latest_verdict,
        standing.entries,
    )


def _disqualified_teams(
    session: Session,
    competition_id: int,
    ranked: set[int],
    teams: dict[int, str],
    as_of: datetime | None,
    team_id: int | None,
) -> list[TeamStanding]:
    """Teams whose every judged entry is disqualified: kept on the board, not ranked."""
    query = (
        select(Submission.team_id, func.max(Submission.created_at))
        .where(Submission.competition_id == competition_id, Submission.disqualified_at.is_not(None),
               Submission.mode == RunMode.RANKED)
        .group_by(Submission.team_id)
    )
    if as_of is not None:
        query = query.where(Submission.created_at <= as_of)
    if team_id is not None:
        query = query.where(Submission.team_id == team_id)
    return [
        TeamStanding(team_id, teams.get(team_id, f"team {team_id}"), None, 0.0, None, True, last, None)
        for team_id, last in session.execute(query)
        if team_id not in ranked
    ]


def _team_names(session: Session, competition_id: int, team_id: int | None) -> dict[int, str]:
    query = select(Team.id, Team.name).where(Team.competition_id == competition_id)
    if team_id is not None:
        query = query.where(Team.id == team_id)  # one team's live row: per request, keep it small
    return {found: name for found, name in session.execute(query)}
