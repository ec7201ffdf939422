// Baseline CUDA kernel for sparse_flash_attention_grad: the figure the contest measures against.
//
// Plain and correct rather than fast: CUDA cores only, float32 accumulation everywhere.
//
// 1. The float32 workspace (dk|dk_rope and dv sums) is cleared on the stream.
// 2. grad_kernel: one block per (b, s, n2, group of up to 16 query heads of that KV head).
//    All heads of a group see the same keys, so each tile of 64 visible keys is loaded once
//    for the whole group. Per tile:
//    a. scores z and dP = d_out . v for 16 heads x 64 keys, from shared-memory slices of
//       q|q_rope, d_out, k|k_rope and v (32 columns at a time);
//    b. P = exp(z - softmax_max) / softmax_sum, dS = P * (dP - Delta), kept in shared memory;
//    c. column by column: dq += dS . k (shared memory, one owner per column), and the group's
//       sums dS^T q and P^T d_out added to the workspace with atomicAdd (many query tokens
//       share a key, so dk/dv sums cannot have a single owner here).
//    dq accumulates in shared memory for up to `columns` columns; longer head dims take
//    several passes over the keys (never for D + Dr = 576).
// 3. finish_keys: workspace -> dk, dk_rope (times scale) and dv, rounded to T. Every key row
//    is written, so keys that no query sees get 0.
//
// float16/bfloat16 are read and written as their 16-bit patterns through cuda_fp16.h /
// cuda_bf16.h and rounded to nearest even once, at the end. All work is enqueued on
// args->stream; nothing is kept between calls. Returns 0, 1 for bad arguments, 2 for a
// workspace smaller than kernel_workspace_bytes, 3 for a CUDA error.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "sparse_flash_attention_grad.h"

