// Baseline CPU kernel for add_mul_relu: y = max((x + 1) * 2, 0), element-wise.
//
// Computed in float32 and rounded once to the dtype (round to nearest, ties to
// even). That is the exactly rounded result for every dtype:
// - float32: x + 1 is rounded once, the * 2 is exact (or overflows to inf,
//   as the exact result would), and max(., 0) does not round.
// - float16 / bfloat16: rounding x + 1 to float32 and then to the 16-bit type
//   equals rounding it once (float32 has 24 >= 2p + 2 significand bits, p = 11
//   or 8), and * 2 commutes with rounding. Checked on all 65536 inputs.
// Returns 0, or 1 for an unknown dtype or a negative n.

#include "add_mul_relu.h"

#include <cstdint>
#include <cstring>

namespace {

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

inline float bf16_to_float(uint16_t h) { return float_of(uint32_t(h) << 16); }

inline uint16_t float_to_bf16(float f) {
    uint32_t u = bits_of(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x0040u);  // NaN stays a (quiet) NaN
    u += 0x7fffu + ((u >> 16) & 1u);                                              // ties to even
    return uint16_t(u >> 16);
}

inline float f16_to_float(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    const uint32_t mant = h & 0x3ffu;
    if (exp == 0) {  // zero or subnormal: mant * 2^-24
        const float mag = float(mant) * (1.0f / 16777216.0f);
        return sign ? -mag : mag;
    }
    if (exp == 31) return float_of(sign | 0x7f800000u | (mant << 13));  // inf or NaN
    return float_of(sign | ((exp + 112u) << 23) | (mant << 13));
}

inline uint16_t float_to_f16(float f) {
    const uint32_t u = bits_of(f);
    const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
    const uint32_t mag = u & 0x7fffffffu;
    if (mag >= 0x7f800000u) return uint16_t(sign | 0x7c00u | (mag > 0x7f800000u ? 0x200u : 0u));  // inf, NaN
    if (mag >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // >= 65520 rounds to inf
    if (mag >= 0x38800000u) {                                 // normal float16
        const uint32_t r = mag + 0xfffu + ((mag >> 13) & 1u) - (112u << 23);
        return uint16_t(sign | (r >> 13));
    }
    const uint32_t exp = mag >> 23;  // subnormal float16: round mag / 2^-24, ties to even
    if (exp < 102) return sign;
    const uint32_t mant = (mag & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exp;
    uint32_t q = mant >> shift;
    const uint32_t rest = mant & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (q & 1u))) ++q;
    return uint16_t(sign | q);
}

inline float add_mul_relu(float x) {
    const float y = (x + 1.0f) * 2.0f;
    return y > 0.0f ? y : (y == y ? 0.0f : y);  // NaN passes through
}

}  // namespace

extern "C" int64_t kernel_workspace_bytes(const kernel_args*) { return 0; }

extern "C" int kernel_run(const kernel_args* args) {
    if (args == nullptr || args->n < 0) return 1;
    const int64_t n = args->n;
    switch (args->dtype) {
        case KERNEL_F32: {
            const float* x = static_cast<const float*>(args->x);
            float* y = static_cast<float*>(args->y);
#pragma omp parallel for simd schedule(static)
            for (int64_t i = 0; i < n; ++i) y[i] = add_mul_relu(x[i]);
            return 0;
        }
        case KERNEL_F16: {
            const uint16_t* x = static_cast<const uint16_t*>(args->x);
            uint16_t* y = static_cast<uint16_t*>(args->y);
#pragma omp parallel for schedule(static)
            for (int64_t i = 0; i < n; ++i) y[i] = float_to_f16(add_mul_relu(f16_to_float(x[i])));
            return 0;
        }
        case KERNEL_BF16: {
            const uint16_t* x = static_cast<const uint16_t*>(args->x);
            uint16_t* y = static_cast<uint16_t*>(args->y);
#pragma omp parallel for schedule(static)
            for (int64_t i = 0; i < n; ++i) y[i] = float_to_bf16(add_mul_relu(bf16_to_float(x[i])));
            return 0;
        }
        default:
            return 1;
    }
}
