// Fixture (expected AC): a correct kernel that uses exceptions (`#include <stdexcept>`
// with a throw and catch of std::invalid_argument once got SV; docs/rules.md allows standard headers).
// ok_serial's math. kernel_run checks its arguments and throws std::invalid_argument or
// std::out_of_range (caught there: a non-zero return); a query row that sees nothing (thr(s) = 0,
// in the S1 > S2 cases) throws an exception of the kernel's own type, derived from std::exception,
// which its caller catches to write the row's zeros; std::vector::at guards the accumulators.

#include "sparse_flash_attention_grad.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
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

struct NothingVisible : std::exception {
    int64_t s;
    explicit NothingVisible(int64_t s_) : s(s_) {}
    const char* what() const noexcept override { return "the query row sees no key"; }
};

void check_args(const kernel_args& a) {
    if (a.dtype != KERNEL_F32 && a.dtype != KERNEL_F16 && a.dtype != KERNEL_BF16)
        throw std::invalid_argument("unknown dtype " + std::to_string(a.dtype));
    if (a.N2 <= 0 || a.N1 % a.N2 != 0) throw std::invalid_argument("N1 is not a multiple of N2");
    if (a.sparse_mode != 0 && a.sparse_mode != 3) throw std::invalid_argument("sparse_mode is neither 0 nor 3");
    if (a.block_size <= 0) throw std::out_of_range("block_size");
}

// The keys [0, thr) query token s sees; throws NothingVisible when there are none.
int64_t threshold(const kernel_args& a, int64_t s) {
    int64_t thr = a.S2;
    if (a.sparse_mode == 3) {
        thr = a.S2 - a.S1 + s + 1;
        if (thr < 0) thr = 0;
        if (thr > a.S2) thr = a.S2;
    }
    if (thr == 0) throw NothingVisible(s);
    return thr;
}

void query_row(const kernel_args& a, int64_t b, int64_t s, int64_t h, std::vector<float>& acc, std::vector<float>& dq) {
    const int64_t S1 = a.S1, S2 = a.S2, N1 = a.N1, N2 = a.N2, D = a.D, Dr = a.Dr;
    const int64_t G = N1 / N2, W = 2 * D + Dr, dt = a.dtype;
    const float scale = float(a.scale);
    const int64_t n2 = h / G, qi = (b * S1 + s) * N1 + h;
    const int64_t thr = threshold(a, s);
    const int64_t st = ((b * N2 + n2) * S1 + s) * G + h % G;
    const float m = a.softmax_max[st], l = a.softmax_sum[st];
    float delta = 0.0f;
    for (int64_t e = 0; e < D; ++e) delta += load(a.d_out, qi * D + e, dt) * load(a.out, qi * D + e, dt);
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
            float* kacc = &acc.at(size_t(ki * W));  // std::out_of_range if the row is not the case's
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
}

int run(const kernel_args& a) {
    check_args(a);
    const int64_t D = a.D, Dr = a.Dr, W = 2 * D + Dr, dt = a.dtype;
    const float scale = float(a.scale);
    std::vector<float> acc(size_t(a.B * a.S2 * a.N2 * W), 0.0f), dq(size_t(D + Dr));
    for (int64_t b = 0; b < a.B; ++b) {
        for (int64_t s = 0; s < a.S1; ++s) {
            for (int64_t h = 0; h < a.N1; ++h) {
                std::fill(dq.begin(), dq.end(), 0.0f);
                try {
                    query_row(a, b, s, h, acc, dq);
                } catch (const NothingVisible&) {
                    // dq stays 0: the row adds nothing
                }
                const int64_t qi = (b * a.S1 + s) * a.N1 + h;
                for (int64_t e = 0; e < D; ++e) store(a.dq, qi * D + e, scale * dq[e], dt);
                for (int64_t e = 0; e < Dr; ++e) store(a.dq_rope, qi * Dr + e, scale * dq[D + e], dt);
            }
        }
    }
    for (int64_t ki = 0; ki < a.B * a.S2 * a.N2; ++ki) {
        const float* kacc = acc.data() + ki * W;
        for (int64_t e = 0; e < D; ++e) store(a.dk, ki * D + e, scale * kacc[e], dt);
        for (int64_t e = 0; e < D; ++e) store(a.dv, ki * D + e, kacc[D + e], dt);
        for (int64_t e = 0; e < Dr; ++e) store(a.dk_rope, ki * Dr + e, scale * kacc[2 * D + e], dt);
    }
    return 0;
}

}  // namespace

extern "C" int kernel_run(const kernel_args* a) {
    try {
        return run(*a);
    } catch (const std::invalid_argument&) {
        return 2;
    } catch (const std::logic_error&) {
        return 3;
    } catch (const std::exception&) {
        return 5;
    }
}