namespace {

constexpr int kThreads = 256;  // threads per block
constexpr int kHeads = 16;     // query heads per block (a group of one KV head's G heads)
constexpr int kKeys = 64;      // visible keys per tile
constexpr int kChunk = 32;     // columns of q/k/d_out/v staged per step of the score products
constexpr int kLanesPerHead = kThreads / kHeads;  // 16 threads per head in the score products
// Row strides of the staged slices, padded so that neither the staging stores nor the reads of
// the score products hit one shared-memory bank twice (and float4 reads stay 16-byte aligned).
constexpr int kQStride = kChunk + 1;  // q and d_out slices: the two heads of a warp use other banks
constexpr int kKStride = kKeys + 8;   // k and v slices: a warp stores 4 columns x 8 keys
static_assert(kKeys == 4 * kLanesPerHead, "each thread owns 4 consecutive keys of the tile");
static_assert(kKeys == 64 && kChunk % 4 == 0 && kThreads % 32 == 0, "the staging pattern of the k/v slices");
static_assert((kHeads * kQStride) % 4 == 0 && kKStride % 4 == 0, "every part of shared memory is float4-aligned");

struct Params {
    int64_t B, S1, S2, N1, N2, D, Dr, K, bs, mode, G, Dq;
    float scale;
    const void *q, *q_rope, *k, *k_rope, *v, *d_out, *out;
    const int32_t* idx;
    const float *smax, *ssum;
    void *dq, *dq_rope, *dk, *dk_rope, *dv;
    float* ws_dk;  // [B, S2, N2, D + Dr] float32 sums of dS^T q (scale applied at the end)
    float* ws_dv;  // [B, S2, N2, D] float32 sums of P^T d_out
    int groups;    // head groups per KV head: ceil(G / kHeads)
    int columns;   // dq columns accumulated per pass (multiple of 4)
};

// 16-bit types travel as raw bits; `Dtype` converts one element to and from float.
template <int DT>
struct Dtype;
template <>
struct Dtype<KERNEL_F32> {
    static __device__ __forceinline__ float load(const void* p, int64_t i) { return static_cast<const float*>(p)[i]; }
    static __device__ __forceinline__ void store(void* p, int64_t i, float x) { static_cast<float*>(p)[i] = x; }
};
template <>
struct Dtype<KERNEL_F16> {
    static __device__ __forceinline__ float load(const void* p, int64_t i) {
        return __half2float(static_cast<const __half*>(p)[i]);
    }
    static __device__ __forceinline__ void store(void* p, int64_t i, float x) {
        static_cast<__half*>(p)[i] = __float2half_rn(x);
    }
};
template <>
struct Dtype<KERNEL_BF16> {
    static __device__ __forceinline__ float load(const void* p, int64_t i) {
        return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    }
    static __device__ __forceinline__ void store(void* p, int64_t i, float x) {
        static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(x);
    }
};

// Column c of the concatenated vector x|x_rope of row `row` (row = flat index over B,S,N).
template <int DT>
__device__ __forceinline__ float load_cat(const void* main, const void* rope, int64_t D, int64_t Dr,
                                          int64_t row, int64_t c) {
    return c < D ? Dtype<DT>::load(main, row * D + c) : Dtype<DT>::load(rope, row * Dr + (c - D));
}

// Shared memory layout of grad_kernel, in floats; every part starts at a multiple of 4 floats.
struct Smem {
    float *dq, *q, *o, *kt, *vt, *p, *ds, *m, *l, *delta, *red;
    int* key;
    __device__ Smem(float* base, int columns) {
        dq = base;                       // [kHeads][columns] dq sums of this pass
        q = dq + kHeads * columns;       // [kHeads][kQStride] q|q_rope slice
        o = q + kHeads * kQStride;       // [kHeads][kQStride] d_out slice
        kt = o + kHeads * kQStride;      // [kChunk][kKStride] k|k_rope slice, transposed
        vt = kt + kChunk * kKStride;     // [kChunk][kKStride] v slice, transposed
        p = vt + kChunk * kKStride;      // [kHeads][kKeys]   P
        ds = p + kHeads * kKeys;         // [kHeads][kKeys]   dS
        m = ds + kHeads * kKeys;         // [kHeads] softmax_max
        l = m + kHeads;                  // [kHeads] softmax_sum
        delta = l + kHeads;              // [kHeads] d_out . out
        red = delta + kHeads;            // [kThreads] partial sums
        key = reinterpret_cast<int*>(red + kThreads);  // [kKeys] key token of each tile slot, -1 = none
    }
    static size_t bytes(int columns) {
        return sizeof(float) * (size_t(kHeads) * columns + 2 * kHeads * kQStride + 2 * kChunk * kKStride +
                                2 * kHeads * kKeys + 3 * kHeads + kThreads) + sizeof(int) * kKeys;
    }
};

template <int DT>
__global__ void __launch_bounds__(kThreads, 2) grad_kernel(Params p) {
    extern __shared__ float4 smem_raw[];  // float4: 16-byte alignment for the vector reads below
    Smem sm(reinterpret_cast<float*>(smem_raw), p.columns);
    __shared__ int valid_count;
    const int tid = threadIdx.x;

    int64_t id = blockIdx.x;
    const int group = int(id % p.groups);
    id /= p.groups;
    const int64_t n2 = id % p.N2;
    id /= p.N2;
    const int64_t s = id % p.S1;
    const int64_t b = id / p.S1;
    const int64_t g0 = int64_t(group) * kHeads;                  // first head of the group within G
    const int nh = int(p.G - g0 < kHeads ? p.G - g0 : kHeads);  // heads in this group
    const int64_t qrow0 = (b * p.S1 + s) * p.N1 + n2 * p.G + g0;  // row of head g0 in q, d_out, dq
    const int64_t krow_base = b * p.S2;                          // (krow_base + token) * N2 + n2

    int64_t thr = p.S2;  // tokens [0, thr) may be seen (spec: "Which keys a query token sees")
    if (p.mode == 3) {
        thr = p.S2 - p.S1 + s + 1;
        thr = thr < 0 ? 0 : (thr > p.S2 ? p.S2 : thr);
    }
    const int32_t* ids = p.idx + ((b * p.S1 + s) * p.N2 + n2) * p.K;

    // The valid ids are a prefix ending at the first -1 (or after K entries).
    if (tid == 0) valid_count = int(p.K);
    __syncthreads();
    for (int64_t i = tid; i < p.K; i += kThreads)
        if (ids[i] < 0) atomicMin(&valid_count, int(i));
    // Per-head statistics and Delta = d_out . out (16 threads per head).
    if (tid < kHeads) {
        const int64_t stat = ((b * p.N2 + n2) * p.S1 + s) * p.G + g0 + tid;
        sm.m[tid] = tid < nh ? p.smax[stat] : 0.f;
        sm.l[tid] = tid < nh ? p.ssum[stat] : 0.f;
    }
    {
        const int g = tid / kLanesPerHead, lane = tid % kLanesPerHead;
        float acc = 0.f;
        if (g < nh)
            for (int64_t c = lane; c < p.D; c += kLanesPerHead)
                acc += Dtype<DT>::load(p.d_out, (qrow0 + g) * p.D + c) * Dtype<DT>::load(p.out, (qrow0 + g) * p.D + c);
        sm.red[tid] = acc;
    }
    __syncthreads();
    if (tid < kHeads) {
        float d = 0.f;
        for (int i = 0; i < kLanesPerHead; ++i) d += sm.red[tid * kLanesPerHead + i];
        sm.delta[tid] = d;
    }
    const int64_t positions = int64_t(valid_count) * p.bs;  // tile slots: every token of every valid block

    const int tg = tid / kLanesPerHead;        // score products: this thread's head ...
    const int tj = tid % kLanesPerHead;        // ... and its keys 4*tj .. 4*tj+3 of the tile
    for (int64_t c0 = 0; c0 < p.Dq; c0 += p.columns) {
        const int64_t c1 = c0 + p.columns < p.Dq ? c0 + p.columns : p.Dq;
        for (int i = tid; i < kHeads * p.columns; i += kThreads) sm.dq[i] = 0.f;

        for (int64_t t0 = 0; t0 < positions; t0 += kKeys) {
            __syncthreads();  // the previous tile is finished with key/p/ds
            if (tid < kKeys) {
                const int64_t pos = t0 + tid;
                int key = -1;
                if (pos < positions) {
                    const int64_t token = int64_t(ids[pos / p.bs]) * p.bs + pos % p.bs;
                    if (token >= 0 && token < thr) key = int(token);  // the block holding thr-1 is cut short, wherever listed
                }
                sm.key[tid] = key;
            }

            // a. z and dP for kHeads x kKeys, kChunk columns at a time.
            float zs[4] = {0.f, 0.f, 0.f, 0.f}, dps[4] = {0.f, 0.f, 0.f, 0.f};
            for (int64_t cc = 0; cc < p.Dq; cc += kChunk) {
                __syncthreads();  // keys are visible; the previous slice is consumed
                for (int e = tid; e < kHeads * kChunk; e += kThreads) {
                    const int g = e / kChunk, cl = e % kChunk;
                    const int64_t c = cc + cl;
                    float qv = 0.f, ov = 0.f;
                    if (g < nh && c < p.Dq) {
                        qv = load_cat<DT>(p.q, p.q_rope, p.D, p.Dr, qrow0 + g, c);
                        if (c < p.D) ov = Dtype<DT>::load(p.d_out, (qrow0 + g) * p.D + c);
                    }
                    sm.q[g * kQStride + cl] = qv;
                    sm.o[g * kQStride + cl] = ov;
                }
                for (int e = tid; e < kKeys * kChunk; e += kThreads) {
                    // A warp takes 4 columns of 8 keys: 8 rows read in short runs, banks all distinct.
                    const int lane = e % 32, w = e / 32;
                    const int cl = (w % (kChunk / 4)) * 4 + lane % 4;
                    const int j = (w / (kChunk / 4)) * 8 + lane / 4;
                    const int64_t c = cc + cl;
                    const int key = sm.key[j];
                    float kv = 0.f, vv = 0.f;
                    if (key >= 0 && c < p.Dq) {
                        const int64_t krow = (krow_base + key) * p.N2 + n2;
                        kv = load_cat<DT>(p.k, p.k_rope, p.D, p.Dr, krow, c);
                        if (c < p.D) vv = Dtype<DT>::load(p.v, krow * p.D + c);
                    }
                    sm.kt[cl * kKStride + j] = kv;
                    sm.vt[cl * kKStride + j] = vv;
                }
                __syncthreads();
#pragma unroll 8
                for (int cl = 0; cl < kChunk; ++cl) {
                    const float qv = sm.q[tg * kQStride + cl], ov = sm.o[tg * kQStride + cl];
                    const float4 k4 = *reinterpret_cast<const float4*>(&sm.kt[cl * kKStride + 4 * tj]);
                    const float4 v4 = *reinterpret_cast<const float4*>(&sm.vt[cl * kKStride + 4 * tj]);
                    zs[0] += qv * k4.x; zs[1] += qv * k4.y; zs[2] += qv * k4.z; zs[3] += qv * k4.w;
                    dps[0] += ov * v4.x; dps[1] += ov * v4.y; dps[2] += ov * v4.z; dps[3] += ov * v4.w;
                }
            }

            // b. P and dS; 0 for empty slots, masked keys and heads past the group's end.
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const int j = 4 * tj + i;
                float prob = 0.f, dsv = 0.f;
                if (tg < nh && sm.key[j] >= 0 && sm.l[tg] > 0.f) {
                    prob = expf(p.scale * zs[i] - sm.m[tg]) / sm.l[tg];
                    dsv = prob * (dps[i] - sm.delta[tg]);
                }
                sm.p[tg * kKeys + j] = prob;
                sm.ds[tg * kKeys + j] = dsv;
            }
            __syncthreads();

            // c. Columns of this pass: dq sums, and the group's dk/dv contributions.
            for (int64_t c = c0 + tid; c < c1; c += kThreads) {
                float qc[kHeads], oc[kHeads], dqc[kHeads];
#pragma unroll
                for (int g = 0; g < kHeads; ++g) {
                    qc[g] = g < nh ? load_cat<DT>(p.q, p.q_rope, p.D, p.Dr, qrow0 + g, c) : 0.f;
                    oc[g] = g < nh && c < p.D ? Dtype<DT>::load(p.d_out, (qrow0 + g) * p.D + c) : 0.f;
                    dqc[g] = 0.f;
                }
                for (int j4 = 0; j4 < kKeys; j4 += 4) {
                    int key[4];
                    float kc[4];
                    bool any = false;
#pragma unroll
                    for (int i = 0; i < 4; ++i) {
                        key[i] = sm.key[j4 + i];
                        kc[i] = key[i] >= 0 ? load_cat<DT>(p.k, p.k_rope, p.D, p.Dr, (krow_base + key[i]) * p.N2 + n2, c)
                                            : 0.f;
                        any |= key[i] >= 0;
                    }
                    if (!any) continue;
                    float dkc[4] = {0.f, 0.f, 0.f, 0.f}, dvc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
                    for (int g = 0; g < kHeads; ++g) {
                        const float4 d4 = *reinterpret_cast<const float4*>(&sm.ds[g * kKeys + j4]);
                        const float4 p4 = *reinterpret_cast<const float4*>(&sm.p[g * kKeys + j4]);
                        dqc[g] += d4.x * kc[0] + d4.y * kc[1] + d4.z * kc[2] + d4.w * kc[3];
                        dkc[0] += d4.x * qc[g]; dkc[1] += d4.y * qc[g]; dkc[2] += d4.z * qc[g]; dkc[3] += d4.w * qc[g];
                        dvc[0] += p4.x * oc[g]; dvc[1] += p4.y * oc[g]; dvc[2] += p4.z * oc[g]; dvc[3] += p4.w * oc[g];
                    }
#pragma unroll
                    for (int i = 0; i < 4; ++i) {
                        if (key[i] < 0) continue;
                        const int64_t krow = (krow_base + key[i]) * p.N2 + n2;
                        atomicAdd(&p.ws_dk[krow * p.Dq + c], dkc[i]);
                        if (c < p.D) atomicAdd(&p.ws_dv[krow * p.D + c], dvc[i]);
                    }
                }
#pragma unroll
                for (int g = 0; g < kHeads; ++g) sm.dq[g * p.columns + (c - c0)] += dqc[g];
            }
        }
        __syncthreads();  // every column's dq sum is complete

        const int64_t width = c1 - c0;
        for (int64_t e = tid; e < nh * width; e += kThreads) {
            const int g = int(e / width);
            const int64_t c = c0 + e % width;
            const float x = p.scale * sm.dq[g * p.columns + (c - c0)];
            if (c < p.D)
                Dtype<DT>::store(p.dq, (qrow0 + g) * p.D + c, x);
            else
                Dtype<DT>::store(p.dq_rope, (qrow0 + g) * p.Dr + (c - p.D), x);
        }
        __syncthreads();  // the next pass clears sm.dq
    }
}

