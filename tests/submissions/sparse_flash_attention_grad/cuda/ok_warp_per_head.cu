// Fixture (expected AC): a second, independent CUDA kernel for sparse_flash_attention_grad.
// One warp per (b, s, head) walks the visible keys one by one: scores by warp reductions,
// dq summed in shared memory, dk/dv added to a float32 workspace with atomics, then a
// conversion kernel. Simple and slow: meant for the `tests` cases.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "sparse_flash_attention_grad.h"

namespace {

constexpr int kWarps = 4;

template <int DT>
__device__ float ld(const void* p, int64_t i) {
    if (DT == KERNEL_F32) return static_cast<const float*>(p)[i];
    if (DT == KERNEL_F16) return __half2float(static_cast<const __half*>(p)[i]);
    return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
}

template <int DT>
__device__ void st(void* p, int64_t i, float x) {
    if (DT == KERNEL_F32) static_cast<float*>(p)[i] = x;
    else if (DT == KERNEL_F16) static_cast<__half*>(p)[i] = __float2half_rn(x);
    else static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(x);
}

__device__ float warp_sum(float x) {
    for (int m = 16; m > 0; m >>= 1) x += __shfl_xor_sync(0xffffffffu, x, m);
    return x;
}

__device__ int warp_min(int x) {
    for (int m = 16; m > 0; m >>= 1) {
        const int y = __shfl_xor_sync(0xffffffffu, x, m);
        x = y < x ? y : x;
    }
    return x;
}

template <int DT>
__global__ void rows_kernel(kernel_args a, float* ws_dk, float* ws_dv) {
    extern __shared__ float sdq_all[];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t row = int64_t(blockIdx.x) * kWarps + warp;  // (b*S1 + s)*N1 + h
    if (row >= a.B * a.S1 * a.N1) return;                      // whole warps leave together
    const int64_t Dq = a.D + a.Dr, G = a.N1 / a.N2;
    const int64_t h = row % a.N1, s = row / a.N1 % a.S1, b = row / (a.N1 * a.S1);
    const int64_t n2 = h / G, g = h % G;
    float* sdq = sdq_all + warp * Dq;
    for (int64_t c = lane; c < Dq; c += 32) sdq[c] = 0.f;

    int64_t thr = a.S2;
    if (a.sparse_mode == 3) thr = a.S2 - a.S1 + s + 1 < 0 ? 0 : (a.S2 - a.S1 + s + 1 > a.S2 ? a.S2 : a.S2 - a.S1 + s + 1);
    const int32_t* ids = a.sparse_indices + ((b * a.S1 + s) * a.N2 + n2) * a.K;
    int first_end = int(a.K);
    for (int64_t i = lane; i < a.K; i += 32)
        if (ids[i] < 0 && i < first_end) first_end = int(i);
    const int64_t count = warp_min(first_end);

    const int64_t stat = ((b * a.N2 + n2) * a.S1 + s) * G + g;
    const float m = a.softmax_max[stat], l = a.softmax_sum[stat];
    float delta = 0.f;
    for (int64_t c = lane; c < a.D; c += 32) delta += ld<DT>(a.d_out, row * a.D + c) * ld<DT>(a.out, row * a.D + c);
    delta = warp_sum(delta);

    for (int64_t pos = 0; pos < count * a.block_size; ++pos) {
        const int64_t key = int64_t(ids[pos / a.block_size]) * a.block_size + pos % a.block_size;
        if (key < 0 || key >= thr || l <= 0.f) continue;
        const int64_t krow = (b * a.S2 + key) * a.N2 + n2;
        float z = 0.f, dp = 0.f;
        for (int64_t c = lane; c < Dq; c += 32) {
            const float qc = c < a.D ? ld<DT>(a.q, row * a.D + c) : ld<DT>(a.q_rope, row * a.Dr + c - a.D);
            const float kc = c < a.D ? ld<DT>(a.k, krow * a.D + c) : ld<DT>(a.k_rope, krow * a.Dr + c - a.D);
            z += qc * kc;
            if (c < a.D) dp += ld<DT>(a.d_out, row * a.D + c) * ld<DT>(a.v, krow * a.D + c);
        }
        z = warp_sum(z);
        dp = warp_sum(dp);
        const float prob = expf(float(a.scale) * z - m) / l;
        const float ds = prob * (dp - delta);
        for (int64_t c = lane; c < Dq; c += 32) {
            const float qc = c < a.D ? ld<DT>(a.q, row * a.D + c) : ld<DT>(a.q_rope, row * a.Dr + c - a.D);
            const float kc = c < a.D ? ld<DT>(a.k, krow * a.D + c) : ld<DT>(a.k_rope, krow * a.Dr + c - a.D);
            sdq[c] += ds * kc;
            atomicAdd(&ws_dk[krow * Dq + c], ds * qc);
            if (c < a.D) atomicAdd(&ws_dv[krow * a.D + c], prob * ld<DT>(a.d_out, row * a.D + c));
        }
    }
    for (int64_t c = lane; c < Dq; c += 32) {
        const float x = float(a.scale) * sdq[c];
        if (c < a.D) st<DT>(a.dq, row * a.D + c, x);
        else st<DT>(a.dq_rope, row * a.Dr + c - a.D, x);
    }
}

template <int DT>
__global__ void keys_kernel(kernel_args a, const float* ws_dk, const float* ws_dv) {
    const int64_t Dq = a.D + a.Dr, rows = a.B * a.S2 * a.N2;
    for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < rows * (Dq + a.D);
         e += int64_t(gridDim.x) * blockDim.x) {
        const int64_t r = e / (Dq + a.D), c = e % (Dq + a.D);
        if (c < a.D) st<DT>(a.dk, r * a.D + c, float(a.scale) * ws_dk[r * Dq + c]);
        else if (c < Dq) st<DT>(a.dk_rope, r * a.Dr + c - a.D, float(a.scale) * ws_dk[r * Dq + c]);
        else st<DT>(a.dv, r * a.D + c - Dq, ws_dv[r * a.D + c - Dq]);
    }
}

