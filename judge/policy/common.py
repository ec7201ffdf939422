"""Rules every C/C++ backend shares; judge/policy/<backend>.py adds its own to these.

Each list names what a kernel never needs (judging.md, "Stages of a run"):
files, network, processes, threads outside OpenMP, loading code, system
calls, timers, inline assembly, code that runs at load time, the environment,
signals.
"""

from __future__ import annotations

from judge.policy.rules import BannedName


def _calls(names: str, rule: str, message: str) -> list[BannedName]:
    """One BannedName per function: a call `name(`, not a member call `x.name(` or `x->name(`."""
    return [BannedName(rf"(?<![\w.>$]){name}\s*\(", rule, message) for name in names.split()]


_FILE = "kernels may not use files: `{name}` is refused; the judge gives every input and output through kernel_args"
_NET = "kernels may not use the network: `{name}` is refused"
_PROC = "kernels may not start processes or programs: `{name}` is refused"
_THREAD = "start threads with OpenMP (#pragma omp parallel) only: `{name}` is refused"
_DL = "kernels may not load code at run time: `{name}` is refused"
_SYSCALL = "kernels may not make system calls directly: `{name}` is refused"
_TIMER = "kernels may not read clocks or cycle counters: `{name}` is refused (the judge does the timing)"
_ENV = "kernels may not read the environment or the process's memory map: `{name}` is refused"
_SIGNAL = "kernels may not handle or send signals: `{name}` is refused"
_MEMMAP = "kernels may not map memory or change its protection: `{name}` is refused; use malloc or the workspace"

COMMON_BANNED: tuple[BannedName, ...] = (
    *_calls(
        "fopen fopen64 freopen fdopen open open64 openat creat opendir readdir scandir remove rename "
        "unlink unlinkat mkdir rmdir tmpfile tmpnam mkstemp truncate ftruncate pread pwrite readv writev "
        "dup2 dup3 fcntl ioctl sendfile splice lstat fstat chdir chmod chown symlink readlink",
        "file-io",
        _FILE,
    ),
    BannedName(r"\b(?:std\s*::\s*)?(?:basic_)?[io]?fstream\b|\bfilebuf\b|\bfilesystem\s*::", "file-io", _FILE),
    *_calls(
        "socket connect listen accept accept4 send recv sendto recvfrom sendmsg recvmsg getaddrinfo "
        "gethostbyname inet_pton inet_addr",
        "network",
        _NET,
    ),
    BannedName(r"(?<![\w.>$:])bind\s*\(", "network", _NET),  # std::bind stays allowed
    *_calls(
        "fork vfork clone clone3 system popen posix_spawn posix_spawnp execl execlp execle execv execvp "
        "execve execvpe fexecve daemon ptrace kill killpg setsid setpgid prctl unshare setns",
        "process-creation",
        _PROC,
    ),
    *_calls("pthread_create thrd_create", "threads", _THREAD),
    BannedName(r"\bstd\s*::\s*(?:j?thread|async)\b", "threads", _THREAD),
    *_calls("dlopen dlmopen dlsym dlvsym dladdr dlinfo dl_iterate_phdr", "dynamic-loading", _DL),
    *_calls("syscall", "syscall", _SYSCALL),
    BannedName(r"\b(?:__NR_|SYS_)\w+", "syscall", _SYSCALL),
    *_calls(
        "__rdtsc __rdtscp _rdtsc __builtin_ia32_rdtsc __builtin_ia32_rdtscp __builtin_ia32_rdpmc __rdpmc "
        "_rdpmc __builtin_readcyclecounter __builtin_readsteadycounter clock_gettime gettimeofday clock "
        "timespec_get getrusage times omp_get_wtime omp_get_wtick omp_get_wtime_ omp_get_wtick_",
        "timer-read",
        _TIMER,
    ),
    BannedName(r"\bchrono\s*::", "timer-read", _TIMER),
    BannedName(
        r"\b(?:asm|__asm|__asm__)\b",
        "inline-assembly",
        "inline assembly is not allowed (`{name}`); write C/C++ and use intrinsics",
    ),
    BannedName(
        # Only inside the attribute list: a parameter named `section` after `__attribute__((global))`
        # (what nvcc's `__global__` becomes) is not an attribute.
        r"(?:\b__attribute(?:__)?\s*\(\s*\(|\[\[\s*(?:using\s+)?(?:gnu|__gnu__)\s*::?)(?:[^()\];{}]|\((?:[^()]|\([^()]*\))*\))*?"
        r"\b_*(?:constructor|destructor|ifunc|section|alias|weakref|init_priority|naked)_*\b",
        "load-time-code",
        "`{name}` is not allowed: code may run only when the judge calls kernel_run, from the sections "
        "the compiler chooses",
    ),
    *_calls("getenv secure_getenv putenv setenv unsetenv clearenv getauxval", "environment", _ENV),
    BannedName(r"\b(?:__)?environ\b", "environment", _ENV),
    *_calls("signal sigaction sigprocmask pthread_sigmask raise alarm setitimer", "signals", _SIGNAL),
    *_calls("mmap mmap64 mprotect mremap munmap madvise", "memory-mapping", _MEMMAP),
)