// dk = scale * sums, dk_rope likewise, dv = sums: every element of the three outputs.
template <int DT>
__global__ void finish_keys(Params p) {
    const int64_t per_row = p.Dq + p.D;
    const int64_t total = p.B * p.S2 * p.N2 * per_row;
    for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
        const int64_t row = e / per_row, c = e % per_row;
        if (c < p.D)
            Dtype<DT>::store(p.dk, row * p.D + c, p.scale * p.ws_dk[row * p.Dq + c]);
        else if (c < p.Dq)
            Dtype<DT>::store(p.dk_rope, row * p.Dr + (c - p.D), p.scale * p.ws_dk[row * p.Dq + c]);
        else
            Dtype<DT>::store(p.dv, row * p.D + (c - p.Dq), p.ws_dv[row * p.D + (c - p.Dq)]);
    }
}

int64_t workspace_floats(const kernel_args* a) { return a->B * a->S2 * a->N2 * (2 * a->D + a->Dr); }

// The sizes alone: kernel_workspace_bytes is asked with every pointer NULL.
bool valid_sizes(const kernel_args* a) {
    if (a->B < 1 || a->S1 < 1 || a->S2 < 1 || a->N1 < 1 || a->N2 < 1 || a->D < 1 || a->Dr < 0 || a->K < 1)
        return false;
    if (a->block_size < 1 || a->N1 % a->N2 != 0 || (a->sparse_mode != 0 && a->sparse_mode != 3)) return false;
    if (a->dtype != KERNEL_F32 && a->dtype != KERNEL_F16 && a->dtype != KERNEL_BF16) return false;
    return a->K <= INT32_MAX && a->S2 <= INT32_MAX;  // tile slots hold key tokens as int
}

