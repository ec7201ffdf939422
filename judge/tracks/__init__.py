"""Backends as tracks: each track is one folder `judge/tracks/<backend>/` whose
`__init__.py` defines `TRACK`. Adding a backend is adding a folder; nothing else
in the engine names a backend.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.backends import Backend
from judge.host import HostConfig
from judge.limits import Limits
from judge.runtimes.base import DeviceRuntime
from judge.sandbox.seal import RuntimeRule
from judge.toolchains.base import Toolchain


@dataclass(frozen=True)
class Track:
    backend: Backend
    limits: Limits  # the track's defaults (warm-up length, address-space limit, ...)
    make_toolchain: Callable[[HostConfig], Toolchain]
    # Called inside the runner child with `runtime_options(host)`: plain JSON data only.
    make_runtime: Callable[[dict[str, Any]], DeviceRuntime]
    runtime_options: Callable[[HostConfig], dict[str, Any]]
    device_nodes: Callable[[HostConfig], list[str]]  # bound into the sandbox (e.g. /dev/nvidia0)
    library_suffix: str = ".so"
    # Environment the runner child needs on this track (driver libraries, device visibility).
    runner_env: Callable[[HostConfig], dict[str, str]] = lambda host: {}
    # Folders bound read-only into the runner's sandbox (driver, toolkit) when they exist.
    readonly_paths: Callable[[HostConfig], list[Path]] = lambda host: []
    # A baseline called through Python instead of a C library (a vendor operator), made in
    # the runner child as `python_baseline(reference_dir, problem_slug, runtime_options)`;
    # it returns None where it cannot run, and the library baseline is timed instead.
    python_baseline: Callable[[Path, str, dict[str, Any]], Any] | None = None
    # Where inputs are generated (in the child, and again in the worker for the oracle), and
    # where the oracle runs. Contest-sized device cases cannot be generated on a host CPU.
    generation_device: str = "cpu"
    oracle_device: str = "cpu"
    # torch's deterministic algorithms in the child and the worker, where the device's own
    # matmuls and reductions may otherwise differ run to run (Ascend): both processes make
    # every input and must get the same bytes.
    deterministic_generation: bool = False
    # The child's clock is the host's wall clock around the call (CPU), so the worker's own
    # bracket around it differs from it by the same message overhead for every kernel; device
    # clocks leave out a kernel's host-side work, which the bracket includes.
    host_clock: bool = False
    # The submission's child process may start (import its runtime) while the baseline's child gets
    # ready; its hello, and so any submission code, still waits until the baseline is ready. Not on
    # device tracks: the baseline measures its device's event overhead while it starts.
    early_submission_start: bool = False
    # What the runner child refuses once the submission's library is loaded (judge/sandbox/seal.py),
    # as far as the track's runtime bears it: a device driver may map code or install signal
    # handlers after it started. No track needs a new seccomp filter then.
    runtime_rules: tuple[RuntimeRule, ...] = (RuntimeRule.NEW_FILTERS,)
    # A child started under a profiler's command line (msprof op, ncu) gets (env, runtime options) from
    # this instead of the track's own: a profiler may not honour how the track selects its device.
    under_profiler: Callable[[HostConfig, dict[str, str], dict[str, Any]],
                             tuple[dict[str, str], dict[str, Any]]] | None = None


def get_track(backend: Backend) -> Track:
    """The track of a backend; its module is imported on first use."""
    module = importlib.import_module(f"judge.tracks.{backend.value}")
    track: Track = module.TRACK
    return track
