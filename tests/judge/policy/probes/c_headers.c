/* Probe: the C headers, from a .c file (the judge builds those with gcc -std=c17). */
#include <assert.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

static int by_value(const void* x, const void* y) {
    const float a = *(const float*)x, b = *(const float*)y;
    return (a > b) - (a < b);
}

int kernel_run(const float* x) {
    assert(x != NULL);
    float* buf = malloc(64 * sizeof(float));
    if (buf == NULL) return 1;
    memcpy(buf, x, 64 * sizeof(float));
    qsort(buf, 64, sizeof(float), by_value);
    double total = 0.0;
#pragma omp parallel for reduction(+ : total)
    for (int i = 0; i < 64; ++i) total += expf(buf[i]) + sqrtf(fabsf(buf[i])) + tanhf(buf[i]) + fmaf(buf[i], 2.0f, 1.0f);
    const bool ok = FLT_EPSILON > 0 && INT_MAX > 0 && SIZE_MAX > 0 && errno >= 0;
    printf("total=%f %" PRId64 " %d\n", total, (int64_t)buf[0], (int)ok);
    const int r = (int)total + (int)strlen("abc") + (int)log(x[0]) + (int)pow(x[1], 2.0);
    free(buf);
    return r;
}
