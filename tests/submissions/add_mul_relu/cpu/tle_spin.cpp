// Fixture (expected TLE): kernel_run spins forever. The counter is volatile so
// that the compiler keeps the loop.
#include "add_mul_relu.h"

#include <cstdint>

extern "C" int kernel_run(const kernel_args* a) {
    volatile uint64_t spins = 0;
    while (a->n >= 0) spins = spins + 1;
    return 0;
}
