"""NPU policy rules as data (docs/rules.md, stage 1; docs/security.md, layer 1), in judge/policy's `BackendRules` shape.

The NPU track hands `RULES` to judge/policy (Track.policy_rules); the checks themselves are
judge/policy's. What the NPU adds to the rules every C/C++ backend shares:
- sources: no vendor operators (aclnn*, aclop*, aclmdl*, ...: the kernel must be the team's
  own Ascend C), no device, context or stream management (kernel_run enqueues on
  args->stream and nothing else), no clock reads on the device or the host;
- headers: CANN's Ascend C and ACL runtime headers by `<...>`, vendor operator headers refused;
- the library, in two lists: `TEAM_RULES`, what the team's own objects may import (math, libc,
  C++ runtime, the ACL runtime's memory and copy calls, the tiling and platform APIs), and `RULES`,
  the built library as a whole, which adds what CANN's own objects in every `ascendc_library`
  archive import (judge/tracks/npu/cann_symbols.py, read from cannmirror/asc-devkit). Which object
  imports what is checked object by object (judge/tracks/npu/link_check.py, run by the toolchain
  after the build), so the combined list never lets the team's own code call `Msprof*`,
  `aclrtSetDevice` or `aclrtRecordEvent`.

The lists were read from CANN's sources, not from a library built on a CANN host. The `npu`-marked
test in tests/judge/npu/test_on_npu.py runs both checks on the starter kernel and prints any
symbol or library they refuse, so the first NPU host says what to add.
"""

from __future__ import annotations

import dataclasses

from judge.policy.common import (
    COMMON_BANNED,
    COMMON_HEADER_HINTS,
    CXX_FORBIDDEN_EXPORTS,
    CXX_RUNTIME_IMPORTS,
    CXX_RUNTIME_NEEDED,
    CXX_RUNTIME_PATTERNS,
    HOST_FORBIDDEN_BYTE_SEQUENCES,
    HOST_FORBIDDEN_INSTRUCTIONS,
    LIBC_IMPORTS,
    MATH_IMPORTS,
)
from judge.policy.rules import BackendRules, BannedName
from judge.tracks.npu.cann_symbols import CANN_OBJECT_CALLS, CANN_OBJECT_PATTERNS

_VENDOR = ("calling a vendor operator is not allowed (`{name}`): aclnn/aclop/aclmdl/ATB kernels do the work "
           "for you; the kernel must be your own Ascend C")
_DEVICE = ("`{name}` is not allowed: kernel_run must enqueue its work on args->stream and leave devices, "
           "contexts and streams to the judge")
_TIMER = "reading clocks or timing events is not allowed (`{name}`): the judge does the timing"
_OS_LAYER = ("`{name}` is CANN's OS layer (mmpa), the runtime's own: clocks, threads, files, sockets, processes "
             "and dynamic loading through it are refused like their plain names")

