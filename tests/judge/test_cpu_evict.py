"""The CPU track's flush by line: the helper builds once, the runtime evicts what it handed out, the
sandboxed child loads it, and a host without a compiler keeps the buffer flush."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from judge.backends import Backend
from judge.engine import JudgeRequest, judge_submission
from judge.host_config import HostConfig
from judge.limits import CPU_LIMITS
from judge.modes import RunMode
from judge.problem import load_problem
from judge.submission import read_sources
from judge.track_settings.cpu import CpuSettings
from judge.tracks.cpu import _runtime_options
from judge.tracks.cpu import evict as evict_module
from judge.tracks.cpu.evict import METHODS, LineEvictor, build_helper
from judge.tracks.cpu.runtime import CpuRuntime
from judge.verdict import Verdict

BASELINE = Path(__file__).parents[2] / "reference_kernels/add_mul_relu/cpu/baseline.cpp"


def test_the_helper_is_built_once_and_evicts_a_buffer_in_place(tmp_path: Path) -> None:
    path = build_helper(tmp_path)
    built_at = path.stat().st_mtime_ns
    assert build_helper(tmp_path) == path and path.stat().st_mtime_ns == built_at  # cached by its digest
    evictor = LineEvictor(str(path))
    assert evictor.method in METHODS.values()
    data = torch.arange(100_000, dtype=torch.float32)
    evictor.evict(data.data_ptr() + 4, data.numel() * 4 - 4)  # unaligned start: rounded down to its line
    assert torch.equal(data, torch.arange(100_000, dtype=torch.float32))  # evicting loses no data


def test_the_runtime_evicts_every_buffer_it_handed_out_since_the_last_flush(tmp_path: Path) -> None:
    runtime = CpuRuntime(_runtime_options(HostConfig(work_root=tmp_path, settings=(CpuSettings(flush="lines"),))))
    assert runtime.flush_method == "lines" and runtime.describe()["cache_flush"].startswith("lines (")
    seen: list[tuple[int, int]] = []
    assert runtime._evictor is not None
    real = runtime._evictor.evict
    runtime._evictor.evict = lambda address, nbytes: (seen.append((address, nbytes)), real(address, nbytes))[1]
    x = runtime.to_device(torch.ones(1000))
    out = runtime.empty((10, 10), torch.float32, float("nan"))
    work = runtime.garbage(5000)
    runtime.flush_caches()
    assert seen == [(x.data_ptr(), 4000), (out.data_ptr(), 400), (work.data_ptr(), 5000)]
    seen.clear()
    runtime.flush_caches()  # nothing new since: nothing evicted twice
    assert seen == []


def test_the_buffer_flush_is_the_default_and_a_wrong_setting_is_refused(tmp_path: Path) -> None:
    options = _runtime_options(HostConfig(work_root=tmp_path))
    assert options["flush"] == "buffer" and options["evict_library"] == ""
    assert CpuRuntime(options).describe()["cache_flush"] == "buffer"
    with pytest.raises(ValueError, match="cpu_flush must be one of buffer, lines, not 'clflush'"):
        CpuSettings(flush="clflush")
    with pytest.raises(ValueError, match="OPJUDGE_CPU_FLUSH: cpu_flush must be one of buffer, lines"):
        CpuSettings.from_env({"OPJUDGE_CPU_FLUSH": "clflush"})


def test_without_a_compiler_the_line_flush_falls_back_to_the_buffer(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(evict_module, "_compiler", lambda: None)
    with pytest.raises(evict_module.EvictHelperError, match="no C compiler"):
        build_helper(tmp_path / "a")
    options = _runtime_options(HostConfig(work_root=tmp_path, settings=(CpuSettings(flush="lines"),)))
    assert options["flush"] == "buffer"


def test_the_sandboxed_child_loads_the_helper_and_judges_with_it(tmp_path: Path) -> None:
    request = JudgeRequest(problem=load_problem("add_mul_relu"), backend=Backend.CPU,
                           sources=read_sources([BASELINE], CPU_LIMITS), mode=RunMode.TEST)
    host = HostConfig(work_root=tmp_path / "work", limits=CPU_LIMITS, sandbox_mode="auto",
                      cache_dir=tmp_path / "cache", settings=(CpuSettings(flush="lines"),))
    result = judge_submission(request, host=host)
    assert result.verdict is Verdict.AC, result.message
    assert result.host["cache_flush"].startswith("lines (")
