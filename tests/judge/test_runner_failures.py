"""A runner child's error report and call report, as the worker reads them (docs/security.md, layer 5)."""

from __future__ import annotations

import pytest

from judge.runner.failures import (
    AFTER_SUBMISSION_MEMORY_MESSAGE,
    AFTER_SUBMISSION_MESSAGE,
    FailureKind,
    SubmissionBrokeRunner,
    runner_failure,
)
from judge.runner.protocol import CallReport, Outputs, ProtocolViolation

KERNEL_TEXT = "RuntimeError: kernel-chosen text: n=123457"
NAMES = frozenset({"x", "y"})


def test_before_loading_the_failure_is_the_judges() -> None:
    failure = runner_failure("internal", "Traceback: judge bug", submission_ran=False, ready=False, private=False)
    assert type(failure) is not SubmissionBrokeRunner
    assert failure.kind == FailureKind.INTERNAL and "judge bug" in str(failure)


@pytest.mark.parametrize("kind", ["internal", "anything", "load"])
def test_after_the_kernel_ran_nothing_is_internal_and_its_text_is_never_shown(kind: str) -> None:
    failure = runner_failure(kind, KERNEL_TEXT, submission_ran=True, ready=True, private=False)
    assert isinstance(failure, SubmissionBrokeRunner)
    assert failure.kind == FailureKind.AFTER_SUBMISSION and not failure.memory
    assert str(failure) == AFTER_SUBMISSION_MESSAGE
    assert failure.detail == KERNEL_TEXT  # for the worker's log


@pytest.mark.parametrize("detail", ["MemoryError", "OSError: [Errno 12] Cannot allocate memory: '/proc/self/task'",
                                    "RuntimeError: DefaultCPUAllocator: can't allocate memory"])
def test_an_allocation_failure_after_the_kernel_ran_is_memory(detail: str) -> None:
    failure = runner_failure("internal", detail, submission_ran=True, ready=True, private=False)
    assert isinstance(failure, SubmissionBrokeRunner) and failure.memory
    assert str(failure) == AFTER_SUBMISSION_MEMORY_MESSAGE


def test_a_load_error_while_loading_keeps_the_loaders_words() -> None:
    failure = runner_failure("load", "the library does not export kernel_run", submission_ran=True, ready=False,
                             private=False)
    assert failure.kind == FailureKind.LOAD and "kernel_run" in str(failure)


def test_a_device_fault_is_withheld_from_the_first_private_case_on() -> None:
    public = runner_failure("kernel", "kernel_run left the device in error: illegal address", submission_ran=True,
                            ready=True, private=False)
    private = runner_failure("kernel", "kernel_run left the device in error: n=123457", submission_ran=True,
                             ready=True, private=True)
    assert public.kind == private.kind == FailureKind.KERNEL
    assert "illegal address" in str(public) and "123457" not in str(private)


def _report(**changes: object) -> dict[str, object]:
    header: dict[str, object] = {"rc": 0, "elapsed_ns": 10, "digest_before": {"x": "ab"}, "digest_after": {"x": "ab"},
                                 "new_threads": 0, "late_writes": [], "openmp_level": 0, "busy_threads": 0,
                                 "outputs": {"y": [[4], "float32"]}}
    header.update(changes)
    return header


def test_an_honest_report_is_read() -> None:
    report = CallReport.from_wire(_report(), NAMES)
    assert report.rc == 0 and report.outputs == {"y": ([4], "float32")}


@pytest.mark.parametrize("changes", [
    {"rc": "0"}, {"rc": None}, {"late_writes": ["kernel-chosen text"]}, {"late_writes": "y"},
    {"digest_before": {"n=123457": "ab"}}, {"outputs": {"y": [[4], "manual_seed"]}},
    {"outputs": {"z": [[4], "float32"]}}, {"outputs": {"y": [[-1], "float32"]}}, {"outputs": {"y": [4]}},
    {"new_threads": True},
])
def test_a_forged_report_is_a_protocol_violation(changes: dict[str, object]) -> None:
    with pytest.raises(ProtocolViolation) as caught:
        CallReport.from_wire(_report(**changes), NAMES)
    assert "kernel-chosen" not in str(caught.value) and "123457" not in str(caught.value)


def test_missing_fields_are_a_protocol_violation() -> None:
    header = _report()
    del header["digest_after"]
    with pytest.raises(ProtocolViolation):
        CallReport.from_wire(header, NAMES)


def test_output_bytes_must_fit_their_shape() -> None:
    assert Outputs({"y": bytes(16)}).tensors({"y": ([4], "float32")})["y"].shape == (4,)
    assert Outputs({"y": b""}).tensors({"y": ([0], "float32")})["y"].numel() == 0
    for raw, shape in ((bytes(12), [4]), (b"", [1 << 40])):
        with pytest.raises(ProtocolViolation, match="the output y has bytes that do not fit its shape"):
            Outputs({"y": raw}).tensors({"y": (shape, "float32")})
    with pytest.raises(ProtocolViolation, match="the runner sent no y"):
        Outputs({}).tensors({"y": ([4], "float32")})
