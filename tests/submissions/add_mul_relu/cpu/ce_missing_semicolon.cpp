// Fixture (expected CE): a statement lacks its semicolon.
#include "add_mul_relu.h"

extern "C" int kernel_run(const kernel_args* a) {
    float* y = static_cast<float*>(a->y)
    for (int64_t i = 0; i < a->n; ++i) y[i] = 0.0f;
    return 0;
}
