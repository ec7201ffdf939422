// Baseline CUDA kernel for add_mul_relu: y = max((x + 1) * 2, 0), element-wise.
//
// Computed in float32 and rounded once to the dtype (round to nearest even), which is the
// exactly rounded result for every dtype (see the CPU baseline for why). A grid-stride loop,
// one element per thread per step; all work on args->stream. Returns 0, 1 for bad arguments,
// 3 for a CUDA error.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "add_mul_relu.h"

namespace {

__device__ __forceinline__ float add_mul_relu(float x) {
    const float y = (x + 1.0f) * 2.0f;
    return y > 0.0f ? y : (y == y ? 0.0f : y);  // NaN passes through
}

template <class T>
struct Convert;
template <>
struct Convert<float> {
    static __device__ __forceinline__ float in(float x) { return x; }
    static __device__ __forceinline__ float out(float x) { return x; }
};
template <>
struct Convert<__half> {
    static __device__ __forceinline__ float in(__half x) { return __half2float(x); }
    static __device__ __forceinline__ __half out(float x) { return __float2half_rn(x); }
};
template <>
struct Convert<__nv_bfloat16> {
    static __device__ __forceinline__ float in(__nv_bfloat16 x) { return __bfloat162float(x); }
    static __device__ __forceinline__ __nv_bfloat16 out(float x) { return __float2bfloat16_rn(x); }
};

template <class T>
__global__ void add_mul_relu_kernel(const T* x, T* y, int64_t n) {
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
        y[i] = Convert<T>::out(add_mul_relu(Convert<T>::in(x[i])));
}

template <class T>
int launch(const kernel_args* args) {
    const int64_t n = args->n;
    if (n == 0) return 0;
    const int threads = 256;
    const int64_t wanted = (n + threads - 1) / threads;
    const unsigned blocks = unsigned(wanted < 65536 ? wanted : 65536);
    add_mul_relu_kernel<T><<<blocks, threads, 0, static_cast<cudaStream_t>(args->stream)>>>(
        static_cast<const T*>(args->x), static_cast<T*>(args->y), n);
    return cudaGetLastError() == cudaSuccess ? 0 : 3;
}

}  // namespace

extern "C" int64_t kernel_workspace_bytes(const kernel_args*) { return 0; }

extern "C" int kernel_run(const kernel_args* args) {
    if (args == nullptr || args->n < 0) return 1;
    if (args->n > 0 && (args->x == nullptr || args->y == nullptr)) return 1;
    switch (args->dtype) {
        case KERNEL_F32: return launch<float>(args);
        case KERNEL_F16: return launch<__half>(args);
        case KERNEL_BF16: return launch<__nv_bfloat16>(args);
        default: return 1;
    }
}
