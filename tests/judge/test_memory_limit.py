"""A runner child's memory limit: the team's share, and the judge's own buffers on top of it
(docs/security.md, "Memory"); an MLE names the team's share."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from judge.host_config import HostConfig
from judge.limits import CPU_LIMITS, DEVICE_LIMITS, RUNTIME_HOST_BYTES, child_memory_limit_mib
from judge.run_failures import classify_death
from judge.runner.failures import RunnerDied
from judge.track_settings.cpu import CpuSettings
from judge.tracks.cpu import _runtime_options
from judge.verdict import Verdict


def test_the_flush_buffer_comes_on_top_of_the_teams_share(tmp_path: Path) -> None:
    options = _runtime_options(HostConfig(work_root=tmp_path))
    flush_mib = -(-options["flush_bytes"] // (1 << 20))
    assert options[RUNTIME_HOST_BYTES] == options["flush_bytes"] > 0
    assert child_memory_limit_mib(CPU_LIMITS, options) == CPU_LIMITS.child_memory_mib + flush_mib
    lines = _runtime_options(HostConfig(work_root=tmp_path, settings=(CpuSettings(flush="lines"),)))
    if lines["flush"] == "lines":  # no buffer is allocated: nothing on top
        assert child_memory_limit_mib(CPU_LIMITS, lines) == CPU_LIMITS.child_memory_mib
    assert child_memory_limit_mib(DEVICE_LIMITS, {"flush_bytes": 1 << 30}) == DEVICE_LIMITS.child_memory_mib
    assert child_memory_limit_mib(dataclasses.replace(CPU_LIMITS, child_memory_mib=0), options) is None
    assert child_memory_limit_mib(CPU_LIMITS, {RUNTIME_HOST_BYTES: 1}) == CPU_LIMITS.child_memory_mib + 1


def test_an_mle_names_the_teams_limit_and_the_judges_buffer_apart() -> None:
    death = RunnerDied("killed", returncode=-9, timed_out=False, stderr="", memory_limit_mib=1024,
                       judge_memory_mib=960)
    verdict, message = classify_death(death)
    assert verdict is Verdict.MLE
    assert "reached its limit of 1024 MiB (besides the judge's own 960 MiB cache-flush buffer" in message
    plain = classify_death(RunnerDied("killed", returncode=-9, timed_out=False, stderr="", memory_limit_mib=8192))
    assert plain == (Verdict.MLE, "memory limit exceeded: the process's memory (shared memory and files in /tmp "
                                  "included) reached its limit of 8192 MiB and the kernel ended it")
