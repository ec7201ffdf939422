"""Backends as tracks: each track is one folder whose `__init__.py` defines `TRACK`, everything
the engine, the service and the workers know of its backend. Adding a backend is adding a folder:
under `judge/tracks/`, in OPJUDGE_EXTRA_TRACKS (os.pathsep-separated folders), or given to
`register_track`; the folder's name is the backend's (judge/backends.py). Nothing else names one.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.backends import (
    BUILT_IN_TRACKS,
    EXTRA_TRACKS_VARIABLE,
    Backend,
    add_track_folder,
    remove_track_folder,
    track_folders,
)
from judge.host_config import HostConfig
from judge.limits import Limits
from judge.policy.rules import BackendRules
from judge.runtimes.base import DeviceRuntime
from judge.sandbox.seal import RuntimeRule
from judge.sandbox.seal_tracks import Decision, Status
from judge.toolchains.base import Toolchain
from judge.track_settings.base import NoSettings, TrackSettings

# A named host check of `opjudge doctor` (judge/doctor.py): it returns what it found, or raises
# judge.doctor.Unavailable (or a JudgeError) saying why the track cannot judge here.
DoctorCheck = tuple[str, Callable[[], str]]


def _none() -> str:
    return ""


def _unavailable() -> str:
    return "unavailable"


@dataclass(frozen=True)
class HostReport:
    """What a worker says of its host on start (workers/hostinfo.py): the findings of the track's doctor
    checks named here (`doctor_checks`' names), or where a check is not named or fails, the track's own
    probe (docs/architecture.md, "The seams": nothing but the track names its backend)."""

    toolchain: str = "compiler"
    device: str | None = None
    driver: str | None = None
    device_probe: Callable[[], str] = _unavailable
    driver_probe: Callable[[], str] = _none


@dataclass(frozen=True)
class Track:
    backend: Backend
    limits: Limits  # the track's defaults (warm-up length, address-space limit, ...)
    make_toolchain: Callable[[HostConfig], Toolchain]
    # Called inside the runner child with `runtime_options(host)`: plain JSON data only.
    make_runtime: Callable[[dict[str, Any]], DeviceRuntime]
    runtime_options: Callable[[HostConfig], dict[str, Any]]
    device_nodes: Callable[[HostConfig], list[str]]  # bound into the sandbox (e.g. /dev/nvidia0)
    # What the policy allows (judge/policy/rules.py): the file types, headers, names and imports.
    policy_rules: BackendRules
    # Which runtime rules (judge/sandbox/seal.py) its runner bears, every rule decided with the
    # evidence (judge/sandbox/seal_tracks.py says what each status means).
    seal_decisions: tuple[Decision, ...]
    # Its host settings, declared once (judge/track_settings/base.py): read from the environment by
    # judge/host.py `host_from_env`, offered to organisers where overridable (api/web/schemas/competitions.py),
    # read by the track with `host.track_settings(record)`. NoSettings: it has none.
    settings: type[TrackSettings] = NoSettings
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
    # The runner children may start while the submission compiles (judge/pipeline.py): the baseline's
    # is launched, the submission's imports its runtime; its hello, and so any submission code, still
    # waits until the build's checks have passed and the baseline is ready. Not on device tracks: the
    # baseline measures its device's event overhead while it starts.
    early_submission_start: bool = False
    # The runner child may create no SysV IPC objects (zero IPC limits in its IPC namespace), so no
    # memory escapes its cgroup's count that way; device runtimes need shared memory, so off there.
    # docs/security.md, "Memory".
    no_ipc: bool = False
    # The per-case profiler (judge/profiling/context.py): `profile_case(ctx) -> list[ProfileSection]`;
    # None: every profile says the track has none. (Typed loosely: the context imports the runner.)
    profiler: Callable[[Any], list[Any]] | None = None
    # The deployment setting (api/settings.py) naming the device kind its runs are queued by
    # (judge.<backend>.<kind>, docs/operations.md "The parts"); None: one queue, judge.<backend>.
    queue_device_setting: str | None = None
    # `opjudge doctor`'s checks of this track on a host, in order; the first is its toolchain's.
    doctor_checks: Callable[[HostConfig], list[DoctorCheck]] = lambda host: []
    # A child started under a profiler's command line (msprof op, ncu) gets (env, runtime options) from
    # this instead of the track's own: a profiler may not honour how the track selects its device.
    under_profiler: Callable[[HostConfig, dict[str, str], dict[str, Any]],
                             tuple[dict[str, str], dict[str, Any]]] | None = None
    # A worker given one device (OPJUDGE_DEVICE, `opjudge worker --device`): what it sets in its own environment
    # before anything starts the device's runtime, so it, its host probe and its runner children see that device
    # alone (workers/context.py `pin_device`); None: nothing. `device_setting`: the track's setting (a public key,
    # its `settings`) the worker's device is given as instead, "0" where the worker names none.
    pin_environment: Callable[[str], dict[str, str]] | None = None
    device_setting: str | None = None
    # The vendor release its vendor operators' contracts are per (judge/baseline_trust.py), as its runtime
    # options give it: (product, version), e.g. ("CANN", "8.5.0"); None: it has none (docs/operations.md,
    # "Attach a new worker host to a queue").
    vendor_release: Callable[[dict[str, Any]], tuple[str, str] | None] = lambda options: None
    # The language its sources are read as in machine review (workers/similarity_job.py): a pygments
    # lexer's name, as copydetect takes it ("cpp", "cuda").
    source_language: str = "cpp"
    # Its toolchain, device and driver as a worker reports them on start (workers/hostinfo.py).
    host_report: HostReport = HostReport()
    # The roofs of the report's roofline chart where the worker recorded none (api/web/pages/devices.py):
    # `known_peaks(device, same_host)` -> (FLOP/s, bytes/s or None, where they come from) or None;
    # `same_host`: the run was judged on the host serving the page (the embedded server).
    known_peaks: Callable[[str | None, bool], tuple[float, float | None, str] | None] = lambda device, same: None


    @property
    def runtime_rules(self) -> tuple[RuntimeRule, ...]:
        """What the runner child refuses once the submission's library is loaded (judge/sandbox/seal.py),
        as far as the track's runtime bears it: a device driver may map code or install signal
        handlers after it started."""
        return tuple(d.rule for d in self.seal_decisions if d.status is Status.RUNTIME)

    def rules_with(self, status: Status) -> tuple[RuntimeRule, ...]:
        return tuple(d.rule for d in self.seal_decisions if d.status is status)

    @property
    def source_suffixes(self) -> frozenset[str]:
        """The file types a submission may hold: the one list the upload, the page's file picker and the
        source policy all read (judge/submission.py)."""
        return self.policy_rules.source_suffixes

    def queue_name(self, device_kind: str | None = None) -> str:
        """The broker queue of its runs: judge.<backend>, or judge.<backend>.<kind> for a queue per kind."""
        if self.queue_device_setting is None:
            return f"judge.{self.backend.value}"
        return f"judge.{self.backend.value}.{device_kind or 'default'}"

    def takes_queue(self, queue: str) -> bool:
        """Whether `queue` is one of this track's (`queue_name`'s form)."""
        parts = queue.split(".")
        if parts[:2] != ["judge", self.backend.value]:
            return False
        return len(parts) == 2 if self.queue_device_setting is None else len(parts) == 3 and bool(parts[2])

    @property
    def queue_forms(self) -> str:
        """The form of its queues' names, in words."""
        return self.queue_name() if self.queue_device_setting is None else f"judge.{self.backend.value}.<kind>"


