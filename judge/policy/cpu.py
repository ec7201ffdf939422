"""Policy rules of the CPU track: C/C++ with OpenMP on x86-64 (or AArch64), built by g++."""

from __future__ import annotations

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

_VENDOR = "calling a library's matrix or attention routine is not allowed (`{name}`); write the kernel yourself"

# Standard headers for computing; anything else in #include <...> is refused (docs/rules.md, "Standard
# headers a CPU kernel may include", says why the others are). Every one is exercised by a probe in
# tests/judge/policy/probes, whose built libraries must pass the library check: a header added here
# needs a probe there, and the imports its probe records (imports.txt) are what the policy must allow.
_HEADERS = """
    algorithm any array atomic bit bitset cassert cerrno cfloat cinttypes climits cmath complex cstdarg
    cstddef cstdint cstdio cstdlib cstring deque exception forward_list functional initializer_list iterator
    limits list map memory new numeric optional queue random set stack stdexcept string string_view tuple
    type_traits typeinfo unordered_map unordered_set utility valarray variant vector
    assert.h errno.h float.h inttypes.h limits.h math.h stdarg.h stdbool.h stddef.h stdint.h stdio.h stdlib.h
    string.h
    omp.h immintrin.h xmmintrin.h emmintrin.h pmmintrin.h tmmintrin.h smmintrin.h nmmintrin.h
    avxintrin.h avx2intrin.h avx512fintrin.h fmaintrin.h f16cintrin.h arm_neon.h arm_sve.h arm_fp16.h
    arm_bf16.h
"""

RULES = BackendRules(
    source_suffixes=frozenset({".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hh", ".inl"}),
    allowed_system_headers=frozenset(_HEADERS.split()),
    banned=COMMON_BANNED
    + (
        BannedName(
            r"\b(?:cblas_\w+|[sdhc]gemm_?|mkl_\w+|dnnl_\w+|openblas_\w+|flash_attn\w*|"
            r"scaled_dot_product\w*)\b|\b(?:at|torch|c10|Eigen)\s*::",
            "vendor-routine",
            _VENDOR,
        ),
    ),
    header_hints=COMMON_HEADER_HINTS,
    allowed_imports=MATH_IMPORTS | LIBC_IMPORTS | CXX_RUNTIME_IMPORTS,
    allowed_import_patterns=(
        r"GOMP_\w+",  # what `#pragma omp` compiles to (libgomp)
        r"omp_(?!get_wti)\w+",  # the OpenMP API (omp_get_thread_num, ...), not its clock (nor its Fortran names)
        r"__kmpc_\w+",  # the same through LLVM's libomp
        r"_ZGV\w+",  # vectorised math (libmvec), called by -O3 loops over expf & co.
        r"__\w+_finite",  # older glibc's -ffast-math math entry points
        *CXX_RUNTIME_PATTERNS,
    ),
    allowed_imports_in_words="math, memory, OpenMP and C++ runtime functions",
    forbidden_export_patterns=CXX_FORBIDDEN_EXPORTS,
    allowed_needed=(
        *CXX_RUNTIME_NEEDED,
        r"libmvec\.so\.\d+",
        r"libgomp\.so\.\d+",
        r"libomp\.so(\.\d+)?",
    ),
    forbidden_instructions=HOST_FORBIDDEN_INSTRUCTIONS,
    forbidden_byte_sequences=dict(HOST_FORBIDDEN_BYTE_SEQUENCES),
)
