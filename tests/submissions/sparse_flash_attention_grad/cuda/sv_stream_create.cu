// Fixture (expected SV, source policy): work on a stream of its own, off the judge's clock.
#include <cuda_runtime.h>

#include "sparse_flash_attention_grad.h"

extern "C" int kernel_run(const kernel_args* args) {
    cudaStream_t mine;
    cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking);
    cudaMemsetAsync(args->dq, 0, 4, mine);
    return 0;
}
