"""Device faults after a call, read with CANN's own error-code table.

data/rt_error_codes_507.txt is the 5070xx block of hicann/runtime's rt_error_codes.h; the judge's
table must agree with it code by code, and a fault of the team's kernel is RE or TLE, never IE.
"""

from __future__ import annotations

import re

import pytest

from judge.tracks.npu.faults import HANG_MARK, KERNEL_FAULT_CODES, FaultKind, classify_fault, npu_fault_reason
from tests.judge.npu.conftest import DATA

HEADER = {int(code): (name, comment.strip()) for name, code, comment in re.findall(
    r"^#define (ACL_ERROR_RT_\w+) (\d+)\s*// (.*)$", (DATA / "rt_error_codes_507.txt").read_text(), re.M)}


def _torch_npu_error(code: int) -> RuntimeError:
    return RuntimeError(f"npuSynchronizeDevice:torch_npu/csrc/core/npu/NPUStream.cpp:506 NPU function error: "
                        f"AclrtSynchronizeDeviceWithTimeout, error code is {code}\n[ERROR] PTA call acl api failed")


def test_the_table_is_canns_code_for_code() -> None:
    assert len(HEADER) > 50
    for code, fault in KERNEL_FAULT_CODES.items():
        assert HEADER[code] == (fault.name, fault.meaning), code


def test_507011_is_a_failed_execution_not_a_timeout() -> None:
    assert HEADER[507011][0] == "ACL_ERROR_RT_MODEL_EXECUTE"
    assert KERNEL_FAULT_CODES[507011].kind is FaultKind.CRASH


@pytest.mark.parametrize("code,kind", [
    (507015, FaultKind.CRASH), (507016, FaultKind.CRASH), (507035, FaultKind.CRASH), (507036, FaultKind.CRASH),
    (507042, FaultKind.CRASH), (507043, FaultKind.CRASH), (507044, FaultKind.CRASH), (507045, FaultKind.CRASH),
    (507014, FaultKind.HANG), (507034, FaultKind.HANG), (507046, FaultKind.HANG),
])
def test_each_kernel_fault_is_the_teams(code: int, kind: FaultKind) -> None:
    assert "trap" in HEADER[code][1] or "exception" in HEADER[code][1] or "time" in HEADER[code][1]
    reason = npu_fault_reason(_torch_npu_error(code))
    assert reason is not None and str(code) in reason and HEADER[code][0] in reason
    assert reason.endswith(HANG_MARK) is (kind is FaultKind.HANG)


@pytest.mark.parametrize("code", [507000, 507001, 507008, 507033, 507053, 507899, 207001, 107002])
def test_codes_that_are_not_the_kernels_stay_the_judges(code: int) -> None:
    assert classify_fault(f"error code is {code}") is None
    assert npu_fault_reason(_torch_npu_error(code)) is None


def test_a_code_inside_a_longer_number_is_not_read() -> None:
    assert classify_fault("pid 15070150 failed") is None
