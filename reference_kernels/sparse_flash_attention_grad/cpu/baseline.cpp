// Baseline CPU kernel for sparse_flash_attention_grad: the kernel the contest
// measures every submission against (spec: sparse_flash_attention_grad.md).
// Plain, correct C++17 + OpenMP; teams start from it.
//
// How it works
// ------------
// For each batch b and KV head n2 (one after the other):
//   1. K, K_rope and V of (b, n2) are converted to float32 rows in the
//      workspace (shared by all threads; a plain copy for float32).
//   2. Query tokens s are shared out among threads. A thread loads the G query
//      heads that use KV head n2 (q, q_rope, d_out as float32, and
//      delta = d_out . out), then walks the visible keys j of row s once and,
//      for each head, computes the score, P, dP and dS and updates
//        dq[h]  += scale * dS * k[j]       (the row's own accumulator)
//        dk[j]  += scale * dS * q[h]       (this thread's accumulator)
//        dv[j]  += P * d_out[h]            (this thread's accumulator)
//      Key-outer, head-inner keeps k[j], v[j] and their accumulator rows in L1
//      while the G query heads stream from L2.
//   3. Race-free dk / dk_rope / dv: every thread owns a float32 accumulator
//      for all S2 keys of (b, n2), zeroed before use, so no atomics or locks are
//      needed. At the end the accumulators are summed key by key (parallel over
//      keys), rounded once and written. Keys no query sees sum to exactly 0, so
//      every output element is written. Memory: threads * S2 * (2D + Dr) floats,
//      requested through kernel_workspace_bytes (a few MiB per thread for the
//      CPU sizes, 256 MiB at most in all); going through one (b, n2) at a time
//      keeps it independent of B and N2.
//
// Precision: everything is accumulated in float32 (delta in double, it is
// cheap) and each output is rounded to its dtype once, at the end, with
// round-to-nearest-even. float16 / bfloat16 travel as their 16-bit patterns.
//
// The kernel keeps no state between calls and never writes to its inputs.
// Return codes: 0 success, 1 invalid arguments, 2 workspace too small.

#include "sparse_flash_attention_grad.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace {

// ---------------------------------------------------------------------------
// 16-bit floating-point formats <-> float32