template <int DT>
int run(const kernel_args* a) {
    cudaStream_t stream = static_cast<cudaStream_t>(a->stream);
    const int64_t Dq = a->D + a->Dr, key_rows = a->B * a->S2 * a->N2;
    float* ws_dk = static_cast<float*>(a->workspace);
    float* ws_dv = ws_dk + key_rows * Dq;
    if (cudaMemsetAsync(a->workspace, 0, size_t(key_rows * (Dq + a->D)) * sizeof(float), stream) != cudaSuccess)
        return 3;
    const size_t smem = size_t(kWarps) * Dq * sizeof(float);
    if (smem > 48 * 1024 &&
        cudaFuncSetAttribute(rows_kernel<DT>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)) != cudaSuccess)
        return 3;
    const int64_t rows = a->B * a->S1 * a->N1;
    rows_kernel<DT><<<unsigned((rows + kWarps - 1) / kWarps), 32 * kWarps, smem, stream>>>(*a, ws_dk, ws_dv);
    const int64_t total = key_rows * (Dq + a->D);
    keys_kernel<DT><<<unsigned(total / 256 + 1 < 4096 ? total / 256 + 1 : 4096), 256, 0, stream>>>(*a, ws_dk, ws_dv);
    return cudaGetLastError() == cudaSuccess ? 0 : 3;
}

}  // namespace

extern "C" int64_t kernel_workspace_bytes(const kernel_args* a) {
    return a->B * a->S2 * a->N2 * (2 * a->D + a->Dr) * int64_t(sizeof(float));
}

extern "C" int kernel_run(const kernel_args* a) {
    if (a->workspace_bytes < kernel_workspace_bytes(a)) return 2;
    switch (a->dtype) {
        case KERNEL_F32: return run<KERNEL_F32>(a);
        case KERNEL_F16: return run<KERNEL_F16>(a);
        case KERNEL_BF16: return run<KERNEL_BF16>(a);
        default: return 1;
    }
}
