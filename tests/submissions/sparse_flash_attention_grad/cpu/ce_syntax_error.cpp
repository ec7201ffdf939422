// Fixture (expected CE): a parenthesis is never closed.
#include "sparse_flash_attention_grad.h"

extern "C" int kernel_run(const kernel_args* args) {
    const int64_t rows = (args->B * args->S1;
    return rows < 0;
}