bool valid_args(const kernel_args* a) {
    if (!valid_sizes(a)) return false;
    if (!a->q || !a->k || !a->v || !a->d_out || !a->out || !a->sparse_indices || !a->softmax_max ||
        !a->softmax_sum || !a->dq || !a->dk || !a->dv)
        return false;
    return a->Dr == 0 || (a->q_rope && a->k_rope && a->dq_rope && a->dk_rope);
}

// Columns of dq summed per pass: as many as fit next to the fixed parts, at most D + Dr.
int pass_columns(int64_t dq_columns) {
    int device = 0, optin = 48 * 1024;
    if (cudaGetDevice(&device) == cudaSuccess)
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    const size_t budget = optin < 100 * 1024 ? size_t(optin) : size_t(100 * 1024);  // leaves room for 2 blocks/SM
    const int64_t fit = int64_t((budget - Smem::bytes(0)) / (sizeof(float) * kHeads)) / 4 * 4;
    const int64_t wanted = (dq_columns + 3) / 4 * 4;
    return int(wanted < fit ? wanted : (fit < 4 ? 4 : fit));
}

template <int DT>
int launch(const Params& params, cudaStream_t stream) {
    const size_t smem = Smem::bytes(params.columns);
    if (cudaFuncSetAttribute(grad_kernel<DT>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)) != cudaSuccess)
        return 3;
    const int64_t blocks = params.B * params.S1 * params.N2 * params.groups;
    if (blocks > INT32_MAX) return 1;
    grad_kernel<DT><<<unsigned(blocks), kThreads, smem, stream>>>(params);
    const int64_t total = params.B * params.S2 * params.N2 * (params.Dq + params.D);
    const int64_t finish_blocks = (total + 255) / 256 < 65536 ? (total + 255) / 256 : 65536;
    finish_keys<DT><<<unsigned(finish_blocks), 256, 0, stream>>>(params);
    return cudaGetLastError() == cudaSuccess ? 0 : 3;
}

}  // namespace

