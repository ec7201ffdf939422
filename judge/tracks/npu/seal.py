"""Which runtime rules (judge/sandbox/seal.py) the NPU track's runner bears, and why: every rule decided
with the evidence read (judge/sandbox/seal_tracks.py says what each status means; docs/security.md, 4b).
"""

from __future__ import annotations

from judge.sandbox.seal import RuntimeRule
from judge.sandbox.seal_tracks import Decision, Status

_R, _C, _S = Status.RUNTIME, Status.CANDIDATE, Status.STATIC_ONLY
_RULE = RuntimeRule

DECISIONS = (
    Decision(_RULE.SIGNAL_HANDLERS, _S,
             "CANN's log library sets a SIGPIPE action around every write to its log socket "
             "(hicann/runtime src/dfx/log/liblog/slog/dlog_core.c, DlogWriteToSocket, at "
             "681ef76); its trace library installs handlers for SIGSEGV, SIGBUS... when "
             "loaded and puts the old ones back when one arrives, so a kernel's honest fault "
             "would be SV instead of RE (src/dfx/trace/atrace/utrace/stacktrace/"
             "stacktrace_signal.c); the driver's user library sets SIGUSR1 on buffer-pool use "
             "and SIGUSR2 at queue init (hicann/driver src/ascend_hal/buff/dc/comm/"
             "buff_recycle/buff_recycle.c, src/ascend_hal/queue/dc/core/queue_user_manage.c, "
             "at ef377e9)"),
    Decision(_RULE.EXECUTABLE_MEMORY, _C,
             "neither hicann/runtime (681ef76) nor hicann/driver (ef377e9) asks for PROT_EXEC "
             "or calls mprotect anywhere in its sources; libascendcl, the graph engine and "
             "the operator libraries are not all among them"),
    Decision(_RULE.MAPPED_CODE, _S,
             "the runtime dlopens its parts on demand: libtsdclient.so "
             "(hicann/runtime src/runtime/core/src/runtime.cc, TsdClientInit), plugins "
             "'loaded in lazy mode' (src/runtime/core/src/plugin_manage/runtime_keeper.cc), "
             "a kernel binary when a kernel's name is set (src/runtime/feature/xpu/"
             "program_plat.cc), the AI CPU scheduler (src/runtime/core/src/utils/"
             "aicpu_scheduler_agent.cc)"),
    Decision(_RULE.FILE_WRITES, _S,
             "every plog record opens its log file O_CREAT|O_WRONLY|O_APPEND (hicann/runtime "
             "src/dfx/log/liblog/slog/plog/plog_file_mgr.c, PlogWrite); the driver opens its "
             "memory-pool device O_RDWR when a pool is first used (hicann/driver "
             "src/ascend_hal/buff/dc/ascend_hal_base/buff_manage_kernel_api.c)"),
    Decision(_RULE.NEW_FILTERS, _R,
             "no seccomp filter is loaded in hicann/runtime or hicann/driver's host sources "
             "(the driver's AI CPU scheduler names libseccomp only in its CMake files)"),
    Decision(_RULE.SHARED_MEMORY, _S,
             "CANN's log library creates SysV shared memory (hicann/runtime v8.5.0 "
             "src/dfx/log/utils/share_mem.c, shmget) and the runtime maps host shared memory "
             "with shm_open (src/runtime/feature/src/drv/npu_driver_mem.cc), both after start-up"),
)
