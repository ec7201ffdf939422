// Fixture (expected AC): a correct kernel written with OpenMP tasks, reductions, a critical section
// and thread_local storage (docs/rules.md: standard headers are allowed). ok_serial's math: one task per query
// token (b, s) computes its dq and adds its dk, dv, dk_rope terms to the running thread's own
// thread_local accumulator (a std::vector, sized on first use); each thread then adds its
// accumulator to the shared one in the workspace inside `#pragma omp critical`. Delta is an
// `omp simd` reduction; a std::atomic counts the finished tasks.

#include "sparse_flash_attention_grad.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

float bits_to_float(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

uint32_t float_to_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

float load(const void* p, int64_t i, int64_t dtype) {
    if (dtype == KERNEL_F32) return static_cast<const float*>(p)[i];
    const uint32_t h = static_cast<const uint16_t*>(p)[i];
    if (dtype == KERNEL_BF16) return bits_to_float(h << 16);
    const uint32_t sign = (h & 0x8000u) << 16, e = (h >> 10) & 31u, m = h & 1023u;
    if (e == 0) return (sign ? -1.0f : 1.0f) * std::ldexp(float(m), -24);
    if (e == 31) return bits_to_float(sign | 0x7f800000u | (m << 13));
    return bits_to_float(sign | ((e + 112u) << 23) | (m << 13));
}

uint16_t to_half(float f) {
    const uint32_t u = float_to_bits(f), mag = u & 0x7fffffffu;
    const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
    if (mag > 0x7f800000u) return uint16_t(sign | 0x7e00u);
    if (mag >= 0x477ff000u) return uint16_t(sign | 0x7c00u);
    if (mag >= 0x38800000u) return uint16_t(sign | ((mag + 0xfffu + ((mag >> 13) & 1u) - (112u << 23)) >> 13));
    // float16 subnormal: the float addition rounds to a multiple of 2^-24, ties to even
    const float r = std::fabs(f) + 0.5f;  // 0.5 = 2^-1: its ulp is 2^-24
    return uint16_t(sign | (float_to_bits(r) - float_to_bits(0.5f)));
}

void store(void* p, int64_t i, float x, int64_t dtype) {
    if (dtype == KERNEL_F32) {
        static_cast<float*>(p)[i] = x;
    } else if (dtype == KERNEL_BF16) {
        const uint32_t u = float_to_bits(x);
        const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
        static_cast<uint16_t*>(p)[i] = nan ? uint16_t(0x7fc0u) : uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    } else {
        static_cast<uint16_t*>(p)[i] = to_half(x);
    }
}

thread_local std::vector<float> key_acc;  // this thread's dk | dv | dk_rope of every key row

int64_t key_floats(const kernel_args& a) { return a.B * a.S2 * a.N2 * (2 * a.D + a.Dr); }

// Every head of query token (b, s): its dq, and its terms of dk, dv, dk_rope into `acc`.
void query_token(const kernel_args& a, int64_t b, int64_t s, float* acc) {
    const int64_t S1 = a.S1, S2 = a.S2, N1 = a.N1, N2 = a.N2, D = a.D, Dr = a.Dr;
    const int64_t G = N1 / N2, W = 2 * D + Dr, dt = a.dtype;
    const float scale = float(a.scale);
    int64_t thr = S2;
    if (a.sparse_mode == 3) thr = std::min(std::max(S2 - S1 + s + 1, int64_t(0)), S2);
    std::vector<float> dq(size_t(D + Dr));
    for (int64_t h = 0; h < N1; ++h) {
        const int64_t n2 = h / G, qi = (b * S1 + s) * N1 + h;
        const int64_t st = ((b * N2 + n2) * S1 + s) * G + h % G;
        const float m = a.softmax_max[st], l = a.softmax_sum[st];
        float delta = 0.0f;
#pragma omp simd reduction(+ : delta)
        for (int64_t e = 0; e < D; ++e) delta += load(a.d_out, qi * D + e, dt) * load(a.out, qi * D + e, dt);
        std::fill(dq.begin(), dq.end(), 0.0f);
        const int32_t* ids = a.sparse_indices + ((b * S1 + s) * N2 + n2) * a.K;
        for (int64_t i = 0; i < a.K && ids[i] >= 0; ++i) {
            for (int64_t j = ids[i] * a.block_size; j < (ids[i] + 1) * a.block_size && j < thr; ++j) {
                const int64_t ki = (b * S2 + j) * N2 + n2;
                float qk = 0.0f, dp = 0.0f;
                for (int64_t e = 0; e < D; ++e) {
                    qk += load(a.q, qi * D + e, dt) * load(a.k, ki * D + e, dt);
                    dp += load(a.d_out, qi * D + e, dt) * load(a.v, ki * D + e, dt);
                }
                for (int64_t e = 0; e < Dr; ++e) qk += load(a.q_rope, qi * Dr + e, dt) * load(a.k_rope, ki * Dr + e, dt);
                const float p = std::exp(scale * qk - m) / l;
                const float ds = p * (dp - delta);
                float* kacc = acc + ki * W;
                for (int64_t e = 0; e < D; ++e) {
                    dq[e] += ds * load(a.k, ki * D + e, dt);
                    kacc[e] += ds * load(a.q, qi * D + e, dt);
                    kacc[D + e] += p * load(a.d_out, qi * D + e, dt);
                }
                for (int64_t e = 0; e < Dr; ++e) {
                    dq[D + e] += ds * load(a.k_rope, ki * Dr + e, dt);
                    kacc[2 * D + e] += ds * load(a.q_rope, qi * Dr + e, dt);
                }
            }
        }
        for (int64_t e = 0; e < D; ++e) store(a.dq, qi * D + e, scale * dq[e], dt);
        for (int64_t e = 0; e < Dr; ++e) store(a.dq_rope, qi * Dr + e, scale * dq[D + e], dt);
    }
}

}  // namespace

