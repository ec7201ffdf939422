"""Reproduction runs: the top entries re-run on a clean host, flagged when r_c moves too much."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from api.store.enums import RunKind
from api.store.models import CaseResultRow, Competition, Problem, Run, Submission, Team
from api.store.results import case_rows
from api.store.views import ReproductionView
from judge.backends import CaseSet
from judge.scoring import reproduces
from judge.verdict import Verdict

_MAX_REASON = 2000


def compare_reproduction(session: Session, *, run: Run) -> None:
    """Flag `run` when it failed or any timed case's ratio is off by more than the tolerance.

    docs/rules.md: "a result that does not reproduce within the competition's
    tolerance (default 10 % on r_c) is flagged for the organisers".
    """
    comp = session.get_one(Competition, run.submission.competition_id)
    problems: list[str] = []
    if run.verdict is not Verdict.AC:
        problems.append(f"the reproduction ended {run.verdict}: {run.message}".strip())
    elif run.reproduction_of is not None:
        cases = case_rows(session, [run.reproduction_of, run.id])
        before = _ratios(cases[run.reproduction_of])
        after = _ratios(cases[run.id])
        for key, ratio in before.items():
            again = after.get(key)
            if again is None:
                problems.append(f"{key[1]} case {key[0]} was not timed again")
            elif not reproduces(ratio, again, comp.reproduction_tolerance):
                problems.append(
                    f"{key[1]} case {key[0]}: r {again:.3f} against {ratio:.3f} "
                    f"({(again / ratio - 1) * 100:+.1f} %, tolerance {comp.reproduction_tolerance * 100:.0f} %)"
                )
    run.flagged = bool(problems)
    run.flag_reason = "; ".join(problems)[:_MAX_REASON]


def list_reproductions(session: Session, *, competition_id: int) -> list[ReproductionView]:
    """Every reproduction run of a competition, newest first, flagged ones marked."""
    rows = session.execute(
        select(Run, Team.id, Team.name, Problem.slug)
        .join(Submission, Submission.id == Run.submission_id)
        .join(Team, Team.id == Submission.team_id)
        .join(Problem, Problem.id == Submission.problem_id)
        .where(Submission.competition_id == competition_id, Run.kind == RunKind.REPRODUCTION)
        .order_by(Run.id.desc())
    )
    return [
        ReproductionView(run.id, run.reproduction_of, run.submission_id, team_id, team_name, problem, run.status,
                         run.verdict, run.flagged, run.flag_reason, run.created_at, run.finished_at)
        for run, team_id, team_name, problem in rows
    ]  # fmt: skip


def _ratios(rows: list[CaseResultRow]) -> dict[tuple[str, CaseSet], float]:
    return {(r.name, r.case_set): r.ratio for r in rows if r.case_set.timed and r.ratio is not None}
