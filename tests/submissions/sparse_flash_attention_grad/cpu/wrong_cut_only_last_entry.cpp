// Fixture (expected WA on contract_indices cases only): ok_serial.cpp with one bug, it
// relies on ascending ids that always end with block nblk(s)-1: only the last listed
// block is cut at thr(s), so a cut-short block listed earlier shows keys past thr(s).
// Right on every row the plain generator writes (tests/judge/test_fixture_verdicts.py checks
// it gets AC on the same cases without the flag).

#include "sparse_flash_attention_grad.h"

#include <cmath>
#include <cstdint>
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

}  // namespace

extern "C" int64_t kernel_workspace_bytes(const kernel_args* a) {
    return 4 * (a->B * a->S2 * a->N2 * (2 * a->D + a->Dr) + a->D + a->Dr);
}

extern "C" int kernel_run(const kernel_args* a) {
    const int64_t B = a->B, S1 = a->S1, S2 = a->S2, N1 = a->N1, N2 = a->N2, D = a->D, Dr = a->Dr;
    const int64_t G = N1 / N2, W = 2 * D + Dr, dt = a->dtype;
    const float scale = float(a->scale);
    float* acc = static_cast<float*>(a->workspace);  // per key row (b, j, n2): dk | dv | dk_rope
    float* dq = acc + B * S2 * N2 * W;               // one query row: dq | dq_rope
    std::memset(acc, 0, sizeof(float) * B * S2 * N2 * W);

    for (int64_t b = 0; b < B; ++b) {
        for (int64_t s = 0; s < S1; ++s) {
            int64_t thr = S2;  // keys [0, thr) are visible to query token s
            if (a->sparse_mode == 3) {
                thr = S2 - S1 + s + 1;
                if (thr < 0) thr = 0;
                if (thr > S2) thr = S2;
            }
            for (int64_t h = 0; h < N1; ++h) {
                const int64_t n2 = h / G, qi = (b * S1 + s) * N1 + h;
                const int64_t st = ((b * N2 + n2) * S1 + s) * G + h % G;
                const float m = a->softmax_max[st], l = a->softmax_sum[st];
                float delta = 0.0f;
                for (int64_t e = 0; e < D; ++e) delta += load(a->d_out, qi * D + e, dt) * load(a->out, qi * D + e, dt);
                std::memset(dq, 0, sizeof(float) * (D + Dr));
                const int32_t* ids = a->sparse_indices + ((b * S1 + s) * N2 + n2) * a->K;
                for (int64_t i = 0; i < a->K && ids[i] >= 0; ++i) {
                    const bool last = i + 1 == a->K || ids[i + 1] < 0;
                    const int64_t end = last ? thr : S2;  // BUG: assumes only the last listed block is cut short
                    for (int64_t j = ids[i] * a->block_size; j < (ids[i] + 1) * a->block_size && j < end; ++j) {
                        const int64_t ki = (b * S2 + j) * N2 + n2;
                        float qk = 0.0f, dp = 0.0f;
                        for (int64_t e = 0; e < D; ++e) {
                            qk += load(a->q, qi * D + e, dt) * load(a->k, ki * D + e, dt);
                            dp += load(a->d_out, qi * D + e, dt) * load(a->v, ki * D + e, dt);
                        }
                        for (int64_t e = 0; e < Dr; ++e) qk += load(a->q_rope, qi * Dr + e, dt) * load(a->k_rope, ki * Dr + e, dt);
                        const float p = std::exp(scale * qk - m) / l;
                        const float ds = p * (dp - delta);
                        float* kacc = acc + ki * W;
                        for (int64_t e = 0; e < D; ++e) {
                            dq[e] += ds * load(a->k, ki * D + e, dt);
                            kacc[e] += ds * load(a->q, qi * D + e, dt);
                            kacc[D + e] += p * load(a->d_out, qi * D + e, dt);
                        }
                        for (int64_t e = 0; e < Dr; ++e) {
                            dq[D + e] += ds * load(a->k_rope, ki * Dr + e, dt);
                            kacc[2 * D + e] += ds * load(a->q_rope, qi * Dr + e, dt);
                        }
                    }
                }
                for (int64_t e = 0; e < D; ++e) store(a->dq, qi * D + e, scale * dq[e], dt);
                for (int64_t e = 0; e < Dr; ++e) store(a->dq_rope, qi * Dr + e, scale * dq[D + e], dt);
            }
        }
    }

    for (int64_t ki = 0; ki < B * S2 * N2; ++ki) {
        const float* kacc = acc + ki * W;
        for (int64_t e = 0; e < D; ++e) store(a->dk, ki * D + e, scale * kacc[e], dt);
        for (int64_t e = 0; e < D; ++e) store(a->dv, ki * D + e, kacc[D + e], dt);
        for (int64_t e = 0; e < Dr; ++e) store(a->dk_rope, ki * Dr + e, scale * kacc[2 * D + e], dt);
    }
    return 0;
}
