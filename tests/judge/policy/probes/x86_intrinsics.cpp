// Probe: x86 intrinsics, SSE to AVX-512, in functions built for their target (the judge builds with
// -march=native; a kernel picks its path with #ifdef __AVX2__ and the like).
// arch: x86_64
// also: avxintrin.h avx2intrin.h avx512fintrin.h fmaintrin.h f16cintrin.h (through immintrin.h: gcc refuses them
// on their own)
#include <emmintrin.h>
#include <immintrin.h>
#include <nmmintrin.h>
#include <pmmintrin.h>
#include <smmintrin.h>
#include <tmmintrin.h>
#include <xmmintrin.h>

#include <cstdint>
#include <cstdlib>

namespace {

float sse(const float* x) {
    __m128 a = _mm_loadu_ps(x), b = _mm_set1_ps(2.0f);
    __m128d d = _mm_cvtps_pd(a);
    __m128i i = _mm_cvtps_epi32(a);
    a = _mm_add_ps(_mm_mul_ps(a, b), _mm_hadd_ps(a, a));                          // SSE, SSE3
    i = _mm_abs_epi32(_mm_shuffle_epi8(i, _mm_set1_epi8(1)));                     // SSSE3
    a = _mm_blend_ps(a, _mm_dp_ps(a, b, 0xff), 1);                                 // SSE4.1
    const int crc = int(_mm_crc32_u32(0, uint32_t(_mm_cvtsi128_si32(i))) & 1);   // SSE4.2
    return _mm_cvtss_f32(a) + float(_mm_cvtsd_f64(d)) + float(crc) + float(_mm_popcnt_u32(7));
}

__attribute__((target("avx2,fma,f16c"))) float avx2(const float* x, const uint16_t* h, int n) {
    __m256 acc = _mm256_setzero_ps();
    for (int i = 0; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        __m256 w = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i)));  // F16C
        acc = _mm256_fmadd_ps(v, w, acc);                                                         // FMA
    }
    __m256i bf = _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h))), 16);
    acc = _mm256_add_ps(acc, _mm256_castsi256_ps(bf));                                            // AVX2
    __m128 lo = _mm256_castps256_ps128(acc), hi = _mm256_extractf128_ps(acc, 1);
    lo = _mm_add_ps(lo, hi);
    lo = _mm_hadd_ps(lo, lo);
    lo = _mm_hadd_ps(lo, lo);
    __m128i half = _mm256_cvtps_ph(acc, _MM_FROUND_TO_NEAREST_INT);
    return _mm_cvtss_f32(lo) + float(_mm_extract_epi16(half, 0));
}

__attribute__((target("avx512f"))) float avx512(const float* x, int n) {
    __m512 acc = _mm512_setzero_ps();
    for (int i = 0; i + 16 <= n; i += 16) acc = _mm512_fmadd_ps(_mm512_loadu_ps(x + i), _mm512_set1_ps(0.5f), acc);
    __mmask16 tail = __mmask16((1u << (n & 15)) - 1);
    acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(tail, x));
    return _mm512_reduce_add_ps(acc);
}

}  // namespace

extern "C" int kernel_run(const float* x) {
    float* buf = static_cast<float*>(_mm_malloc(256 * sizeof(float), 64));
    if (buf == nullptr) return 1;
    for (int i = 0; i < 256; ++i) buf[i] = x[i & 15];
    float r = sse(buf);
#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
    r += avx2(buf, reinterpret_cast<const uint16_t*>(x), 64);
#endif
#if defined(__AVX512F__)
    r += avx512(buf, 256);
#endif
    _mm_prefetch(reinterpret_cast<const char*>(buf + 64), _MM_HINT_T0);
    _mm_free(buf);
    _mm_sfence();
    return int(r);
}
