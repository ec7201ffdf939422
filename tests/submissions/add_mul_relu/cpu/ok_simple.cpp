// Fixture (expected AC): add_mul_relu written plainly, one thread.
// float32 arithmetic, then one round-to-nearest-even to the dtype.
#include "add_mul_relu.h"

#include <cstdint>
#include <cstring>

static float as_float(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

static uint32_t as_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

static float f16_in(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000u) << 16, e = (h >> 10) & 31u, m = h & 1023u;
    if (e == 0) return as_float(as_bits(float(m) * (1.0f / 16777216.0f)) | sign);  // zero, subnormal
    if (e == 31) return as_float(sign | 0x7f800000u | (m << 13));
    return as_float(sign | ((e + 112u) << 23) | (m << 13));
}

static uint16_t f16_out(float f) {
    const uint32_t u = as_bits(f), mag = u & 0x7fffffffu;
    const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
    if (mag > 0x7f800000u) return uint16_t(sign | 0x7e00u);
    if (mag >= 0x477ff000u) return uint16_t(sign | 0x7c00u);
    if (mag >= 0x38800000u) return uint16_t(sign | ((mag + 0xfffu + ((mag >> 13) & 1u) - (112u << 23)) >> 13));
    const float r = as_float(mag) + 0.5f;  // the ulp of 0.5 is 2^-24, the float16 subnormal step
    return uint16_t(sign | (as_bits(r) - as_bits(0.5f)));
}

static uint16_t bf16_out(float f) {
    const uint32_t u = as_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t(0x7fc0u);
    return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static float op(float x) {
    float y = x + 1.0f;
    y = y * 2.0f;
    if (y < 0.0f) y = 0.0f;
    return y;
}

extern "C" int kernel_run(const kernel_args* a) {
    for (int64_t i = 0; i < a->n; ++i) {
        if (a->dtype == KERNEL_F32) {
            static_cast<float*>(a->y)[i] = op(static_cast<const float*>(a->x)[i]);
        } else if (a->dtype == KERNEL_F16) {
            static_cast<uint16_t*>(a->y)[i] = f16_out(op(f16_in(static_cast<const uint16_t*>(a->x)[i])));
        } else if (a->dtype == KERNEL_BF16) {
            const uint32_t bits = uint32_t(static_cast<const uint16_t*>(a->x)[i]) << 16;
            static_cast<uint16_t*>(a->y)[i] = bf16_out(op(as_float(bits)));
        } else {
            return 1;
        }
    }
    return 0;
}
