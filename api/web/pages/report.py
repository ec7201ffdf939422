"""The submission report `/s/<public id>` and its live timeline fragment.

A team sees only its own submissions (another team's id is "not found", as in
the JSON API); organisers see every one, with the rejudge and disqualify
buttons; reviewers see the finalists' ranked submissions. Teams get the store's
team view: private cases pass/fail only, no reproduction runs.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request, Response

from api.client.stages import STEPS, Step, run_steps
from api.store.db import Session
from api.store.enums import Role, RunKind, RunStatus
from api.store.errors import NotFoundError
from api.store.page_queries import run_host_info
from api.store.reviews import list_finalists
from api.store.submission_refs import submission_id_of
from api.store.submissions import list_submissions, submission_detail, submission_sources
from api.store.views import Principal, RunView, SubmissionDetail
from api.web.deps import NowDep, SessionDep
from api.web.pages.auth import LoggedIn
from api.web.pages.charts import HistoryPoint, RooflinePoint, history_svg, rate_bars_svg, roofline_svg
from api.web.pages.devices import device_peaks
from api.web.pages.profile_view import profile_views
from api.web.pages.routing import PageRoute
from api.web.pages.web import html_response, render, render_fragment
from api.web.schemas.bounds import SubmissionRef
from judge.modes import RunMode
from judge.verdict import Verdict

router = APIRouter(include_in_schema=False, route_class=PageRoute)

MAX_SOURCE_CHARS = 200_000  # sources shown inline; the upload limits keep real ones far below


@router.get("/s/{submission_id}")
def report_page(
    submission_id: SubmissionRef, request: Request, session: SessionDep, viewer: LoggedIn, now: NowDep
) -> Response:
    """The report of one submission: verdict, timeline, cases, charts, logs."""
    detail = readable_detail(session, ref=submission_id, viewer=viewer)
    return render(request, "report.html", **report_context(session, detail, viewer=viewer, now=now))


@router.get("/s/{submission_id}/timeline.frag")
def timeline_fragment(submission_id: SubmissionRef, session: SessionDep, viewer: LoggedIn) -> Response:
    """The stage timeline alone, polled while the run is in flight."""
    detail = readable_detail(session, ref=submission_id, viewer=viewer)
    live = live_run(detail)
    return html_response(render_fragment("_timeline.html", submission=detail.submission, run=live,
                                         steps=timeline(live), live=_in_flight(live),
                                         queue=detail.queue))  # fmt: skip


def readable_detail(session: Session, *, ref: str, viewer: Principal) -> SubmissionDetail:
    """The submission `ref` names as this viewer may see it; NotFoundError when they may not see it at all.

    A team names its submissions by their public ids only (docs/security.md, "Submission ids")."""
    if viewer.role is Role.ADMIN:
        return submission_detail(session, submission_id=submission_id_of(session, ref))
    if viewer.role is Role.TEAM:
        found = submission_id_of(session, ref, team_id=viewer.team_id)
        return submission_detail(session, submission_id=found, team_id=viewer.team_id)
    # Reviewers read the finalists' ranked submissions, with a team's view of them.
    assert viewer.competition_id is not None
    try:
        submission_id = submission_id_of(session, ref)
    except NotFoundError:
        submission_id = None
    for finalist in list_finalists(session, competition_id=viewer.competition_id):
        if submission_id in finalist.submission_ids.values():
            return submission_detail(session, submission_id=submission_id, team_id=finalist.team_id)
    raise NotFoundError(f"no submission {ref} among the finalists' ranked submissions")


def live_run(detail: SubmissionDetail) -> RunView | None:
    """The newest judge or rejudge run: the one the timeline follows."""
    return next((r for r in detail.runs if r.kind is not RunKind.REPRODUCTION), None)


def shown_run(detail: SubmissionDetail) -> RunView | None:
    """The run whose results the report shows: the scored one, else the newest."""
    scored = next((r for r in detail.runs if r.id == detail.scored_run_id), None)
    return scored or live_run(detail)


def timeline(run: RunView | None) -> list[Step]:
    """The five steps of the run's timeline with their state and start time."""
    if run is None:
        return [Step(key, label, "waiting", None) for key, label, _ in STEPS]
    return run_steps(status=run.status.value, stage=run.stage, stage_times=run.stage_times,
                     verdict=run.verdict.value if run.verdict else None, queued_at=run.queued_at or run.created_at)


