"""An NPU worker's clock: the competition's setting, sent with the run, wins over the worker's default."""

from __future__ import annotations

import pytest

from judge.backends import Backend
from judge.track_settings.npu import NpuSettings
from judge.tracks.npu import runtime_options
from workers.context import WorkerContext
from workers.settings import WorkerSettings


def test_the_competitions_setting_wins_over_the_workers_default(settings: WorkerSettings,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPJUDGE_NPU_TIMING", "events")
    monkeypatch.setenv("OPJUDGE_NPU_MAX_LAUNCHES", "4")
    ctx = WorkerContext(settings)
    default = ctx.host_config(Backend.NPU).track_settings(NpuSettings)
    assert (default.timing, default.max_launches) == ("events", 4)
    chosen = ctx.host_config(Backend.NPU, {"npu_timing": "device"})
    assert (chosen.track_settings(NpuSettings).timing, chosen.track_settings(NpuSettings).max_launches) == ("device", 4)
    assert (runtime_options(chosen)["timing"], runtime_options(chosen)["max_launches"]) == ("device", 4)
    both = ctx.host_config(Backend.NPU, {"npu_timing": "device", "npu_max_launches": 1})
    assert runtime_options(both)["max_launches"] == 1
    # A competition's settings apply to the run's own track only.
    assert ctx.host_config(Backend.CPU, {"npu_timing": "device"}).track_settings(NpuSettings).timing == "events"


def test_a_competition_may_set_only_what_the_tracks_let_organisers_override(
        settings: WorkerSettings) -> None:
    with pytest.raises(ValueError, match="npu_device"):
        WorkerContext(settings).host_config(Backend.NPU, {"npu_device": "3"})
    with pytest.raises(ValueError, match="npu_max_launches must be a whole number from 0 to 1000"):
        WorkerContext(settings).host_config(Backend.NPU, {"npu_max_launches": 1001})


def test_without_any_setting_the_npu_is_timed_by_events(settings: WorkerSettings,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPJUDGE_NPU_TIMING", raising=False)
    monkeypatch.delenv("OPJUDGE_NPU_MAX_LAUNCHES", raising=False)
    options = runtime_options(WorkerContext(settings).host_config(Backend.NPU, {}))
    assert (options["timing"], options["max_launches"]) == ("events", 0)


def test_the_workers_re_time_disturbed_phases_as_their_settings_say(settings) -> None:  # type: ignore[no-untyped-def]
    """judge/retime.py's attempts and backoff come from the worker's settings (the engine's default: once)."""
    from judge.limits import Limits

    assert Limits().disturbed_timing_attempts == 1
    assert WorkerContext(settings).host_config(Backend.CPU).limits.cases_per_timing_pair == 0  # the track's
    tuned = settings.model_copy(update={"disturbed_timing_attempts": 4, "disturbed_backoff_s": 2.5,
                                        "cases_per_timing_pair": 2})
    limits = WorkerContext(tuned).host_config(Backend.CPU).limits
    assert (limits.disturbed_timing_attempts, limits.disturbed_backoff_s) == (4, 2.5)
    assert limits.cases_per_timing_pair == 2  # judge/timing_children.py
