"""The device roofs for the report's roofline chart, from what the worker recorded about its host.

In order: the rates the worker recorded with the run (`peak_flops`,
`peak_bytes_per_s` of its conditions, judge/conditions.py); else what the run's track knows
(`Track.known_peaks`: for CUDA the datasheet table the engine's physical-floor check uses; for a
CPU run judged on this very host, the embedded server, the ceiling the CPU track gives the
engine). Otherwise the chart says that the peak is unknown rather than guess one.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass
from typing import Any

from judge.backends import Backend
from judge.conditions import stored_conditions
from judge.tracks import get_track


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
    known = get_track(backend).known_peaks(device, info.get("host") == platform.node())
    if known is not None:
        flops, bandwidth, source = known
        return DevicePeaks(flops / 1e9, bandwidth / 1e9 if bandwidth else None, source)
    return DevicePeaks(None, None, "the device's peak was not recorded")
