// Fixture (expected RE): writes far past the end of y, so the GPU stops the kernel with an
// illegal address. The error surfaces when the judge synchronises after the call: a runtime
// error on that case, not an internal error of the judge.
#include <cuda_runtime.h>
#include <stdint.h>

#include "add_mul_relu.h"

namespace {

__global__ void scribble(float* y, int64_t n) {
    const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) y[i + (int64_t(1) << 40)] = 0.0f;  // BUG: 4 TiB past the buffer
}

}  // namespace

extern "C" int kernel_run(const kernel_args* a) {
    if (a->n <= 0) return a->n < 0;
    const unsigned blocks = unsigned((a->n + 255) / 256);
    scribble<<<blocks, 256, 0, static_cast<cudaStream_t>(a->stream)>>>(static_cast<float*>(a->y), a->n);
    return 0;  // the launch itself succeeds: the fault happens on the device
}