NPU_BANNED: tuple[BannedName, ...] = (
    BannedName(r"\b(?:aclnn\w*|aclop[A-Z]\w*|aclmdl\w*|aclblas\w*|acldvpp\w*|atb\s*::|at_npu\s*::|"
               r"c10_npu\s*::|torch_npu\w*)", "vendor-kernel", _VENDOR),
    BannedName(r"\b(?:aclInit|aclFinalize|aclrtSetDevice|aclrtResetDevice|aclrtCreateContext|"
               r"aclrtDestroyContext|aclrtSetCurrentContext|aclrtCreateStream\w*|aclrtDestroyStream\w*|"
               r"aclrtLaunchCallback|aclrtSubscribeReport|aclrtProcessReport|aclrtSynchronizeDevice|"
               r"aclrtSetOpWaitTimeout|aclrtSetOpExecuteTimeOut|aclrtCtxSetSysParamOpt|aclrtSetDeviceSatMode|"
               r"aclrtSetStreamOverflowSwitch|aclrtResetOverflowStatus|aclrtMallocHost|aclrtFreeHost)\b",
               "device-management", _DEVICE),
    BannedName(r"\b(?:GetSystemCycle|get_sys_cnt|GetSysCnt|aclrtEventElapsedTime\w*|aclrtRecordEvent|"
               r"aclrtEventGetTimestamp|aclprof\w*|Msprof\w*)\b", "timer-read", _TIMER),
    # mmpa (hicann/runtime pkg_inc/mmpa/sub_inc/mmpa_linux.h): mmGetTickCount, mmCreateTask*, mmPopen,
    # mmDlopen, mmSocket, mmOpen... A red team's host stubs reached all of them by name.
    BannedName(r"\bmm[A-Z]\w*\s*\(", "os-layer", _OS_LAYER),
    # The CANN runtime's own API (rtStreamCreate, rtEventRecord, rtEventElapsedTime, rtSetDevice, rtKernelLaunch*,
    # ...), and the ACL calls a second stream or a launch of one's own needs: work on another stream escapes
    # the judge's events window, and a launch outside the generated launchers escapes its launch count
    # (docs/security.md, "What the team's objects may import").
    BannedName(r"\b(?:rt[A-Z]\w*|aclrtCreateEvent\w*|aclrtDestroyEvent\w*|aclrtStreamWaitEvent\w*|"
               r"aclrtLaunchKernel\w*|aclrtBinary\w*|aclrtRegStreamStateCallback)\s*\(",
               "runtime-internals", "`{name}` is the CANN runtime's own API, used by CANN's generated launchers: "
               "launch your kernels through aclrtlaunch_<kernel> (or <<<>>>) on args->stream only"),
    # With ASCENDC_DUMP=0 (the judge's build), CANN 8.5.0's generator still writes the assert dump's
    # ascendc_set_exception_dump_info call, unguarded, into the host stub of a kernel that uses ASSERT_MSG
    # (it marks the file through ENABLE_ASSERT): that stub does not compile (docs/npu-worker.md, "assert").
    BannedName(r"\b(?:NPU_)?ASSERT_MSG\s*\(|\bENABLE_ASSERT\w*\s*\(|\b__enable_feature_for_compile_assert",
               "device-assert", "`{name}` cannot be built here: the judge compiles kernels with ASCENDC_DUMP=0, "
               "and for a kernel using it CANN's generated host stub does not compile; plain assert() is "
               "compiled out under ASCENDC_DUMP=0 and may stay"),
    BannedName(r"\b(?:aclrtDumpConfig|aclmdlInitDump|aclmdlSetDump|AdumpSetDump\w*|ReadFile|WriteFile)\s*\(",
               "file-io", "file access is not allowed (`{name}`): inputs and outputs go through kernel_args"),
)

# Standard headers for computing, plus CANN's Ascend C and ACL runtime headers.
_HEADERS = """
    algorithm array cassert cfloat climits cmath cstdarg cstddef cstdint cstdio cstdlib cstring limits
    type_traits utility assert.h float.h limits.h math.h stdarg.h stdbool.h stddef.h stdint.h stdio.h
    stdlib.h string.h
    kernel_operator.h kernel_tiling/kernel_tiling.h lib/matmul_intf.h lib/matrix/matmul/matmul.h
    acl/acl.h acl/acl_base.h acl/acl_rt.h
    tiling/platform/platform_ascendc.h tiling/tiling_api.h
"""
NPU_HEADER_HINTS: dict[str, str] = {
    **COMMON_HEADER_HINTS,
    "acl/acl_op.h": "vendor operators are not allowed; write the kernel in Ascend C",
    "acl/acl_op_compiler.h": "vendor operators are not allowed; write the kernel in Ascend C",
    "aclnn/aclnn_base.h": "aclnn operators are not allowed; write the kernel in Ascend C",
    "aclnnop/aclnn_sparse_flash_attention_grad.h": "the vendor operator is the baseline, not a submission",
}

