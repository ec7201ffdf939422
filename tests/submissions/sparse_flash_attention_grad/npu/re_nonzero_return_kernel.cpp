// Launches nothing and reports failure: a runtime error naming the return value.
#include "sparse_flash_attention_grad.h"

extern "C" int kernel_run(const kernel_args *a) {
    return a->stream != nullptr ? 9 : 8;
}