_loaded: dict[str, Track] = {}


def get_track(backend: Backend | str) -> Track:
    """The track of a backend; its module is imported on first use."""
    name = Backend(backend).value
    if name not in _loaded:
        _loaded[name] = _load(name, track_folders()[name])
    return _loaded[name]


def register_track(folder: Path) -> Track:
    """Register the track in `folder` (outside judge/tracks/: a folder whose name is its backend's and
    whose `__init__.py` defines TRACK) and load it. Its backend is then valid everywhere."""
    name = add_track_folder(folder)
    try:
        return get_track(name)
    except BaseException:
        remove_track_folder(name)
        raise


def unregister_track(name: str) -> None:
    """Forget a track `register_track` added (tests)."""
    _loaded.pop(name, None)
    remove_track_folder(name)


def find_track_by_queue(queue: str) -> Track | None:
    """The track whose queue `queue` is (`Track.queue_name`), or None."""
    return next((t for t in map(get_track, Backend) if t.takes_queue(queue)), None)


def queue_forms() -> str:
    """Every track's queue form, for messages about a queue that is none of them."""
    return ", ".join(get_track(b).queue_forms for b in Backend)


def _load(name: str, folder: Path) -> Track:
    if folder.parent == BUILT_IN_TRACKS:
        module = importlib.import_module(f"judge.tracks.{name}")
    else:
        module = _import_folder(name, folder)
    track: Track = module.TRACK
    if track.backend.value != name:
        raise ValueError(f"the track in {folder} is backend {track.backend.value!r}, not its folder's {name!r}")
    if folder.parent != BUILT_IN_TRACKS:
        track = _travelling(track, folder)
    return track


def _import_folder(name: str, folder: Path) -> Any:
    module_name = f"opjudge_track_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot import the track in {folder}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


def _travelling(track: Track, folder: Path) -> Track:
    """A track from outside judge/tracks/ as the runner child needs it: its environment names the folder
    (the child finds the track by it) and its sandbox binds it read-only, besides the track's own."""
    env, paths = track.runner_env, track.readonly_paths
    return dataclasses.replace(
        track,
        runner_env=lambda host: {**env(host), EXTRA_TRACKS_VARIABLE: str(folder)},
        readonly_paths=lambda host: [*paths(host), folder],
    )
