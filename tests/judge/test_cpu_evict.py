"""The CPU track's flush by line: the helper builds once, the runtime evicts what it handed out, the
sandboxed child loads it, untimed calls evict only their own lines under the buffer flush too, and a
host without a compiler keeps the buffer flush."""

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
from judge.runner.session import RunnerSession
from judge.submission import read_sources
from judge.track_settings.cpu import CpuSettings
from judge.tracks.cpu import _runtime_options
from judge.tracks.cpu import evict as evict_module
from judge.tracks.cpu.evict import METHODS, LineEvictor, build_helper
from judge.tracks.cpu.runtime import CpuRuntime
from judge.verdict import Verdict
from tests.judge.conftest import least_timing

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
    assert options["flush"] == "buffer" and options["evict_library"]  # built for the untimed calls
    assert CpuRuntime(options).describe()["cache_flush"] == "buffer"
    with pytest.raises(ValueError, match="cpu_flush must be one of buffer, lines, not 'clflush'"):
        CpuSettings(flush="clflush")
    with pytest.raises(ValueError, match="OPJUDGE_CPU_FLUSH: cpu_flush must be one of buffer, lines"):
        CpuSettings.from_env({"OPJUDGE_CPU_FLUSH": "clflush"})


def _flush_writes(runtime: CpuRuntime) -> int:
    """How many times the buffer flush has written its buffer (each write adds one to every byte)."""
    assert runtime._flush is not None
    return int(runtime._flush[0])


def test_under_the_buffer_flush_an_untimed_call_evicts_only_its_own_lines(tmp_path: Path) -> None:
    runtime = CpuRuntime({**_runtime_options(HostConfig(work_root=tmp_path)), "flush_bytes": 16 << 20})
    assert runtime._evictor is not None
    seen: list[tuple[int, int]] = []
    real = runtime._evictor.evict
    runtime._evictor.evict = lambda address, nbytes: (seen.append((address, nbytes)), real(address, nbytes))[1]
    x = runtime.to_device(torch.ones(1000))
    out = runtime.empty((10, 10), torch.float32, float("nan"))
    runtime.evict_call_buffers()
    assert seen == [(x.data_ptr(), 4000), (out.data_ptr(), 400)] and _flush_writes(runtime) == 0
    y = runtime.to_device(torch.ones(10))
    runtime.flush_caches()  # a timed call's: the whole buffer, and nothing left to evict after it
    assert _flush_writes(runtime) == 1 and runtime._handed_out == []
    runtime.evict_call_buffers()
    assert (y.data_ptr(), 40) not in seen


def test_without_a_compiler_the_line_flush_falls_back_to_the_buffer(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(evict_module, "_compiler", lambda: None)
    with pytest.raises(evict_module.EvictHelperError, match="no C compiler"):
        build_helper(tmp_path / "a")
    options = _runtime_options(HostConfig(work_root=tmp_path, settings=(CpuSettings(flush="lines"),)))
    assert options["flush"] == "buffer" and options["evict_library"] == ""
    runtime = CpuRuntime({**options, "flush_bytes": 16 << 20})
    runtime.to_device(torch.ones(10))
    runtime.evict_call_buffers()  # no helper: an untimed call gets the full flush
    assert _flush_writes(runtime) == 1


def test_the_sandboxed_child_loads_the_helper_and_judges_with_it(tmp_path: Path) -> None:
    request = JudgeRequest(problem=load_problem("add_mul_relu"), backend=Backend.CPU,
                           sources=read_sources([BASELINE], CPU_LIMITS), mode=RunMode.TEST)
    host = HostConfig(work_root=tmp_path / "work", limits=CPU_LIMITS, sandbox_mode="auto",
                      cache_dir=tmp_path / "cache", settings=(CpuSettings(flush="lines"),))
    result = judge_submission(request, host=host)
    assert result.verdict is Verdict.AC, result.message
    assert result.host["cache_flush"].startswith("lines (")


def test_only_the_correctness_and_profile_calls_are_untimed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             no_forged_timer_check: None) -> None:
    """Warm-ups and timed calls (held pairs, both children) get the full flush; the worker asks for the
    cheap one only where no time is taken (docs/rules.md, "Timing")."""
    begun: list[tuple[str, bool, bool]] = []
    begin = RunnerSession.begin

    def spied(self: RunnerSession, lib: str, seed: int, **kwargs):  # type: ignore[no-untyped-def]
        begun.append((lib, bool(kwargs.get("hold")), bool(kwargs.get("untimed"))))
        return begin(self, lib, seed, **kwargs)

    monkeypatch.setattr(RunnerSession, "begin", spied)
    problem = load_problem("add_mul_relu")
    request = JudgeRequest(problem=problem, backend=Backend.CPU, sources=read_sources([BASELINE], CPU_LIMITS),
                           mode=RunMode.BENCHMARK)
    host = HostConfig(work_root=tmp_path / "work", limits=least_timing(CPU_LIMITS), sandbox_mode="off",
                      cache_dir=tmp_path / "cache")
    result = judge_submission(request, host=host)
    assert result.verdict is Verdict.AC, result.message
    assert result.host["cache_flush"] == "buffer"
    untimed = [entry for entry in begun if entry[2]]
    assert all(lib == "submission" and not hold for lib, hold, _ in untimed)
    checked = [case for case in result.cases if case.checked_calls]
    assert len(untimed) >= len(checked) > 0  # at least each case's correctness call
    held = [entry for entry in begun if entry[1]]
    assert held and not any(entry[2] for entry in held)
    assert any(lib == "baseline" for lib, _, _ in held)


def test_a_helper_that_does_not_load_costs_the_buffer_flush_nothing(tmp_path: Path) -> None:
    broken = tmp_path / "not-a-library.so"
    broken.write_bytes(b"not an ELF file")
    options = {**_runtime_options(HostConfig(work_root=tmp_path)), "flush_bytes": 16 << 20,
               "evict_library": str(broken)}
    runtime = CpuRuntime(options)  # untimed calls then get the buffer
    runtime.to_device(torch.ones(10))
    runtime.evict_call_buffers()
    assert _flush_writes(runtime) == 1
    with pytest.raises(evict_module.EvictHelperError, match="could not be loaded"):
        CpuRuntime({**options, "flush": "lines"})  # the host chose lines: its failure is the judge's
