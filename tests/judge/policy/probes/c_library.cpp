// Probe: the C library headers a kernel may use from C++: printf for debugging, malloc, qsort, errno, asserts.
#include <cassert>
#include <cerrno>
#include <cfloat>
#include <cinttypes>
#include <climits>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <assert.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

namespace {

int by_value(const void* x, const void* y) {
    const float a = *static_cast<const float*>(x), b = *static_cast<const float*>(y);
    return (a > b) - (a < b);
}

void say(const char* format, ...) {
    char line[128];
    va_list ap;
    va_start(ap, format);
    std::vsnprintf(line, sizeof line, format, ap);
    va_end(ap);
    std::fputs(line, stderr);
}

}  // namespace

extern "C" int kernel_run(const int64_t* a) {
    assert(a != nullptr);
    const size_t n = size_t(a[0] & 255) + 1;
    float* buf = static_cast<float*>(std::malloc(n * sizeof(float)));
    float* zeros = static_cast<float*>(std::calloc(n, sizeof(float)));
    float* aligned = static_cast<float*>(std::aligned_alloc(64, 64 * ((n * sizeof(float) + 63) / 64)));
    void* pm = nullptr;
    if (posix_memalign(&pm, 64, 256) != 0) return 1;
    if (buf == nullptr || zeros == nullptr || aligned == nullptr) return 2;
    for (size_t i = 0; i < n; ++i) buf[i] = float((a[1] * int64_t(i)) % 97);
    std::qsort(buf, n, sizeof(float), by_value);
    buf = static_cast<float*>(std::realloc(buf, 2 * n * sizeof(float)));
    errno = 0;
    const long parsed = std::strtol("123", nullptr, 10) + std::atoi("4") + long(std::strtod("2.5", nullptr));
    std::printf("n=%zu first=%f parsed=%ld id=%" PRId64 " max=%d eps=%g\n", n, double(buf[0]), parsed, a[2], INT_MAX,
                double(FLT_EPSILON));
    std::fprintf(stderr, "bad=%d\n", errno);
    say("%s %d\n", "done", int(std::abs(int(a[3]))));
    char tiny[32];
    std::snprintf(tiny, sizeof tiny, "%" PRIu64, uint64_t(a[4]));
    std::puts(tiny);
    std::putchar('\n');
    std::fflush(stdout);
    const std::div_t q = std::div(int(a[5]), 7);
    const bool ok = q.rem < 7 && CHAR_BIT == 8 && DBL_MAX > 1.0 && SIZE_MAX > 0 && offsetof(std::div_t, quot) == 0;
    const int r = int(buf[0]) + int(zeros[0]) + q.quot + ok + int(parsed & 1) + int(INT64_MAX & 1) + (errno != 0);
    std::free(buf);
    std::free(zeros);
    std::free(aligned);
    free(pm);
    if (a[6] == 77) std::abort();
    return r;
}
