"""The five steps a team sees a run go through, from the engine's stages (judge.backends.Stage).

Shared by the report page's timeline and the CLI's progress display, so both
tell the same story. Pure data in, pure data out: no web or database imports.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from judge.backends import Stage

# (key, label, engine stages the step covers)
STEPS: tuple[tuple[str, str, tuple[Stage, ...]], ...] = (
    ("queued", "Queued", (Stage.QUEUED,)),
    ("building", "Building", (Stage.POLICY, Stage.BUILDING)),
    ("checking", "Checking", (Stage.CHECKING,)),
    ("timing", "Timing", (Stage.TIMING,)),
    ("scored", "Scored", (Stage.SCORING, Stage.DONE)),
)
FINISHED = ("done", "failed")  # run statuses (api.store.enums.RunStatus values) after which nothing changes
_STAGES = {s.value for s in Stage}


@dataclass(frozen=True)
class Step:
    key: str
    label: str
    state: str  # done, current, failed, waiting, skipped
    at: datetime | None  # when the step started, when known


def run_steps(
    *, status: str, stage: str | None, stage_times: dict[str, str], verdict: str | None,
    queued_at: datetime | None,
) -> list[Step]:
    """The steps of a run with their state: where it is now, or where it stopped and why."""
    times = {Stage(k): datetime.fromisoformat(v) for k, v in stage_times.items() if k in _STAGES}
    if queued_at is not None:
        times.setdefault(Stage.QUEUED, queued_at)
    reached = [next((times[s] for s in stages if s in times), None) for _key, _label, stages in STEPS]
    finished = status in FINISHED
    current = None if finished else _current(status, stage)
    # The last step reached before scoring is where a run that did not pass stopped.
    stopped_at = max((i for i, at in enumerate(reached[:-1]) if at is not None), default=0)
    steps = []
    for i, (key, label, _stages) in enumerate(STEPS):
        if finished:
            if key == "scored":
                state = "done" if verdict == "AC" else "skipped"
            elif verdict != "AC" and i == stopped_at:
                state = "failed"
            else:
                state = "done" if reached[i] is not None else "skipped"
        elif i == current:
            state = "current"
        else:
            state = "done" if current is not None and i < current else "waiting"
        steps.append(Step(key, label, state, reached[i]))
    return steps


def _current(status: str, stage: str | None) -> int:
    if status != "running" or stage not in _STAGES:
        return 0
    for i, (_key, _label, stages) in enumerate(STEPS):
        if Stage(stage) in stages:
            return i
    return 0