def _in_flight(run: RunView | None) -> bool:
    return run is not None and run.status in (RunStatus.PENDING, RunStatus.QUEUED, RunStatus.RUNNING)


def report_context(session: Session, detail: SubmissionDetail, *, viewer: Principal, now: datetime) -> dict[str, Any]:
    """What report.html needs: the runs, the charts, the sources and the viewer's rights."""
    submission = detail.submission
    live, shown = live_run(detail), shown_run(detail)
    info = run_host_info(session, run_id=shown.id) if shown else {}
    history = list_submissions(session, team_id=submission.team_id, problem=submission.problem, limit=60)
    sources = submission_sources(session, submission_id=submission.id)
    return {
        "submission": submission,
        "detail": detail,
        "run": shown,
        "live": live,
        "live_in_flight": _in_flight(live),
        "steps": timeline(live),
        "queue": detail.queue,
        "failing": [c for c in shown.cases if not c.passed] if shown else [],
        "roofline": _roofline(shown, info, submission.backend),
        "profiles": profile_views(shown.profiles) if shown else [],
        "history": history_svg([
            # Points are labelled by their place on the chart for teams and reviewers: the database id
            # would count other teams' submissions (docs/security.md, "Submission ids").
            HistoryPoint(s.id if viewer.role is Role.ADMIN else i + 1, s.score, s.verdict is Verdict.AC,
                         s.id == submission.id)
            # Scored ones only: a test run has no score, and drawing it at 0 said it failed.
            for i, s in enumerate(s for s in reversed(history) if s.verdict is not None and s.mode is not RunMode.TEST)
        ]),  # fmt: skip
        "sources": [(name, content.decode("utf-8", "replace")[:MAX_SOURCE_CHARS]) for name, content in sources],
        **kernel_output_view(shown.kernel_output if shown else ""),
        "is_admin": viewer.role is Role.ADMIN,
        "is_owner": viewer.team_id == submission.team_id,
        "now": now,
    }


WITHHELD_MARK = "[output written from the first private case on is not shown]"  # judge/runner/session.py


def kernel_output_view(text: str) -> dict[str, Any]:
    """What the kernel printed, without the judge's note that output from the first private case on
    is withheld; `kernel_withheld` says the note was there (a kernel that printed nothing shows no box)."""
    withheld = text.rstrip().endswith(WITHHELD_MARK)
    printed = text.rstrip()[: -len(WITHHELD_MARK)].removesuffix("\n") if withheld else text
    return {"kernel_printed": printed if printed.strip() else "", "kernel_withheld": withheld}


def _roofline(run: RunView | None, info: dict[str, Any], backend: Any) -> dict[str, Any] | None:
    if run is None:
        return None
    timed = [c for c in run.cases if c.gflops]
    if not timed:
        return None
    peaks = device_peaks(info, backend=backend, device=run.device)
    if all(c.gbytes_per_s for c in timed):
        points = [RooflinePoint(c.name, (c.gflops or 0.0) / (c.gbytes_per_s or 1.0), c.gflops or 0.0) for c in timed]
        measured = max(c.gbytes_per_s or 0.0 for c in timed)
        svg = roofline_svg(points, peak_gflops=peaks.gflops, peak_gbps=peaks.gbytes_per_s, measured_gbps=measured)
    else:  # no memory traffic recorded: no intensity to place the cases at, so rates against the peak
        svg = rate_bars_svg([(c.name, c.gflops or 0.0) for c in timed], peak_gflops=peaks.gflops)
    return {
        "svg": svg,
        "roofline": all(c.gbytes_per_s for c in timed),
        "peaks": peaks,
    }  # fmt: skip
