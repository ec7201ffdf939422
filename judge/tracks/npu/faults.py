"""Reading a device fault after a kernel call: the ACL runtime's error codes, as CANN defines them.

The table is hicann/runtime's include/external/acl/error_codes/rt_error_codes.h (commit 681ef76;
docs/npu-worker.md, "Checked against CANN's sources"): the 5070xx codes a kernel's own fault or
hang raises when the stream is synchronised after it. Each is the team's (RE, or TLE for a hang
the device's watchdog ended); every other code, and anything without a code, is left to the judge
(IE), since it may be the driver's, the runtime's or the judge's own doing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum


class FaultKind(Enum):
    CRASH = "RE"  # the kernel faulted: a trap, an illegal access, an exception on a core
    HANG = "TLE"  # the kernel did not finish: a core's or the stream's timeout


@dataclass(frozen=True)
class KernelFaultCode:
    code: int
    name: str  # ACL_ERROR_RT_...
    meaning: str  # rt_error_codes.h's comment
    kind: FaultKind


_TABLE = (
    (507011, "ACL_ERROR_RT_MODEL_EXECUTE", "model execute failed", FaultKind.CRASH),
    (507014, "ACL_ERROR_RT_AICORE_TIMEOUT", "aicore timeout", FaultKind.HANG),
    (507015, "ACL_ERROR_RT_AICORE_EXCEPTION", "aicore exception", FaultKind.CRASH),
    (507016, "ACL_ERROR_RT_AICORE_TRAP_EXCEPTION", "aicore trap exception", FaultKind.CRASH),
    (507034, "ACL_ERROR_RT_VECTOR_CORE_TIMEOUT", "vector core timeout", FaultKind.HANG),
    (507035, "ACL_ERROR_RT_VECTOR_CORE_EXCEPTION", "vector core exception", FaultKind.CRASH),
    (507036, "ACL_ERROR_RT_VECTOR_CORE_TRAP_EXCEPTION", "vector core trap exception", FaultKind.CRASH),
    (507042, "ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW", "aic trap read overflow", FaultKind.CRASH),
    (507043, "ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW", "aic trap write overflow", FaultKind.CRASH),
    (507044, "ACL_ERROR_RT_VECTOR_CORE_TRAP_READ_OVERFLOW", "aiv trap read overflow", FaultKind.CRASH),
    (507045, "ACL_ERROR_RT_VECTOR_CORE_TRAP_WRITE_OVERFLOW", "aiv trap write overflow", FaultKind.CRASH),
    (507046, "ACL_ERROR_RT_STREAM_SYNC_TIMEOUT", "stream sync time out", FaultKind.HANG),
    (507047, "ACL_ERROR_RT_EVENT_SYNC_TIMEOUT", "event sync time out", FaultKind.HANG),
    (507048, "ACL_ERROR_RT_FFTS_PLUS_TIMEOUT", "ffts+ timeout", FaultKind.HANG),  # MIX (Cube + Vector) kernels
    (507049, "ACL_ERROR_RT_FFTS_PLUS_EXCEPTION", "ffts+ exception", FaultKind.CRASH),
    (507050, "ACL_ERROR_RT_FFTS_PLUS_TRAP_EXCEPTION", "ffts+ trap exception", FaultKind.CRASH),
)
KERNEL_FAULT_CODES: dict[int, KernelFaultCode] = {row[0]: KernelFaultCode(*row) for row in _TABLE}
# The marker the verdict is read from in the worker (judge/pipeline.py): a hang is TLE, not RE.
HANG_MARK = "[device timeout]"

_CODE = re.compile(r"(?<!\d)(50\d{4})(?!\d)")


def classify_fault(text: str) -> KernelFaultCode | None:
    """The kernel fault a device error's text names (torch_npu: "... error code is 507015 ..."), or None."""
    for match in _CODE.finditer(text):
        fault = KERNEL_FAULT_CODES.get(int(match.group(1)))
        if fault is not None:
            return fault
    return None


def npu_fault_reason(error: BaseException) -> str | None:
    """What the team is told for a device error raised around their call, None when it is not theirs.

    torch_npu raises RuntimeError("... AclrtSynchronizeDeviceWithTimeout, error code is 507015 ...
    The aicore execution is abnormal ..."). The reason names the code and its meaning; a hang ends
    with HANG_MARK, which the worker turns into TLE.
    """
    if not isinstance(error, RuntimeError):
        return None
    text = str(error)
    fault = classify_fault(text)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if fault is None:
        # No code (an older torch_npu's message): the runtime's own words for a core's exception.
        abnormal = next((line for line in lines if "execution is abnormal" in line), None)
        return abnormal[:300] if abnormal else None
    detail = next((line for line in lines if "abnormal" in line), lines[0])[:200]
    reason = f"{fault.meaning} (ACL error {fault.code}, {fault.name}): {detail}"
    return reason + (f" {HANG_MARK}" if fault.kind is FaultKind.HANG else "")