inline uint32_t bits_of(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

inline float float_of(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

// bfloat16 is the upper half of a float32.
inline float bf16_to_float(uint16_t h) { return float_of(uint32_t(h) << 16); }

inline uint16_t float_to_bf16(float f) {
    uint32_t u = bits_of(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x0040u);  // NaN stays a (quiet) NaN
    u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest, ties to even; may carry into the exponent (-> inf)
    return uint16_t(u >> 16);
}

// IEEE binary16: 1 sign bit, 5 exponent bits (bias 15), 10 mantissa bits.
inline float f16_to_float(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    const uint32_t mant = h & 0x3ffu;
    if (exp == 0) {  // zero or subnormal: mant * 2^-24, exact in float32
        const float mag = std::ldexp(float(mant), -24);
        return sign ? -mag : mag;
    }
    if (exp == 31) return float_of(sign | 0x7f800000u | (mant << 13));  // inf or NaN
    return float_of(sign | ((exp + 112u) << 23) | (mant << 13));         // 112 = 127 - 15
}

inline uint16_t float_to_f16(float f) {
    const uint32_t u = bits_of(f);
    const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
    const uint32_t mag = u & 0x7fffffffu;
    if (mag >= 0x7f800000u) return uint16_t(sign | 0x7c00u | (mag > 0x7f800000u ? 0x200u : 0u));  // inf, NaN
    if (mag >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // >= 65520 rounds to inf
    if (mag >= 0x38800000u) {                                 // normal in float16 (>= 2^-14)
        const uint32_t r = mag + 0xfffu + ((mag >> 13) & 1u) - (112u << 23);  // ties to even
        return uint16_t(sign | (r >> 13));
    }
    // Subnormal (or zero) in float16: round mag / 2^-24 to an integer, ties to even.
    const uint32_t exp = mag >> 23;
    if (exp < 102) return sign;  // below 2^-25: rounds to zero
    const uint32_t mant = (mag & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exp;  // 14 .. 24
    uint32_t q = mant >> shift;
    const uint32_t rest = mant & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (q & 1u))) ++q;  // may become 0x400, the smallest normal: still right
    return uint16_t(sign | q);
}

// One struct per dtype: the storage type and its conversions to and from float.
struct F32 {
    using T = float;
    static float load(T x) { return x; }
    static T store(float x) { return x; }
};
struct F16 {
    using T = uint16_t;
    static float load(T x) { return f16_to_float(x); }
    static T store(float x) { return float_to_f16(x); }
};
struct BF16 {
    using T = uint16_t;
    static float load(T x) { return bf16_to_float(x); }
    static T store(float x) { return float_to_bf16(x); }
};

// ---------------------------------------------------------------------------
// Small vector helpers. `omp simd reduction` lets the compiler vectorise the
// float sums without -ffast-math (it may reorder the additions, which the
// spec's float32 pass rule allows).

inline float dot(const float* __restrict a, const float* __restrict b, int64_t n) {
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
    return s;
}

// y += alpha * x
inline void axpy(float* __restrict y, float alpha, const float* __restrict x, int64_t n) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

template <class E>
inline void load_row(float* __restrict dst, const typename E::T* __restrict src, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = E::load(src[i]);
}

template <class E>
inline void store_row(typename E::T* __restrict dst, const float* __restrict src, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = E::store(src[i]);
}

// ---------------------------------------------------------------------------
// Sizes and workspace layout

struct Dims {
    int64_t B, S1, S2, N1, N2, G, D, Dr, K, bs, mode;
};

bool read_dims(const kernel_args& a, Dims* d) {
    if (a.B < 0 || a.S1 < 0 || a.S2 < 0 || a.N1 < 1 || a.N2 < 1 || a.N1 % a.N2 != 0) return false;
    if (a.D < 1 || a.Dr < 0 || a.K < 0 || a.block_size < 1) return false;
    if (a.sparse_mode != 0 && a.sparse_mode != 3) return false;
    *d = Dims{a.B, a.S1, a.S2, a.N1, a.N2, a.N1 / a.N2, a.D, a.Dr, a.K, a.block_size, a.sparse_mode};
    return true;
}

constexpr int64_t kAlignFloats = 16;  // 64-byte alignment of every workspace region
constexpr int64_t kAlignBytes = kAlignFloats * sizeof(float);

constexpr int64_t kWorkspaceCapBytes = int64_t(256) << 20;  // see kernel_workspace_bytes

inline int64_t padded(int64_t floats) { return (floats + kAlignFloats - 1) / kAlignFloats * kAlignFloats; }

// All sizes in floats. Shared: K, K_rope, V of one (b, n2) as float32.
// Per thread: dk / dk_rope / dv accumulators for S2 keys, and the G heads of
// one query row (q, q_rope, d_out, dq, dq_rope, delta, max, sum).
struct Layout {
    int64_t shared;
    int64_t per_thread;
};

Layout layout_of(const Dims& d) {
    const int64_t kv = padded(d.S2 * d.D) * 2 + padded(d.S2 * d.Dr);
    const int64_t acc = padded(d.S2 * d.D) * 2 + padded(d.S2 * d.Dr);
    const int64_t row = padded(d.G * d.D) * 3 + padded(d.G * d.Dr) * 2 + padded(d.G) * 3;
    return Layout{kv, acc + row};
}

// Where one thread's pieces live inside its slice of the workspace.
struct ThreadSpace {
    float *dk, *dk_rope, *dv;                 // [S2][D], [S2][Dr], [S2][D]
    float *q, *q_rope, *d_out, *dq, *dq_rope;  // [G][D] or [G][Dr]
    float *delta, *row_max, *row_sum;          // [G]
};

ThreadSpace thread_space(float* base, const Dims& d) {
    ThreadSpace t;
    float* p = base;
    auto take = [&p](int64_t floats) {
        float* r = p;
        p += padded(floats);
        return r;
    };
    t.dk = take(d.S2 * d.D);
    t.dv = take(d.S2 * d.D);
    t.dk_rope = take(d.S2 * d.Dr);
    t.q = take(d.G * d.D);
    t.d_out = take(d.G * d.D);
    t.dq = take(d.G * d.D);
    t.q_rope = take(d.G * d.Dr);
    t.dq_rope = take(d.G * d.Dr);
    t.delta = take(d.G);
    t.row_max = take(d.G);
    t.row_sum = take(d.G);
    return t;
}

// ---------------------------------------------------------------------------
// The kernel

// Last visible key position + 1 for query token s (spec: "Which keys a query token sees").
inline int64_t threshold(const Dims& d, int64_t s) {
    if (d.mode == 0) return d.S2;
    return std::min(std::max(d.S2 - d.S1 + s + 1, int64_t(0)), d.S2);
}

template <class E>
struct Tensors {
    using T = typename E::T;
    const T *q, *q_rope, *k, *k_rope, *v, *d_out, *out;
    const int32_t* indices;
    const float *softmax_max, *softmax_sum;
    T *dq, *dq_rope, *dk, *dk_rope, *dv;
};

// K, K_rope and V of key j of (b, n2), already float32, contiguous rows.
struct KeyRows {
    const float *k, *k_rope, *v;
};

// Query token s of batch b, the G heads of KV head n2: dq and dq_rope
// written out, dk / dk_rope / dv added to this thread's accumulators.
template <class E>
void backward_row(const Dims& d, const Tensors<E>& x, float scale, const KeyRows& kv, int64_t b, int64_t n2,
                  int64_t s, const ThreadSpace& t) {
    const int64_t D = d.D, Dr = d.Dr, G = d.G;
    for (int64_t g = 0; g < G; ++g) {
        const int64_t h = n2 * G + g;
        const int64_t at = ((b * d.S1 + s) * d.N1 + h) * D;
        load_row<E>(t.q + g * D, x.q + at, D);
        load_row<E>(t.d_out + g * D, x.d_out + at, D);
        double delta = 0.0;
        for (int64_t i = 0; i < D; ++i) delta += double(t.d_out[g * D + i]) * double(E::load(x.out[at + i]));
        t.delta[g] = float(delta);
        std::fill(t.dq + g * D, t.dq + (g + 1) * D, 0.0f);
        if (Dr > 0) {
            load_row<E>(t.q_rope + g * Dr, x.q_rope + ((b * d.S1 + s) * d.N1 + h) * Dr, Dr);
            std::fill(t.dq_rope + g * Dr, t.dq_rope + (g + 1) * Dr, 0.0f);
        }
        const int64_t stat = ((b * d.N2 + n2) * d.S1 + s) * G + g;
        t.row_max[g] = x.softmax_max[stat];
        t.row_sum[g] = x.softmax_sum[stat];
    }

    const int64_t thr = threshold(d, s);
    const int32_t* ids = x.indices + ((b * d.S1 + s) * d.N2 + n2) * d.K;
    for (int64_t i = 0; i < d.K && ids[i] >= 0; ++i) {  // the list ends at the first -1
        const int64_t first = int64_t(ids[i]) * d.bs;
        const int64_t last = std::min(first + d.bs, thr);  // the block holding thr-1 may be cut short
        for (int64_t j = first; j < last; ++j) {
            const float* kj = kv.k + j * D;
            const float* krj = kv.k_rope + j * Dr;
            const float* vj = kv.v + j * D;
            float* dkj = t.dk + j * D;
            float* dkrj = t.dk_rope + j * Dr;
            float* dvj = t.dv + j * D;
            for (int64_t g = 0; g < G; ++g) {
                const float* qg = t.q + g * D;
                const float* qrg = t.q_rope + g * Dr;
                const float* dog = t.d_out + g * D;
                const float z = scale * (dot(qg, kj, D) + dot(qrg, krj, Dr));
                const float p = std::exp(z - t.row_max[g]) / t.row_sum[g];
                const float dp = dot(dog, vj, D);
                const float ds = scale * p * (dp - t.delta[g]);  // scale * dS
                axpy(t.dq + g * D, ds, kj, D);
                axpy(t.dq_rope + g * Dr, ds, krj, Dr);
                axpy(dkj, ds, qg, D);
                axpy(dkrj, ds, qrg, Dr);
                axpy(dvj, p, dog, D);
            }
        }
    }

    for (int64_t g = 0; g < G; ++g) {
        const int64_t h = n2 * G + g;
        store_row<E>(x.dq + ((b * d.S1 + s) * d.N1 + h) * D, t.dq + g * D, D);
        if (Dr > 0) store_row<E>(x.dq_rope + ((b * d.S1 + s) * d.N1 + h) * Dr, t.dq_rope + g * Dr, Dr);
    }
}

// Sum the threads' accumulators for key j into thread 0's, round once, write.
// Thread th's slice of the workspace starts at slices + th * slice_floats.
template <class E>
void write_key(const Dims& d, const Tensors<E>& x, float* slices, int64_t slice_floats, int threads, int64_t b,
               int64_t n2, int64_t j) {
    const int64_t D = d.D, Dr = d.Dr;
    const ThreadSpace sum = thread_space(slices, d);
    for (int th = 1; th < threads; ++th) {
        const ThreadSpace other = thread_space(slices + th * slice_floats, d);
        axpy(sum.dk + j * D, 1.0f, other.dk + j * D, D);
        axpy(sum.dv + j * D, 1.0f, other.dv + j * D, D);
        axpy(sum.dk_rope + j * Dr, 1.0f, other.dk_rope + j * Dr, Dr);
    }
    const int64_t row = (b * d.S2 + j) * d.N2 + n2;
    store_row<E>(x.dk + row * D, sum.dk + j * D, D);
    store_row<E>(x.dv + row * D, sum.dv + j * D, D);
    if (Dr > 0) store_row<E>(x.dk_rope + row * Dr, sum.dk_rope + j * Dr, Dr);
}

template <class E>
int run(const kernel_args& a, const Dims& d) {
    using T = typename E::T;
    const Layout lay = layout_of(d);

    // Use as many threads as the workspace was sized for (normally all of them).
    auto addr = reinterpret_cast<uintptr_t>(a.workspace);
    const int64_t skip = int64_t((kAlignBytes - addr % kAlignBytes) % kAlignBytes);
    const int64_t avail = (a.workspace_bytes - skip) / int64_t(sizeof(float)) - lay.shared;
    if (a.workspace == nullptr || avail < lay.per_thread) return 2;
    const int threads = int(std::min<int64_t>(omp_get_max_threads(), avail / lay.per_thread));
    float* ws = reinterpret_cast<float*>(static_cast<char*>(a.workspace) + skip);

    Tensors<E> x;
    x.q = static_cast<const T*>(a.q);
    x.q_rope = static_cast<const T*>(a.q_rope);
    x.k = static_cast<const T*>(a.k);
    x.k_rope = static_cast<const T*>(a.k_rope);
    x.v = static_cast<const T*>(a.v);
    x.d_out = static_cast<const T*>(a.d_out);
    x.out = static_cast<const T*>(a.out);
    x.indices = a.sparse_indices;
    x.softmax_max = a.softmax_max;
    x.softmax_sum = a.softmax_sum;
    x.dq = static_cast<T*>(a.dq);
    x.dq_rope = static_cast<T*>(a.dq_rope);
    x.dk = static_cast<T*>(a.dk);
    x.dk_rope = static_cast<T*>(a.dk_rope);
    x.dv = static_cast<T*>(a.dv);

    KeyRows kv;
    float* k32 = ws;
    float* v32 = k32 + padded(d.S2 * d.D);
    float* kr32 = v32 + padded(d.S2 * d.D);
    kv.k = k32;
    kv.v = v32;
    kv.k_rope = kr32;

    float* slices = ws + lay.shared;  // then one slice of lay.per_thread floats per thread
    const float scale = float(a.scale);

#pragma omp parallel num_threads(threads)
    {
        const ThreadSpace mine = thread_space(slices + omp_get_thread_num() * lay.per_thread, d);
        for (int64_t b = 0; b < d.B; ++b) {
            for (int64_t n2 = 0; n2 < d.N2; ++n2) {
                // 1. this (b, n2)'s keys to float32 (the loop's implicit barrier
                //    also ends the previous (b, n2)'s reduction)
#pragma omp for schedule(static)
                for (int64_t j = 0; j < d.S2; ++j) {
                    const int64_t row = (b * d.S2 + j) * d.N2 + n2;
                    load_row<E>(k32 + j * d.D, x.k + row * d.D, d.D);
                    load_row<E>(v32 + j * d.D, x.v + row * d.D, d.D);
                    if (d.Dr > 0) load_row<E>(kr32 + j * d.Dr, x.k_rope + row * d.Dr, d.Dr);
                }
                std::fill(mine.dk, mine.dk + d.S2 * d.D, 0.0f);
                std::fill(mine.dv, mine.dv + d.S2 * d.D, 0.0f);
                std::fill(mine.dk_rope, mine.dk_rope + d.S2 * d.Dr, 0.0f);

                // 2. query rows; causal rows differ in length, hence dynamic
#pragma omp for schedule(dynamic, 1)
                for (int64_t s = 0; s < d.S1; ++s) backward_row<E>(d, x, scale, kv, b, n2, s, mine);

                // 3. reduce the accumulators and write dk, dk_rope, dv
#pragma omp for schedule(static)
                for (int64_t j = 0; j < d.S2; ++j) write_key<E>(d, x, slices, lay.per_thread, threads, b, n2, j);
            }
        }
    }
    return 0;
}

}  // namespace

extern "C" int64_t kernel_workspace_bytes(const kernel_args* args) {
    Dims d;
    if (args == nullptr || !read_dims(*args, &d)) return 0;
    const Layout lay = layout_of(d);
    // Every thread costs a full set of accumulators; past kWorkspaceCapBytes
    // more threads are not worth the memory (kernel_run uses as many as fit).
    const int64_t fit = (kWorkspaceCapBytes / int64_t(sizeof(float)) - lay.shared) / lay.per_thread;
    const int64_t threads = std::max<int64_t>(1, std::min<int64_t>(omp_get_max_threads(), fit));
    return kAlignBytes + int64_t(sizeof(float)) * (lay.shared + threads * lay.per_thread);
}

extern "C" int kernel_run(const kernel_args* args) {
    Dims d;
    if (args == nullptr || !read_dims(*args, &d)) return 1;
    const bool rope_ok = d.Dr == 0 || (args->q_rope && args->k_rope && args->dq_rope && args->dk_rope);
    if (!rope_ok) return 1;  // the rope tensors are NULL exactly when Dr = 0
    switch (args->dtype) {
        case KERNEL_F32: return run<F32>(*args, d);
        case KERNEL_F16: return run<F16>(*args, d);
        case KERNEL_BF16: return run<BF16>(*args, d);
        default: return 1;
    }
}
