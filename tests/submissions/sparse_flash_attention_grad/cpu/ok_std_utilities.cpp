// Fixture (expected AC): a correct kernel written with the standard utilities (a kernel using
// std::function, std::unique_ptr, std::string and a caught exception of its own type once got SV).
// ok_serial's math on float copies of the inputs. The dtype's codec is found by its name
// (std::string_view) in an unordered_map<std::string, Codec> of std::function loaders and storers;
// an unknown dtype throws an exception of the kernel's own type, caught in kernel_run. The float
// copies and the accumulators are std::unique_ptr<float[]>, shared with the passes through a
// std::shared_ptr; a row's visible range is a std::optional (empty when it sees nothing); a flat
// row index is split by std::tie of a std::tuple.

#include "sparse_flash_attention_grad.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

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

struct UnknownDtype {
    std::string name;
};

struct Codec {
    std::function<float(const void*, int64_t)> get;
    std::function<void(void*, int64_t, float)> put;
};

std::string_view dtype_name(int64_t dtype) {
    switch (dtype) {
        case KERNEL_F32: return "float32";
        case KERNEL_F16: return "float16";
        case KERNEL_BF16: return "bfloat16";
        default: return "unknown";
    }
}

Codec codec_of(int64_t dtype) {
    std::unordered_map<std::string, Codec> codecs;
    for (int64_t t : {KERNEL_F32, KERNEL_F16, KERNEL_BF16}) {
        codecs.emplace(std::string(dtype_name(t)),
                       Codec{[t](const void* p, int64_t i) { return load(p, i, t); },
                             [t](void* p, int64_t i, float x) { store(p, i, x, t); }});
    }
    const std::string name(dtype_name(dtype));
    auto found = codecs.find(name);
    if (found == codecs.end()) throw UnknownDtype{name + " (dtype " + std::to_string(dtype) + ")"};
    return found->second;
}

// The inputs as floats, and the accumulators of the keys.
struct Tensors {
    std::unique_ptr<float[]> q, q_rope, k, k_rope, v, d_out, out, acc;
};

std::unique_ptr<float[]> to_floats(const Codec& codec, const void* p, int64_t n) {
    auto f = std::make_unique<float[]>(size_t(std::max<int64_t>(n, 1)));
    for (int64_t i = 0; i < n; ++i) f[i] = codec.get(p, i);
    return f;
}

std::optional<std::pair<int64_t, int64_t>> visible(const kernel_args& a, int64_t s) {
    int64_t thr = a.S2;
    if (a.sparse_mode == 3) thr = std::min(std::max(a.S2 - a.S1 + s + 1, int64_t(0)), a.S2);
    if (thr == 0) return std::nullopt;
    return std::make_pair(int64_t(0), thr);
}

std::tuple<int64_t, int64_t, int64_t> split_row(const kernel_args& a, int64_t row) {
    return {row / (a.S1 * a.N1), row / a.N1 % a.S1, row % a.N1};
}

void compute(const kernel_args& a, const Codec& codec, const std::shared_ptr<Tensors>& t) {
    const int64_t S2 = a.S2, N1 = a.N1, N2 = a.N2, D = a.D, Dr = a.Dr, G = N1 / N2, W = 2 * D + Dr;
    const float scale = float(a.scale);
    auto dq = std::make_unique<float[]>(size_t(D + Dr));
    for (int64_t row = 0; row < a.B * a.S1 * N1; ++row) {
        int64_t b, s, h;
        std::tie(b, s, h) = split_row(a, row);
        const int64_t n2 = h / G, qi = row;
        std::fill(dq.get(), dq.get() + D + Dr, 0.0f);
        if (const auto range = visible(a, s)) {
            const int64_t thr = range->second;
            const int64_t st = ((b * N2 + n2) * a.S1 + s) * G + h % G;
            const float m = a.softmax_max[st], l = a.softmax_sum[st];
            float delta = 0.0f;
            for (int64_t e = 0; e < D; ++e) delta += t->d_out[qi * D + e] * t->out[qi * D + e];
            const int32_t* ids = a.sparse_indices + ((b * a.S1 + s) * N2 + n2) * a.K;
            for (int64_t i = 0; i < a.K && ids[i] >= 0; ++i) {
                for (int64_t j = ids[i] * a.block_size; j < (ids[i] + 1) * a.block_size && j < thr; ++j) {
                    const int64_t ki = (b * S2 + j) * N2 + n2;
                    float qk = 0.0f, dp = 0.0f;
                    for (int64_t e = 0; e < D; ++e) {
                        qk += t->q[qi * D + e] * t->k[ki * D + e];
                        dp += t->d_out[qi * D + e] * t->v[ki * D + e];
                    }
                    for (int64_t e = 0; e < Dr; ++e) qk += t->q_rope[qi * Dr + e] * t->k_rope[ki * Dr + e];
                    const float p = std::exp(scale * qk - m) / l;
                    const float ds = p * (dp - delta);
                    float* kacc = t->acc.get() + ki * W;
                    for (int64_t e = 0; e < D; ++e) {
                        dq[e] += ds * t->k[ki * D + e];
                        kacc[e] += ds * t->q[qi * D + e];
                        kacc[D + e] += p * t->d_out[qi * D + e];
                    }
                    for (int64_t e = 0; e < Dr; ++e) {
                        dq[D + e] += ds * t->k_rope[ki * Dr + e];
                        kacc[2 * D + e] += ds * t->q_rope[qi * Dr + e];
                    }
                }
            }
        }
        for (int64_t e = 0; e < D; ++e) codec.put(a.dq, qi * D + e, scale * dq[e]);
        for (int64_t e = 0; e < Dr; ++e) codec.put(a.dq_rope, qi * Dr + e, scale * dq[D + e]);
    }
    for (int64_t ki = 0; ki < a.B * S2 * N2; ++ki) {
        const float* kacc = t->acc.get() + ki * W;
        for (int64_t e = 0; e < D; ++e) codec.put(a.dk, ki * D + e, scale * kacc[e]);
        for (int64_t e = 0; e < D; ++e) codec.put(a.dv, ki * D + e, kacc[D + e]);
        for (int64_t e = 0; e < Dr; ++e) codec.put(a.dk_rope, ki * Dr + e, scale * kacc[2 * D + e]);
    }
}

}  // namespace

extern "C" int kernel_run(const kernel_args* a) {
    try {
        const Codec codec = codec_of(a->dtype);
        const int64_t nq = a->B * a->S1 * a->N1, nk = a->B * a->S2 * a->N2;
        auto t = std::make_shared<Tensors>();
        t->q = to_floats(codec, a->q, nq * a->D);
        t->q_rope = to_floats(codec, a->q_rope, nq * a->Dr);
        t->k = to_floats(codec, a->k, nk * a->D);
        t->k_rope = to_floats(codec, a->k_rope, nk * a->Dr);
        t->v = to_floats(codec, a->v, nk * a->D);
        t->d_out = to_floats(codec, a->d_out, nq * a->D);
        t->out = to_floats(codec, a->out, nq * a->D);
        t->acc = std::make_unique<float[]>(size_t(nk * (2 * a->D + a->Dr)));  // value-initialised: zeros
        compute(*a, codec, t);
    } catch (const UnknownDtype&) {
        return 3;
    }
    return 0;
}
