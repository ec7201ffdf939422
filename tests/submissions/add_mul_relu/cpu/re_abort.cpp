// Fixture (expected RE): kernel_run aborts (SIGABRT).
#include "add_mul_relu.h"

#include <cstdlib>

extern "C" int kernel_run(const kernel_args* a) {
    if (a->n >= 0) std::abort();
    return 0;
}
