// Probe: Arm intrinsics: NEON, SVE (in a function built for it), float16 and bfloat16 types.
// arch: aarch64
#include <arm_bf16.h>
#include <arm_fp16.h>
#include <arm_neon.h>
#include <arm_sve.h>

namespace {

float neon(const float* x, int n) {
    float32x4_t acc = vdupq_n_f32(0.0f);
    for (int i = 0; i + 4 <= n; i += 4) acc = vfmaq_f32(acc, vld1q_f32(x + i), vdupq_n_f32(0.5f));
    float16x4_t h = vcvt_f16_f32(acc);
    return vaddvq_f32(acc) + vgetq_lane_f32(vcvt_f32_f16(h), 0);
}

__attribute__((target("+sve"))) float sve(const float* x, int n) {
    svfloat32_t acc = svdup_f32(0.0f);
    for (int i = 0; i < n; i += int(svcntw())) {
        svbool_t pg = svwhilelt_b32(i, n);
        acc = svmla_f32_m(pg, acc, svld1_f32(pg, x + i), svdup_f32(2.0f));
    }
    return svaddv_f32(svptrue_b32(), acc);
}

}  // namespace

extern "C" int kernel_run(const float* x) {
    __fp16 h = __fp16(x[0]);
    return int(neon(x, 64) + sve(x, 64) + float(h));
}
