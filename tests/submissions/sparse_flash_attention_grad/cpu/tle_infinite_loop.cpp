// Fixture (expected TLE): kernel_run never returns. The counter is volatile so
// that the compiler keeps the loop (an empty infinite loop may be removed).
#include "sparse_flash_attention_grad.h"

#include <cstdint>

extern "C" int kernel_run(const kernel_args* args) {
    volatile uint64_t spins = 0;
    while (args->B >= 0) spins = spins + 1;
    return 0;
}