extern "C" int64_t kernel_workspace_bytes(const kernel_args* a) { return 4 * key_floats(*a) + 64; }

extern "C" int kernel_run(const kernel_args* a) {
    const int64_t n = key_floats(*a), D = a->D, Dr = a->Dr, W = 2 * D + Dr, dt = a->dtype;
    if (a->workspace_bytes < 4 * n) return 2;
    float* total = static_cast<float*>(a->workspace);
    const float scale = float(a->scale);
    std::atomic<int64_t> tokens_done{0};
#pragma omp parallel
    {
        key_acc.assign(size_t(n), 0.0f);
#pragma omp for
        for (int64_t i = 0; i < n; ++i) total[i] = 0.0f;
        // (the loop's barrier: every thread's accumulator is ready before a task runs)
#pragma omp single
        {
            for (int64_t b = 0; b < a->B; ++b) {
                for (int64_t s = 0; s < a->S1; ++s) {
#pragma omp task firstprivate(b, s)
                    {
                        query_token(*a, b, s, key_acc.data());
                        tokens_done.fetch_add(1, std::memory_order_relaxed);
                    }
                }
            }
        }  // every task has finished at the single's barrier
#pragma omp critical
        {
            for (int64_t i = 0; i < n; ++i) total[i] += key_acc[size_t(i)];
        }
#pragma omp barrier
#pragma omp for
        for (int64_t ki = 0; ki < a->B * a->S2 * a->N2; ++ki) {
            const float* kacc = total + ki * W;
            for (int64_t e = 0; e < D; ++e) store(a->dk, ki * D + e, scale * kacc[e], dt);
            for (int64_t e = 0; e < D; ++e) store(a->dv, ki * D + e, kacc[D + e], dt);
            for (int64_t e = 0; e < Dr; ++e) store(a->dk_rope, ki * Dr + e, scale * kacc[2 * D + e], dt);
        }
    }
    return tokens_done.load() == a->B * a->S1 ? 0 : 3;
}