# Header hints: what to use instead of a refused header.
COMMON_HEADER_HINTS: dict[str, str] = {
    "iostream": "use printf from <cstdio> for debugging output (<iostream> runs code when the library loads)",
    "thread": "start threads with OpenMP (#include <omp.h>)",
    "pthread.h": "start threads with OpenMP (#include <omp.h>)",
    "chrono": "the judge does the timing; kernels may not read clocks",
    "fstream": "kernels may not use files",
    "unistd.h": "kernels may not make system calls",
    "dlfcn.h": "kernels may not load code at run time",
}

# libc and libm functions a kernel may call.
_MATH = (
    "sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh exp exp2 exp10 expm1 log log2 "
    "log10 log1p logb ilogb pow sqrt cbrt hypot fabs fmod remainder remquo floor ceil trunc round lround "
    "llround rint lrint llrint nearbyint frexp ldexp scalbn scalbln modf fmin fmax fdim fma copysign nan "
    "nextafter nexttoward erf erfc tgamma lgamma sincos"
)
MATH_IMPORTS = frozenset(f"{name}{suffix}" for name in _MATH.split() for suffix in ("", "f", "l"))
LIBC_IMPORTS = frozenset(
    """
    memcpy memmove memset memcmp memchr strlen strnlen strcmp strncmp strcpy strncpy strcat strchr strrchr
    strstr malloc calloc realloc free aligned_alloc posix_memalign memalign abs labs llabs div ldiv qsort
    bsearch rand srand strtol strtoul strtoll strtoull strtod strtof atoi atol atof
    printf puts putchar fputs fputc fprintf fwrite fflush snprintf sprintf vsnprintf vprintf vfprintf
    stdout stderr __printf_chk __fprintf_chk __snprintf_chk __sprintf_chk __vsnprintf_chk
    __memcpy_chk __memmove_chk __memset_chk __strcpy_chk __strncpy_chk __strcat_chk
    __assert_fail __stack_chk_fail __errno_location __tls_get_addr abort exit _exit quick_exit
    __cxa_finalize __gmon_start__ _ITM_deregisterTMCloneTable _ITM_registerTMCloneTable
    """.split()
)
CXX_RUNTIME_IMPORTS = frozenset(
    """
    __cxa_allocate_exception __cxa_free_exception __cxa_throw __cxa_rethrow __cxa_begin_catch
    __cxa_end_catch __cxa_guard_acquire __cxa_guard_release __cxa_guard_abort __cxa_atexit
    __cxa_pure_virtual __cxa_deleted_virtual __cxa_call_terminate __cxa_get_exception_ptr
    __gxx_personality_v0 _Unwind_Resume __dso_handle _ZSt9terminatev
    """.split()
)
CXX_RUNTIME_PATTERNS: tuple[str, ...] = (
    r"_Zn[wa]m\w*",  # operator new / new[] (all overloads)
    r"_Zd[la]Pv\w*",  # operator delete / delete[]
    r"_ZSt\d+__throw_\w+",  # std::__throw_length_error and friends
    r"_ZN?K?St7__cxx1112basic_string\w*",  # std::string
    r"_ZSt\d+_Rb_tree_\w+",  # std::map / std::set
    r"_ZN?K?St8__detail20_Prime_rehash_policy\w*",  # std::unordered_map (20 = len("_Prime_rehash_policy"))
    r"_ZSt11_Hash_bytesPKvmm",
    r"_ZT[ISV]\w+",  # typeinfo and vtables (exceptions, virtual classes)
    r"_ZNSt9exceptionD\w+|_ZNKSt9exception4whatEv|_ZNSt9bad_allocD\w+|_ZNKSt9bad_alloc4whatEv",
)
COMPILER_WEAK = frozenset({"__gmon_start__", "_ITM_deregisterTMCloneTable", "_ITM_registerTMCloneTable"})

# Defining these would replace the C++ runtime's own (global operator new/delete, std::).
CXX_FORBIDDEN_EXPORTS: tuple[str, ...] = (r"_Zn[wa]\w*", r"_Zd[la]\w*", r"_ZN?K?St\w*", r"_ZSt\w*")
