"""The runner's checks against work deferred past the clock (judge/runner/child/guard.py; docs/security.md, layer 5)."""

from __future__ import annotations

import ctypes
import signal

import torch

from judge.runner.child.guard import PAGE, CallGuard, PageTouch, Span, spans, unprotected

_LIBC = ctypes.CDLL(None, use_errno=True)
PROT_NONE, PROT_READ, PROT_RW = 0, 1, 3


def _page_inside(tensor: torch.Tensor) -> int:
    return (tensor.data_ptr() + PAGE - 1) // PAGE * PAGE


def test_a_changed_signal_handler_is_named_and_an_unchanged_one_is_not():
    guard = CallGuard()
    assert guard.changed_handlers() == []
    previous = signal.signal(signal.SIGUSR2, lambda *_: None)
    try:
        assert guard.changed_handlers() == ["SIGUSR2"]
        assert CallGuard().changed_handlers() == []  # a snapshot taken after it sees it as the runner's
    finally:
        signal.signal(signal.SIGUSR2, previous)
    assert guard.changed_handlers() == []


def test_a_protection_changed_on_an_output_or_input_is_named():
    inputs = {"x": torch.zeros(4 * PAGE, dtype=torch.uint8)}
    outputs = {"y": torch.zeros(4 * PAGE, dtype=torch.uint8), "z": torch.zeros(8, dtype=torch.float32)}
    guard = CallGuard()
    assert guard.tampering(inputs, outputs) == []
    for name, tensor in (("y", outputs["y"]), ("x", inputs["x"])):
        page = ctypes.c_void_p(_page_inside(tensor))
        for protection in (PROT_NONE, PROT_READ):
            assert _LIBC.mprotect(page, PAGE, protection) == 0
            try:
                assert guard.tampering(inputs, outputs) == [f"the memory protection of {name} was changed"]
            finally:
                assert _LIBC.mprotect(page, PAGE, PROT_RW) == 0
    assert guard.tampering(inputs, outputs) == []


def test_a_range_with_an_unmapped_hole_is_not_as_the_runner_left_it():
    assert unprotected([Span("nowhere", PAGE, PAGE)]) == ["nowhere"]  # page 1 is never mapped
    assert spans({"empty": torch.zeros(0)}) == []


def test_the_page_touch_reads_one_byte_of_every_page_and_the_last():
    data = torch.zeros(3 * PAGE + 5, dtype=torch.uint8)
    data[::PAGE] = 1
    data[-1] = 7
    touch = PageTouch({"y": data, "f": torch.ones(2, dtype=torch.float32)})
    assert touch.read() == 4 + 7 + 0 + 0x3F  # the float32 1.0's bytes: 00 00 80 3f, read at 0 and 7
    assert PageTouch({}).read() == 0


def test_a_runaway_mapping_count_is_tampering_and_the_read_stays_bounded(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """About 60,000 mappings once made the check take 130 ms, a window for a helper thread. The
    read stops at MAX_MAPPINGS, and so many mappings are themselves a finding (one the worker accepts)."""
    import mmap

    from judge.runner.child import guard
    from judge.runner.message_checks import tampering

    inputs = {"x": torch.zeros(4 * PAGE, dtype=torch.uint8)}
    monkeypatch.setattr(guard, "MAX_MAPPINGS", 64)  # this process has a few hundred mappings
    found = CallGuard().tampering(inputs, {})
    assert found == [guard.RUNAWAY_MAPPINGS]
    assert tampering(found, frozenset({"x"})) == found  # the worker reads it as the guard's own sentence
    monkeypatch.undo()
    # Splitting one region into many mappings (alternate protections) is what a kernel would do.
    region = mmap.mmap(-1, 200 * PAGE)
    base = ctypes.addressof(ctypes.c_char.from_buffer(region))
    try:
        for i in range(0, 200, 2):
            assert _LIBC.mprotect(ctypes.c_void_p(base + i * PAGE), PAGE, PROT_READ) == 0
        monkeypatch.setattr(guard, "MAX_MAPPINGS", len(open("/proc/self/maps").readlines()) - 50)
        assert guard.RUNAWAY_MAPPINGS in CallGuard().tampering(inputs, {})
    finally:
        monkeypatch.undo()
        for i in range(0, 200, 2):
            _LIBC.mprotect(ctypes.c_void_p(base + i * PAGE), PAGE, PROT_RW)
