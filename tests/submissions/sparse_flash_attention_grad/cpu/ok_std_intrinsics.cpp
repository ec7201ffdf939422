// Fixture (expected AC): a correct kernel with AVX2/FMA intrinsics and std::aligned_alloc (docs/rules.md:
// standard headers are allowed). ok_serial's math on float copies of the inputs in 64-byte aligned buffers
// from std::aligned_alloc (freed before returning); dot products and accumulations are AVX2/FMA in
// functions built for that target (`__attribute__((target("avx2,fma")))`), chosen when the judge's
// -march=native has them (__AVX2__ and __FMA__), with a scalar path otherwise.

#include "sparse_flash_attention_grad.h"

#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

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

__attribute__((target("avx2,fma"))) float dot_avx2(const float* x, const float* y, int64_t n) {
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(y + i + 8), acc1);
    }
    for (; i + 8 <= n; i += 8) acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), acc0);
    const __m256 acc = _mm256_add_ps(acc0, acc1);
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
    s = _mm_hadd_ps(s, s);
    s = _mm_hadd_ps(s, s);
    float r = _mm_cvtss_f32(s);
    for (; i < n; ++i) r += x[i] * y[i];
    return r;
}

__attribute__((target("avx2,fma"))) void axpy_avx2(float* y, const float* x, int64_t n, float alpha) {
    const __m256 va = _mm256_set1_ps(alpha);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    for (; i < n; ++i) y[i] += alpha * x[i];
}

float dot(const float* x, const float* y, int64_t n) {
#if defined(__AVX2__) && defined(__FMA__)
    return dot_avx2(x, y, n);
#else
    float r = 0.0f;
    for (int64_t i = 0; i < n; ++i) r += x[i] * y[i];
    return r;
#endif
}

void axpy(float* y, const float* x, int64_t n, float alpha) {
#if defined(__AVX2__) && defined(__FMA__)
    axpy_avx2(y, x, n, alpha);
#else
    for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
#endif
}

// n floats, 64-byte aligned (aligned_alloc wants a multiple of the alignment); nullptr if it fails.
float* aligned_floats(int64_t n) {
    const size_t bytes = (size_t(n) * sizeof(float) + 63) / 64 * 64;
    return static_cast<float*>(std::aligned_alloc(64, bytes == 0 ? 64 : bytes));
}

float* to_floats(const void* p, int64_t n, int64_t dtype) {
    float* f = aligned_floats(n);
    if (f != nullptr)
        for (int64_t i = 0; i < n; ++i) f[i] = load(p, i, dtype);
    return f;
}

}  // namespace

extern "C" int kernel_run(const kernel_args* a) {
    const int64_t B = a->B, S1 = a->S1, S2 = a->S2, N1 = a->N1, N2 = a->N2, D = a->D, Dr = a->Dr;
    const int64_t G = N1 / N2, W = 2 * D + Dr, dt = a->dtype, nq = B * S1 * N1, nk = B * S2 * N2;
    const float scale = float(a->scale);
    float* const q = to_floats(a->q, nq * D, dt);
    float* const qr = to_floats(a->q_rope, nq * Dr, dt);
    float* const k = to_floats(a->k, nk * D, dt);
    float* const kr = to_floats(a->k_rope, nk * Dr, dt);
    float* const v = to_floats(a->v, nk * D, dt);
    float* const dout = to_floats(a->d_out, nq * D, dt);
    float* const out = to_floats(a->out, nq * D, dt);
    float* const acc = aligned_floats(nk * W);  // per key row: dk | dv | dk_rope
    float* const dq = aligned_floats(D + Dr);
    float* const all[] = {q, qr, k, kr, v, dout, out, acc, dq};
    bool ok = true;
    for (float* p : all) ok = ok && p != nullptr;
    if (ok) {
        std::memset(acc, 0, sizeof(float) * size_t(nk * W));
        for (int64_t b = 0; b < B; ++b) {
            for (int64_t s = 0; s < S1; ++s) {
                int64_t thr = S2;
                if (a->sparse_mode == 3) {
                    thr = S2 - S1 + s + 1;
                    if (thr < 0) thr = 0;
                    if (thr > S2) thr = S2;
                }
                for (int64_t h = 0; h < N1; ++h) {
                    const int64_t n2 = h / G, qi = (b * S1 + s) * N1 + h;
                    const int64_t st = ((b * N2 + n2) * S1 + s) * G + h % G;
                    const float m = a->softmax_max[st], l = a->softmax_sum[st];
                    const float delta = dot(dout + qi * D, out + qi * D, D);
                    std::memset(dq, 0, sizeof(float) * size_t(D + Dr));
                    const int32_t* ids = a->sparse_indices + ((b * S1 + s) * N2 + n2) * a->K;
                    for (int64_t i = 0; i < a->K && ids[i] >= 0; ++i) {
                        for (int64_t j = ids[i] * a->block_size; j < (ids[i] + 1) * a->block_size && j < thr; ++j) {
                            const int64_t ki = (b * S2 + j) * N2 + n2;
                            const float qk = dot(q + qi * D, k + ki * D, D) + dot(qr + qi * Dr, kr + ki * Dr, Dr);
                            const float p = std::exp(scale * qk - m) / l;
                            const float ds = p * (dot(dout + qi * D, v + ki * D, D) - delta);
                            float* kacc = acc + ki * W;
                            axpy(dq, k + ki * D, D, ds);
                            axpy(dq + D, kr + ki * Dr, Dr, ds);
                            axpy(kacc, q + qi * D, D, ds);
                            axpy(kacc + D, dout + qi * D, D, p);
                            axpy(kacc + 2 * D, qr + qi * Dr, Dr, ds);
                        }
                    }
                    for (int64_t e = 0; e < D; ++e) store(a->dq, qi * D + e, scale * dq[e], dt);
                    for (int64_t e = 0; e < Dr; ++e) store(a->dq_rope, qi * Dr + e, scale * dq[D + e], dt);
                }
            }
        }
        for (int64_t ki = 0; ki < nk; ++ki) {
            const float* kacc = acc + ki * W;
            for (int64_t e = 0; e < D; ++e) store(a->dk, ki * D + e, scale * kacc[e], dt);
            for (int64_t e = 0; e < D; ++e) store(a->dv, ki * D + e, kacc[D + e], dt);
            for (int64_t e = 0; e < Dr; ++e) store(a->dk_rope, ki * Dr + e, scale * kacc[2 * D + e], dt);
        }
    }
    for (float* p : all) std::free(p);
    return ok ? 0 : 2;
}