extern "C" int64_t kernel_workspace_bytes(const kernel_args* args) {
    if (args == nullptr || !valid_sizes(args)) return 0;
    return workspace_floats(args) * int64_t(sizeof(float));
}

extern "C" int kernel_run(const kernel_args* args) {
    if (args == nullptr || !valid_args(args)) return 1;
    const int64_t ws_bytes = workspace_floats(args) * int64_t(sizeof(float));
    if (args->workspace == nullptr || args->workspace_bytes < ws_bytes) return 2;
    cudaStream_t stream = static_cast<cudaStream_t>(args->stream);

    Params p;
    p.B = args->B; p.S1 = args->S1; p.S2 = args->S2; p.N1 = args->N1; p.N2 = args->N2;
    p.D = args->D; p.Dr = args->Dr; p.K = args->K; p.bs = args->block_size; p.mode = args->sparse_mode;
    p.G = args->N1 / args->N2;
    p.Dq = args->D + args->Dr;
    p.scale = float(args->scale);
    p.q = args->q; p.q_rope = args->q_rope; p.k = args->k; p.k_rope = args->k_rope; p.v = args->v;
    p.d_out = args->d_out; p.out = args->out;
    p.idx = args->sparse_indices;
    p.smax = args->softmax_max; p.ssum = args->softmax_sum;
    p.dq = args->dq; p.dq_rope = args->dq_rope; p.dk = args->dk; p.dk_rope = args->dk_rope; p.dv = args->dv;
    p.ws_dk = static_cast<float*>(args->workspace);
    p.ws_dv = p.ws_dk + p.B * p.S2 * p.N2 * p.Dq;
    p.groups = int((p.G + kHeads - 1) / kHeads);
    p.columns = pass_columns(p.Dq);

    // The workspace arrives holding garbage: the sums start from zero.
    if (cudaMemsetAsync(args->workspace, 0, size_t(ws_bytes), stream) != cudaSuccess) return 3;
    switch (args->dtype) {
        case KERNEL_F32: return launch<KERNEL_F32>(p, stream);
        case KERNEL_F16: return launch<KERNEL_F16>(p, stream);
        default: return launch<KERNEL_BF16>(p, stream);
    }
}
