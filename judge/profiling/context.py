"""The seam between the pipeline and each track's profiler (docs/profiles.md).

After the timing phase, for every public timed case that passed, the pipeline builds a
`ProfileContext` and calls the track's `profile_case(ctx) -> list[ProfileSection]`, its `Track.profiler`.
A track without one gets one "not available" section.
The CPU's profiler drives the warm submission child through untimed calls; a device track's starts
a fresh child under its tool's command prefix (`ctx.start_runner`) for one untimed pass.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from judge.backends import Backend
from judge.problem import Case
from judge.profiling import ProfileSection, unavailable
from judge.runner.session import RunnerSession

ProfileCase = Callable[["ProfileContext"], list[ProfileSection]]


@dataclass
class ProfileContext:
    case: Case
    session: RunnerSession  # the submission's child, warm, after timing; its case may be changed
    threads: int  # the CPU threads the run was given (OMP_NUM_THREADS)
    call_timeout_s: float
    budget_s: float  # wall time this case's profile should stay within (a tool may take a multiple)
    folder: Path  # for the tool's output files; removed with the run's folder
    # A fresh submission child started under `prefix` (e.g. ncu's command line) with `folder` as its
    # run folder; the caller uses it as a context manager.
    start_runner: Callable[[list[str], Path], RunnerSession]


def track_profiler(backend: Backend) -> ProfileCase:
    """The track's `profile_case`, or one that says the track has none."""
    from judge.tracks import get_track  # the tracks' profilers import this module: on use

    found: ProfileCase | None = get_track(backend).profiler
    if found is None:
        return lambda ctx: [unavailable("profile", f"the {backend.value} track has no profiler")]
    return found
