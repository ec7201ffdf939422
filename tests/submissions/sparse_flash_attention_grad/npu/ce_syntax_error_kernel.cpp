// A missing semicolon: the report shows bisheng's error against this file's name.
#include "sparse_flash_attention_grad.h"

extern "C" int kernel_run(const kernel_args *a) {
    int blocks = static_cast<int>(a->B)
    return blocks > 0 ? 0 : 1;
}
