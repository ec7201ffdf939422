"""The device roofs for the report's roofline chart, from what the worker recorded about its host.

In order: the rates the worker recorded with the run (`peak_flops`,
`peak_bytes_per_s` of its conditions, judge/conditions.py); for CUDA, the datasheet table the
engine's physical-floor check uses; for a CPU run judged on this very host (the
embedded server), the ceiling the CPU track gives the engine. Otherwise the
chart says that the peak is unknown rather than guess one.
"""

from __future__ import annotations

import platform
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.backends import Backend
from judge.conditions import positive, stored_conditions
from judge.host import HostConfig


@dataclass(frozen=True)
class DevicePeaks:
    gflops: float | None  # compute roof, GFLOP/s
    gbytes_per_s: float | None  # bandwidth roof, GB/s
    source: str  # where the figures come from, shown under the chart


def device_peaks(info: dict[str, Any], *, backend: Backend, device: str | None) -> DevicePeaks:
    """The best-founded roofs for a run, with the source named."""
    conditions = stored_conditions(info)
    flops, bandwidth = conditions.peak_flops, conditions.peak_bytes_per_s
    if flops:
        return DevicePeaks(flops / 1e9, bandwidth / 1e9 if bandwidth else None, "as recorded by the worker")
    if backend is Backend.CUDA and device:
        from judge.tracks.cuda.device import find_peak

        row = find_peak(device)
        if row is not None:
            return DevicePeaks(row.fp32_flops / 1e9, None, f"{row.name} fp32 datasheet rate")
    if backend is Backend.CPU and info.get("host") == platform.node():
        from judge.tracks import get_track

        track = get_track(Backend.CPU)
        options = track.runtime_options(HostConfig(work_root=Path(tempfile.gettempdir()), limits=track.limits))
        ceiling = positive(options.get("peak_flops"))
        if ceiling:
            return DevicePeaks(ceiling / 1e9, None, "the judge's generous CPU ceiling for this host")
    return DevicePeaks(None, None, "the device's peak was not recorded")
