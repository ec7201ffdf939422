// Fixture (expected AC): a second correct kernel, organised differently from
// the baseline, so the judge's tests do not only ever see one summation order.
//
// Pass 1, parallel over query rows (b, s, h): dq and dq_rope only.
// Pass 2, parallel over key blocks (b, n2, block): sparse_indices is inverted
// first (which query rows select each block, a CSR list in the workspace), then
// every block recomputes P and dS for those rows and accumulates dk, dk_rope
// and dv of its own bs keys in a thread-local buffer. No shared accumulators,
// no reduction; about 40 % more arithmetic than the baseline.
// Elements are converted from the 16-bit types where they are used.

#include "sparse_flash_attention_grad.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace {

float from_bits(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

uint32_t to_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

float half_to_float(uint16_t h) {
    const uint32_t e = (h >> 10) & 31u, m = h & 1023u;
    const float s = (h & 0x8000u) ? -1.0f : 1.0f;
    if (e == 0) return s * std::ldexp(float(m), -24);
    if (e == 31) return from_bits((uint32_t(h & 0x8000u) << 16) | 0x7f800000u | (m << 13));
    return s * std::ldexp(float(m | 1024u), int(e) - 25);
}

uint16_t float_to_half(float f) {
    // Round through the float16 grid by hand: scale to an integer number of ulps.
    const uint16_t sign = (to_bits(f) >> 16) & 0x8000u;
    const float a = std::fabs(f);
    if (std::isnan(a)) return 0x7e00u;
    if (a >= 65520.0f) return sign | 0x7c00u;
    if (a == 0.0f) return sign;
    int e;
    std::frexp(a, &e);               // a = m * 2^e, m in [0.5, 1)
    const int ulp_exp = std::max(e - 11, -24);  // 11 significant bits, subnormals below 2^-14
    const float units = std::nearbyint(std::ldexp(a, -ulp_exp));  // ties to even (default rounding mode)
    const uint32_t n = uint32_t(units);
    if (ulp_exp == -24) return sign | uint16_t(n);  // subnormal, or rounds up to the smallest normal
    // n in [1024, 2048]: exponent field ulp_exp + 25, mantissa n - 1024 (n = 2048 carries over)
    return sign | uint16_t(((uint32_t(ulp_exp + 25)) << 10) + (n - 1024u));
}

uint16_t float_to_bfloat(float f) {
    const uint32_t u = to_bits(f);
    if (std::isnan(f)) return uint16_t((u >> 16) | 0x40u);
    return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// Reads element i of a tensor of the case's dtype as float; writes one back.
struct Elems {
    int64_t dtype;
    float get(const void* p, int64_t i) const {
        if (dtype == KERNEL_F32) return static_cast<const float*>(p)[i];
        const uint16_t bits = static_cast<const uint16_t*>(p)[i];
        return dtype == KERNEL_F16 ? half_to_float(bits) : from_bits(uint32_t(bits) << 16);
    }
    void put(void* p, int64_t i, float x) const {
        if (dtype == KERNEL_F32) static_cast<float*>(p)[i] = x;
        else static_cast<uint16_t*>(p)[i] = dtype == KERNEL_F16 ? float_to_half(x) : float_to_bfloat(x);
    }
};

struct Problem {
    const kernel_args& a;
    Elems el;
    int64_t G, NB;  // heads per KV head; key blocks per batch

    int64_t thr(int64_t s) const {
        if (a.sparse_mode == 0) return a.S2;
        return std::min(std::max(a.S2 - a.S1 + s + 1, int64_t(0)), a.S2);
    }
    int64_t qrow(int64_t b, int64_t s, int64_t h) const { return (b * a.S1 + s) * a.N1 + h; }
    int64_t krow(int64_t b, int64_t j, int64_t n2) const { return (b * a.S2 + j) * a.N2 + n2; }
    int64_t stat(int64_t b, int64_t s, int64_t h) const { return ((b * a.N2 + h / G) * a.S1 + s) * G + h % G; }

    // P and dS (without scale) of query (b, s, h) and key j.
    void pair(int64_t b, int64_t s, int64_t h, int64_t j, float delta, float* p, float* ds) const {
        const int64_t qi = qrow(b, s, h), ki = krow(b, j, h / G);
        float qk = 0.0f, dp = 0.0f;
        for (int64_t i = 0; i < a.D; ++i) {
            qk += el.get(a.q, qi * a.D + i) * el.get(a.k, ki * a.D + i);
            dp += el.get(a.d_out, qi * a.D + i) * el.get(a.v, ki * a.D + i);
        }
        for (int64_t i = 0; i < a.Dr; ++i) qk += el.get(a.q_rope, qi * a.Dr + i) * el.get(a.k_rope, ki * a.Dr + i);
        const float z = float(a.scale) * qk;
        *p = std::exp(z - a.softmax_max[stat(b, s, h)]) / a.softmax_sum[stat(b, s, h)];
        *ds = *p * (dp - delta);
    }

    float delta(int64_t b, int64_t s, int64_t h) const {
        double d = 0.0;
        for (int64_t i = 0; i < a.D; ++i) d += double(el.get(a.d_out, qrow(b, s, h) * a.D + i)) * el.get(a.out, qrow(b, s, h) * a.D + i);
        return float(d);
    }
};

int64_t per_thread_floats(const kernel_args& a) {
    return std::max(a.D + a.Dr, a.block_size * (2 * a.D + a.Dr));
}

// int64 words of the inverted index of one (b, n2): off[NB + 1], cursors[NB + 1],
// then S1 * K int32 row numbers.
int64_t csr_words(const kernel_args& a, int64_t nb) { return 2 * (nb + 1) + (a.S1 * a.K + 1) / 2; }

void dq_pass(const Problem& pb, float* scratch, int64_t stride) {
    const kernel_args& a = pb.a;
#pragma omp parallel for collapse(2) schedule(dynamic, 4)
    for (int64_t bs_ = 0; bs_ < a.B * a.S1; ++bs_) {
        for (int64_t h = 0; h < a.N1; ++h) {
            const int64_t b = bs_ / a.S1, s = bs_ % a.S1;
            float* acc = scratch + omp_get_thread_num() * stride;  // [D + Dr]
            std::fill(acc, acc + a.D + a.Dr, 0.0f);
            const int64_t t = pb.thr(s);
            const float delta = pb.delta(b, s, h);
            const int32_t* ids = a.sparse_indices + ((b * a.S1 + s) * a.N2 + h / pb.G) * a.K;
            for (int64_t i = 0; i < a.K && ids[i] >= 0; ++i) {
                for (int64_t j = ids[i] * a.block_size; j < std::min((ids[i] + 1) * a.block_size, t); ++j) {
                    float p, ds;
                    pb.pair(b, s, h, j, delta, &p, &ds);
                    const int64_t ki = pb.krow(b, j, h / pb.G);
                    for (int64_t e = 0; e < a.D; ++e) acc[e] += ds * pb.el.get(a.k, ki * a.D + e);
                    for (int64_t e = 0; e < a.Dr; ++e) acc[a.D + e] += ds * pb.el.get(a.k_rope, ki * a.Dr + e);
                }
            }
            const int64_t qi = pb.qrow(b, s, h);
            for (int64_t e = 0; e < a.D; ++e) pb.el.put(a.dq, qi * a.D + e, float(a.scale) * acc[e]);
            for (int64_t e = 0; e < a.Dr; ++e) pb.el.put(a.dq_rope, qi * a.Dr + e, float(a.scale) * acc[a.D + e]);
        }
    }
}

// For every (b, n2): off[NB + 1], then cursors[NB + 1], then the selecting rows.
void invert_indices(const Problem& pb, int64_t* csr) {
    const kernel_args& a = pb.a;
    const int64_t per = csr_words(a, pb.NB);
#pragma omp parallel for
    for (int64_t bn = 0; bn < a.B * a.N2; ++bn) {
        int64_t* off = csr + bn * per;
        int64_t* cur = off + pb.NB + 1;
        int32_t* rows = reinterpret_cast<int32_t*>(cur + pb.NB + 1);
        std::fill(off, off + pb.NB + 1, int64_t(0));
        const int64_t b = bn / a.N2, n2 = bn % a.N2;
        for (int64_t s = 0; s < a.S1; ++s) {
            const int32_t* ids = a.sparse_indices + ((b * a.S1 + s) * a.N2 + n2) * a.K;
            for (int64_t i = 0; i < a.K && ids[i] >= 0; ++i) off[ids[i] + 1]++;
        }
        for (int64_t k = 0; k < pb.NB; ++k) off[k + 1] += off[k];
        std::copy(off, off + pb.NB + 1, cur);
        for (int64_t s = 0; s < a.S1; ++s) {
            const int32_t* ids = a.sparse_indices + ((b * a.S1 + s) * a.N2 + n2) * a.K;
            for (int64_t i = 0; i < a.K && ids[i] >= 0; ++i) rows[cur[ids[i]]++] = int32_t(s);
        }
    }
}

void dkv_pass(const Problem& pb, const int64_t* csr, float* scratch, int64_t stride) {
    const kernel_args& a = pb.a;
    const int64_t bsz = a.block_size, W = 2 * a.D + a.Dr;  // acc row: dk | dv | dk_rope
    const int64_t per = csr_words(a, pb.NB);
#pragma omp parallel for collapse(2) schedule(dynamic, 1)
    for (int64_t bn = 0; bn < a.B * a.N2; ++bn) {
        for (int64_t blk = 0; blk < pb.NB; ++blk) {
            const int64_t b = bn / a.N2, n2 = bn % a.N2;
            const int64_t* off = csr + bn * per;
            const int32_t* rows = reinterpret_cast<const int32_t*>(off + 2 * (pb.NB + 1));
            float* acc = scratch + omp_get_thread_num() * stride;  // [bs][W]
            std::fill(acc, acc + bsz * W, 0.0f);
            const int64_t first = blk * bsz;
            for (int64_t r = off[blk]; r < off[blk + 1]; ++r) {
                const int64_t s = rows[r];
                const int64_t last = std::min(first + bsz, pb.thr(s));
                for (int64_t h = n2 * pb.G; h < (n2 + 1) * pb.G; ++h) {
                    const float delta = pb.delta(b, s, h);
                    const int64_t qi = pb.qrow(b, s, h);
                    for (int64_t j = first; j < last; ++j) {
                        float p, ds;
                        pb.pair(b, s, h, j, delta, &p, &ds);
                        float* row = acc + (j - first) * W;
                        for (int64_t e = 0; e < a.D; ++e) {
                            row[e] += ds * pb.el.get(a.q, qi * a.D + e);
                            row[a.D + e] += p * pb.el.get(a.d_out, qi * a.D + e);
                        }
                        for (int64_t e = 0; e < a.Dr; ++e) row[2 * a.D + e] += ds * pb.el.get(a.q_rope, qi * a.Dr + e);
                    }
                }
            }
            for (int64_t j = first; j < std::min(first + bsz, a.S2); ++j) {  // every key, seen or not
                const float* row = acc + (j - first) * W;
                const int64_t ki = pb.krow(b, j, n2);
                for (int64_t e = 0; e < a.D; ++e) {
                    pb.el.put(a.dk, ki * a.D + e, float(a.scale) * row[e]);
                    pb.el.put(a.dv, ki * a.D + e, row[a.D + e]);
                }
                for (int64_t e = 0; e < a.Dr; ++e) pb.el.put(a.dk_rope, ki * a.Dr + e, float(a.scale) * row[2 * a.D + e]);
            }
        }
    }
}

}  // namespace

extern "C" int64_t kernel_workspace_bytes(const kernel_args* a) {
    const int64_t nb = (a->S2 + a->block_size - 1) / a->block_size;
    return 8 * a->B * a->N2 * csr_words(*a, nb) + 4 * omp_get_max_threads() * per_thread_floats(*a) + 64;
}

extern "C" int kernel_run(const kernel_args* a) {
    if (a->dtype < KERNEL_F32 || a->dtype > KERNEL_BF16) return 1;
    const int64_t nb = (a->S2 + a->block_size - 1) / a->block_size;
    const int64_t csr_bytes = 8 * a->B * a->N2 * csr_words(*a, nb);
    const int64_t stride = per_thread_floats(*a);
    if (a->workspace_bytes < csr_bytes + 4 * omp_get_max_threads() * stride) return 2;
    int64_t* csr = static_cast<int64_t*>(a->workspace);  // 8-byte aligned: the judge hands out aligned memory
    float* scratch = reinterpret_cast<float*>(static_cast<char*>(a->workspace) + csr_bytes);
    const Problem pb{*a, Elems{a->dtype}, a->N1 / a->N2, nb};
    dq_pass(pb, scratch, stride);
    invert_indices(pb, csr);
    dkv_pass(pb, csr, scratch, stride);
    return 0;
}
