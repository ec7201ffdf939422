// Fixture (expected RE): kernel_run writes through a pointer into unmapped
// memory (page 0), so the process dies of SIGSEGV.
#include "sparse_flash_attention_grad.h"

#include <cstdint>

extern "C" int kernel_run(const kernel_args* args) {
    volatile float* nowhere = reinterpret_cast<volatile float*>(uintptr_t(64));  // volatile: the store stays
    nowhere[0] = float(args->scale);
    return 0;
}