# What a team's own objects need to launch their kernels on args->stream and nothing more: the
# launchers CANN generates for their kernels, the ACL runtime's memory and copy calls, device queries,
# securec. Not the CANN runtime's rt* API (streams, events, device clocks, kernel launch of one's own: the
# generated launchers and CANN's runtime objects call it, and link_check.py holds those to CANN's
# recorded imports), not events, not dump or logging internals.
_LAUNCH_PATTERNS = (
    r"aclrt(?:Malloc|Free|Memcpy|Memset|GetDevice|GetDeviceInfo|GetSocName|GetRunMode|SynchronizeStream|"
    r"GetCurrentContext|GetErrorCode)(?!Host)\w*",
    r"aclGetRecentErrMsg|aclGetDataTypeSize|aclrtGetSocName",
    r"aclrtlaunch_\w+",  # the launchers ascendc_library generates for the team's own kernels
    # mmpa, CANN's OS layer: the team's objects only its locks and ids; the rest of it (clocks, threads,
    # files, sockets, popen, dlopen) is what CANN's own objects may import (`RULES` below).
    r"mm(?:Mutex|Cond|RWLock|RDLock|WRLock|Sem|Tls)\w*|mmGet(?:Tid|Pid|ErrorCode|PageSize)",
    r"(?:mem|str|wcs)\w*_s|v?sn?printf_s",  # securec (libc_sec)
    r"pthread_(?:once|mutex_\w+|key_create|getspecific|setspecific|rwlock_\w+|self)",
    # Host code is compiled with _GLIBCXX_USE_CXX11_ABI=0 like CANN's (host_intf.cmake in asc-devkit):
    # std::string is the old-ABI one; <iostream> (which CANN's tiling headers include) adds ios_base::Init.
    r"_ZN?K?Ss\w*",
    r"_ZNSaIcE\w+",  # std::allocator<char>, which old-ABI strings import at -O0
    r"_ZNSt8ios_base4Init[CD][12]Ev",
    # The tiling and platform APIs host code may call (tiling/tiling_api.h in libtiling_api.a,
    # tiling/platform/platform_ascendc.h in libplatform.so).
    r"_ZN?K?\d*(?:matmul_tiling|optiling|platform_ascendc|AscendC)\w*",
)
_LIBRARIES = (
    r"libascendcl\.so", r"libruntime\.so", r"libc_sec\.so", r"libascend_dump\.so", r"libregister\.so",
    r"liberror_manager\.so", r"libprofapi\.so", r"libge_common_base\.so", r"libascendalog\.so", r"libmmpa\.so",
    r"libunified_dlog\.so", r"libplatform\.so", r"libacl_rt\.so",
    r"libdl\.so\.\d+", r"libpthread\.so\.\d+", *CXX_RUNTIME_NEEDED,
    # libtiling_api.a (static, linked through ascendc_library's interface in function.cmake) needs
    # libgraph_base.so and libregister.so (asc-devkit's docs: 高阶API常用链接库).
    r"libgraph_base\.so",
)

# What the team's own objects may import (link_check.py holds each of their objects to it).
TEAM_RULES = BackendRules(
    source_suffixes=frozenset({".cpp", ".cc", ".cxx", ".c", ".h", ".hpp"}),
    allowed_system_headers=frozenset(_HEADERS.split()),
    banned=COMMON_BANNED + NPU_BANNED,
    header_hints=NPU_HEADER_HINTS,
    allowed_imports=MATH_IMPORTS | LIBC_IMPORTS | CXX_RUNTIME_IMPORTS | frozenset({"getenv", "secure_getenv"}),
    allowed_import_patterns=(*_LAUNCH_PATTERNS, *CXX_RUNTIME_PATTERNS),
    # ascendc_library writes aclrtlaunch_<kernel>.h for each kernel of the *_kernel.cpp files:
    # host code launches through ACLRT_LAUNCH_KERNEL(<kernel>)(blocks, args->stream, ...). A name
    # that is no kernel of the submission finds no header: a compile error.
    generated_headers=(r"aclrtlaunch_\w+\.h",),
    allowed_imports_in_words=(
        "math, memory and C++ runtime functions, and the ACL/CANN runtime's memory, copy and "
        "kernel launch functions on args->stream"
    ),
    forbidden_export_patterns=CXX_FORBIDDEN_EXPORTS,
    allowed_needed=_LIBRARIES,
    # Host code only: the device binary is data in the library, not host machine code.
    forbidden_instructions=HOST_FORBIDDEN_INSTRUCTIONS,
    forbidden_byte_sequences=dict(HOST_FORBIDDEN_BYTE_SEQUENCES),
    # frame_dummy only: the team's objects add none (link_check.py counts them object by object).
    init_array_entries=1,
)

# The built library as a whole: the team's list plus what CANN's own objects import. Its constructors
# are CANN's (host_stub.cpp's kernel registration, ascendc_runtime.cpp's globals, libtiling_api.a's
# <iostream> initialisers, as many as the tiling API objects the link pulls in) and, at most one per
# object, <iostream>'s in the team's: link_check.py counts the team's, so the whole library's is a
# ceiling, not the rule.
RULES = dataclasses.replace(
    TEAM_RULES,
    allowed_imports=TEAM_RULES.allowed_imports | CANN_OBJECT_CALLS,
    allowed_import_patterns=(*TEAM_RULES.allowed_import_patterns, *CANN_OBJECT_PATTERNS,
                             r"mm[A-Z]\w+"),  # mmpa, as CANN's static libraries (libtiling_api.a) may use it
    init_array_entries=64,
)
