"""NPU policy rules as data (judging.md "Policy check"): what Ascend C submissions may not do.

Two kinds of rule:
- source rules: patterns refused in any submitted file (comments and string literals are
  blanked first, so a rule fires on code, not on prose);
- the undefined-symbol allow-list of the built library: the launch path (ACL runtime and the
  CANN runtime pieces `ascendc_library` links in), libc/libstdc++ basics, and nothing else.
  Vendor operators (aclnn*, aclop*, aclmdl*) stay off it even though they live in CANN.

The allow-list is written from CANN's documented launch path and has not yet been checked
against a library built on a CANN host: the `npu`-marked test in tests/judge/npu/ prints any
symbol of the starter kernel's library that it refuses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from judge.results import PolicyFinding
from judge.toolchains.base import SourceFile


@dataclass(frozen=True)
class SourceRule:
    name: str  # stable rule name shown in reports
    pattern: re.Pattern[str]
    message: str  # a sentence a team understands


def _rule(name: str, pattern: str, message: str) -> SourceRule:
    return SourceRule(name=name, pattern=re.compile(pattern), message=message)


_INCLUDE = r"^\s*#\s*include\s*[<\"]"
SOURCE_RULES: tuple[SourceRule, ...] = (
    _rule("vendor-kernel",
          r"\b(?:aclnn\w*|aclop[A-Z]\w*|aclmdl\w*|aclblas\w*|acldvpp\w*)\b",
          "calling a vendor operator (aclnn*, aclop*, aclmdl*, aclblas*) is not allowed: "
          "the kernel must be your own Ascend C"),
    _rule("vendor-include",
          _INCLUDE + r"(?:aclnn\w*|aclnnop/|acl/acl_op\w*\.h|acl/ops/|atb/|hccl|torch_npu|op_api/|"
          r"opdev/|graph/|ge/|external/)",
          "headers of vendor operator libraries (aclnn, acl_op, ATB, HCCL, torch_npu, graph engine) "
          "are not allowed"),
    _rule("device-management",
          r"\b(?:aclInit|aclFinalize|aclrtSetDevice|aclrtResetDevice|aclrtCreateContext|aclrtDestroyContext|"
          r"aclrtSetCurrentContext|aclrtCreateStream\w*|aclrtDestroyStream\w*|aclrtSetStreamOverflowSwitch|"
          r"aclrtLaunchCallback|aclrtSubscribeReport|aclrtProcessReport|aclrtSetDeviceSatMode|aclrtSetOpWaitTimeout|"
          r"aclrtSetOpExecuteTimeOut|aclrtCtxSetSysParamOpt|aclrtSynchronizeDevice)\b",
          "kernel_run must enqueue its work on args->stream and leave devices, contexts and streams to "
          "the judge"),
    _rule("timer-read",
          r"\b(?:GetSystemCycle|get_sys_cnt|GetSysCnt|aclrtEventElapsedTime|aclrtRecordEvent|clock_gettime|"
          r"gettimeofday|rdtscp?|__rdtscp?)\b",
          "reading clocks or timing events is not allowed in a submission"),
    _rule("inline-asm", r"\b(?:__asm__|asm)\s*(?:volatile\s*|__volatile__\s*)?\(",
          "inline assembly is not allowed in sources"),
    _rule("file-io",
          r"\b(?:fopen|freopen|fdopen|open|openat|creat|remove|rename|unlink|mkdir|opendir|readlink|"
          r"aclrtDumpConfig|aclmdlInitDump|ReadFile|WriteFile)\s*\(",
          "file access is not allowed: inputs arrive through kernel_args, results go to its outputs"),
    _rule("process-or-network",
          r"\b(?:fork|vfork|clone|execl|execlp|execle|execv|execve|execvp|execvpe|system|popen|posix_spawnp?|"
          r"socket|connect|bind|listen|accept|sendto|recvfrom|ptrace|syscall|kill|dlopen|dlsym|dlmopen|"
          r"mmap|mprotect|setenv|putenv|pthread_create|prctl)\s*\(",
          "process creation, threads, networking, dynamic loading and raw system calls are not allowed"),
    _rule("banned-include",
          _INCLUDE + r"(?:fstream|filesystem|thread|future|dlfcn\.h|unistd\.h|spawn\.h|sys/socket\.h|"
          r"sys/wait\.h|sys/mman\.h|sys/syscall\.h|netinet/|arpa/|netdb\.h|pthread\.h|signal\.h|csignal|"
          r"fcntl\.h|x86intrin\.h|immintrin\.h)[>\"]",
          "this header gives file, process, thread, network or timer access, which submissions may not use"),
)

# Undefined symbols the built library may import (nm -D --undefined-only), as anchored patterns.
ALLOWED_UNDEFINED: tuple[str, ...] = (
    # The ACL runtime launch path: memory, streams the judge made, kernel launch and registration.
    r"aclrt(?!ResetDevice|SetDevice|CreateContext|DestroyContext|SetCurrentContext|CreateStream|DestroyStream"
    r"|LaunchCallback|SubscribeReport|ProcessReport|EventElapsedTime|RecordEvent|SynchronizeDevice)\w+",
    r"aclGetRecentErrMsg", r"aclGetDataTypeSize",
    # CANN runtime pieces that ascendc_library links into the host stub (rtKernelLaunch, registration).
    r"rt[A-Z]\w*", r"Adx\w+", r"AdumpGet\w+|Adump\w+", r"[Dd]log\w*|CheckLogLevel|DlogRecord", r"mm[A-Z]\w+",
    r"ge::\w+|_ZN2ge\w+", r"ErrorManager\w*|_ZN\d*ErrorManager\w+", r"MsprofReport\w*|Msprof\w+|prof\w*",
    # securec (c_sec): memcpy_s and friends.
    r"(?:mem|str|wcs)\w*_s|sprintf_s|snprintf_s|vsnprintf_s",
    # C and C++ runtime basics.
    r"malloc|calloc|realloc|free|posix_memalign|aligned_alloc|memcpy|memmove|memset|memcmp|memchr|strlen|"
    r"strnlen|strcmp|strncmp|strcpy|strncpy|strchr|strrchr|strstr|strtol|strtoul|strtod|atoi|abort|exit|"
    r"__assert_fail|__stack_chk_fail|__errno_location|__cxa_\w+|__gxx_personality_v0|_Unwind_\w+|"
    r"__gmon_start__|_ITM_\w+|__tls_get_addr|__dso_handle|getenv|secure_getenv",
    r"(?:__)?(?:v?f?printf|v?s?n?printf|puts|fputs|fputc|putchar|fwrite|fflush)(?:_chk)?|stderr|stdout",
    r"pthread_(?:once|mutex_\w+|key_create|getspecific|setspecific|rwlock_\w+|cond_\w+|self|equal)",
    r"(?:exp|log|sqrt|pow|fabs|floor|ceil|round|fmax|fmin|fmod|ldexp|frexp)f?|__(?:exp|log|pow)f?_finite",
    r"_Zn[wa]\w+|_Zd[la]\w+|_ZNSt\w+|_ZNKSt\w+|_ZSt\w+|_ZTVN10__cxxabiv\w+|_ZTI\w+|_ZTS\w+|_ZNSo\w+|_ZNSi\w+",
)
_ALLOWED = re.compile("(?:" + "|".join(f"(?:{p})" for p in ALLOWED_UNDEFINED) + r")(?:@\S*)?")
# What the library itself may export, besides what compilers and CANN's stubs add.
EXPORTED = ("kernel_run", "kernel_workspace_bytes")


def blank_comments_and_strings(text: str) -> str:
    """`text` with comments and string/char literals turned to spaces, newlines kept (lines stay put)."""
    # Includes keep their "..." name: the include rules need to read it.
    pattern = re.compile(r"//[^\n]*|/\*.*?\*/|'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\"", re.S)

    def blank(match: re.Match[str]) -> str:
        start = match.string.rfind("\n", 0, match.start()) + 1
        if match.group(0).startswith('"') and re.match(r"\s*#\s*include\s*$", match.string[start:match.start()]):
            return match.group(0)
        return re.sub(r"[^\n]", " ", match.group(0))

    return pattern.sub(blank, text)


def check_npu_sources(sources: list[SourceFile]) -> list[PolicyFinding]:
    """Every source rule that fires, with file and line; empty when the sources are clean."""
    findings: list[PolicyFinding] = []
    for source in sources:
        text = blank_comments_and_strings(source.content.decode("utf-8", errors="replace"))
        for rule in SOURCE_RULES:
            for number, line in enumerate(text.splitlines(), start=1):
                match = rule.pattern.search(line)
                if match:
                    findings.append(PolicyFinding(rule=rule.name, message=f"{rule.message} (found "
                                                  f"{match.group(0).strip()!r})", file=source.name, line=number))
                    break  # one finding per rule and file is enough to refuse and to point at it
    return findings


def refused_symbols(undefined: list[str]) -> list[str]:
    """The undefined symbols of a built library that are not on the NPU allow-list."""
    return [name for name in undefined if not _ALLOWED.fullmatch(name)]
