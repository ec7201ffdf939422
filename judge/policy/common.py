"""Rules every C/C++ backend shares; judge/policy/<backend>.py adds its own to these.

Each list names what a kernel never needs (docs/rules.md, "What happens to a submission"):
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
    BannedName(
        r"\brandom_device\b",
        "random-device",
        "`{name}` reads the system's entropy (a device file or a system call) and is not allowed: seed a "
        "generator of <random> such as std::mt19937 with a constant",
    ),
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
    "mutex": "threads are OpenMP's: use #pragma omp critical, #pragma omp atomic or omp_lock_t (#include <omp.h>)",
    "shared_mutex": "threads are OpenMP's: use #pragma omp critical or omp_lock_t (#include <omp.h>)",
    "condition_variable": "threads are OpenMP's: use #pragma omp barrier, taskwait or omp_lock_t (#include <omp.h>)",
    "future": "start work with OpenMP (#pragma omp parallel, #pragma omp task)",
    "execution": "parallel algorithms are not offered; use OpenMP (#pragma omp parallel for)",
    "ctime": "the judge does the timing; kernels may not read clocks",
    "time.h": "the judge does the timing; kernels may not read clocks",
    "filesystem": "kernels may not use files",
    "sstream": "use snprintf from <cstdio> to format text",
    "iomanip": "use printf from <cstdio> for debugging output",
    "span": "<span> is C++20 and the judge builds with -std=c++17: pass a pointer and a length",
    "x86intrin.h": "use <immintrin.h> (the timer intrinsics are not allowed)",
}

# libc and libm functions a kernel may call.
_MATH = (
    "sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh exp exp2 exp10 expm1 log log2 "
    "log10 log1p logb ilogb pow sqrt cbrt hypot fabs fmod remainder remquo floor ceil trunc round lround "
    "llround rint lrint llrint nearbyint frexp ldexp scalbn scalbln modf fmin fmax fdim fma copysign nan "
    "nextafter nexttoward erf erfc tgamma lgamma sincos "
    # <complex>: std::exp, std::sqrt, std::abs & co. of a std::complex call the C99 complex functions
    "cabs carg cexp clog cpow csqrt csin ccos ctan csinh ccosh ctanh casin cacos catan casinh cacosh catanh cproj"
)
MATH_IMPORTS = frozenset(f"{name}{suffix}" for name in _MATH.split() for suffix in ("", "f", "l"))
LIBC_IMPORTS = frozenset(
    """
    memcpy memmove memset memcmp memchr strlen strnlen strcmp strncmp strcpy strncpy strcat strchr strrchr
    strstr malloc calloc realloc free aligned_alloc posix_memalign memalign abs labs llabs div ldiv qsort
    bsearch rand srand strtol strtoul strtoll strtoull strtod strtof atoi atol atof
    printf puts putchar putc fputs fputc fprintf fwrite fflush snprintf sprintf vsnprintf vprintf vfprintf
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
    __dynamic_cast __cxa_bad_cast __cxa_bad_typeid __cxa_throw_bad_array_new_length
    __cxa_init_primary_exception __cxa_thread_atexit _ZSt7nothrow __libc_single_threaded
    _ZSt17current_exceptionv _ZSt17rethrow_exceptionNSt15__exception_ptr13exception_ptrE
    _ZSt19uncaught_exceptionsv
    """.split()
)
# What the names above are, where it is not plain: __dynamic_cast and __cxa_bad_cast/typeid are
# dynamic_cast and typeid; __cxa_init_primary_exception is std::make_exception_ptr (GCC 12);
# __cxa_thread_atexit registers the destructor of a thread_local object (run when its thread ends,
# like __cxa_atexit's at exit; the runner's child ends with _exit, so neither runs after a call);
# _ZSt7nothrow is the std::nothrow object (std::stable_sort's buffer); __libc_single_threaded is
# glibc's flag libstdc++'s inline code reads (shared_ptr's use count, since GCC 11). The probes of
# tests/judge/policy/probes show which header needs which (imports.txt).
_STD_EXCEPTIONS = (
    "9exception|13bad_exception|9bad_alloc|20bad_array_new_length|8bad_cast|10bad_typeid|17bad_function_call|"
    "12bad_weak_ptr|12bad_any_cast|18bad_variant_access|19bad_optional_access|16nested_exception|"
    "11logic_error|12domain_error|16invalid_argument|12length_error|12out_of_range|"
    "13runtime_error|11range_error|14overflow_error|15underflow_error"
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
    # the standard exception classes of <exception>, <new>, <typeinfo>, <stdexcept>, <functional>, <memory>,
    # <any>, <variant>, <optional>: constructors, destructors, assignments and what()
    rf"_ZNK?St(?:{_STD_EXCEPTIONS})(?:C[12]|D[012]|aS|4what)\w*",
    r"_ZNK?St15__exception_ptr\w+",  # std::exception_ptr (current_exception, rethrow_exception)
    r"_ZNSt8__detail15_List_node_base\w+",  # std::list (15 = len("_List_node_base"))
    # libgcc's arithmetic: 128-bit integer division, complex multiply and divide of builtin types (what
    # std::complex's * and / compile to), float16 and bfloat16 conversions where the CPU has none (_Float16)
    r"__u?(?:div|mod)ti3|__u?divmodti4|__(?:mul|div)[sdxt]c3|__extend(?:hf|bf)[sdx]f2|__trunc[sdx]f(?:hf|bf)2",
)
COMPILER_WEAK = frozenset({"__gmon_start__", "_ITM_deregisterTMCloneTable", "_ITM_registerTMCloneTable"})

# Defining these would replace the C++ runtime's own (global operator new/delete, std::).
CXX_FORBIDDEN_EXPORTS: tuple[str, ...] = (r"_Zn[wa]\w*", r"_Zd[la]\w*", r"_ZN?K?St\w*", r"_ZSt\w*")

# Host machine code (x86-64, or AArch64's `svc`): system calls and timer reads, refused in every track's
# library (docs/security.md, layer 2). A GPU's or NPU's device code is data in the library, not host code.
HOST_FORBIDDEN_INSTRUCTIONS = frozenset({"syscall", "sysenter", "int", "rdtsc", "rdtscp", "rdpmc", "svc"})
# The same instructions as x86-64 bytes, looked for where a jump lands inside another instruction.
HOST_FORBIDDEN_BYTE_SEQUENCES: dict[str, bytes] = {
    "syscall": b"\x0f\x05",
    "sysenter": b"\x0f\x34",
    "int 0x80": b"\xcd\x80",
    "rdtsc": b"\x0f\x31",
    "rdtscp": b"\x0f\x01\xf9",
    "rdpmc": b"\x0f\x33",
}

# The C and C++ runtime's libraries (DT_NEEDED) every C/C++ track's library may need.
CXX_RUNTIME_NEEDED: tuple[str, ...] = (
    r"libc\.so\.\d+",
    r"libm\.so\.\d+",
    r"libstdc\+\+\.so\.\d+",
    r"libgcc_s\.so\.\d+",
    r"ld-linux[-\w.]*\.so\.\d+",
)
