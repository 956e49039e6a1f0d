/*
 * simd.h - the tiny vector layer every kernel file is written against.
 *
 * A kernel file includes this header once; the build compiles that file once per ISA with
 * JM_ISA set to one of the values below (and the matching target flags), so the same source
 * becomes jm_<kernel>_scalar and, on x86-64, jm_<kernel>_sse, jm_<kernel>_avx2 and
 * jm_<kernel>_avx512, or on arm64 jm_<kernel>_neon (NEON is baseline there: no target flags).
 *
 *   vf      a vector of JM_W floats (float itself on the scalar path)
 *   vmask   the result of a lane-wise comparison, consumed by v_select
 *
 * Records (joints, quaternions, matrices) are moved between memory and registers as 128-bit
 * "quads" of four floats: v_load_quads reads one quad from each of JM_W records and transposes
 * them so that vector k holds component k of every record (structure of arrays); v_store_quads
 * is its inverse. Lane i always belongs to record i of the block, on every path, so kernels
 * can mix quads of different record layouts freely. Loads and stores are unaligned and use
 * only plain loads, shuffles and stores (no gather/scatter).
 */
#ifndef JM_SIMD_H
#define JM_SIMD_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define JM_ISA_SCALAR 0
#define JM_ISA_SSE 1
#define JM_ISA_AVX2 2
#define JM_ISA_AVX512 3
#define JM_ISA_NEON 4

#ifndef JM_ISA
#error "JM_ISA must be defined by the build (see setup.py)"
#endif

/* JM_FN(name) gives the ISA-suffixed symbol the dispatcher links against. */
#define JM_CAT_(a, b) a##_##b
#define JM_CAT(a, b) JM_CAT_(a, b)

#if JM_ISA == JM_ISA_AVX512
#include <immintrin.h>
#define JM_W 16
#define JM_FN(name) JM_CAT(name, avx512)
typedef __m512 vf;
typedef __mmask16 vmask;
#elif JM_ISA == JM_ISA_AVX2
#include <immintrin.h>
#define JM_W 8
#define JM_FN(name) JM_CAT(name, avx2)
typedef __m256 vf;
typedef __m256 vmask;
#elif JM_ISA == JM_ISA_SSE
#include <smmintrin.h>
#define JM_W 4
#define JM_FN(name) JM_CAT(name, sse)
typedef __m128 vf;
typedef __m128 vmask;
#elif JM_ISA == JM_ISA_NEON
#include <arm_neon.h>
#define JM_W 4
#define JM_FN(name) JM_CAT(name, neon)
typedef float32x4_t vf;
typedef uint32x4_t vmask;
#else
#define JM_W 1
#define JM_FN(name) JM_CAT(name, scalar)
typedef float vf;
typedef int vmask;
#endif

/*
 * Compiler portability: GCC and clang (Linux, macOS) or MSVC (Windows; x86-64 has no POPCNT
 * guarantee at the SSE4.1 level, so it counts mask bits in plain C).
 * JM_PREFETCH(p): a hint to load the cache line at p; JM_PREFETCH_L2(p): the same into the L2
 * cache only (a request far ahead then does not hold one of the L1's few miss buffers while
 * memory answers); JM_UNREACHABLE(): tells the optimiser that
 * a branch never runs; JM_UNLIKELY(c): c, hinted to be rarely true; JM_COLD: a function kept out of
 * line and out of the hot code (rare fallbacks).
 */
#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#define JM_INLINE static __forceinline
#if defined(_M_ARM64)
#define JM_PREFETCH(p) __prefetch(p)
#define JM_PREFETCH_L2(p) __prefetch(p)
#else
#define JM_PREFETCH(p) _mm_prefetch((const char *)(p), _MM_HINT_T0)
#define JM_PREFETCH_L2(p) _mm_prefetch((const char *)(p), _MM_HINT_T1)
#endif
#define JM_UNREACHABLE() __assume(0)
#define JM_UNLIKELY(c) (c)
#define JM_COLD __declspec(noinline)
JM_INLINE int jm_popcount(unsigned m) {
    int n = 0;
    for (; m; m &= m - 1)
        n++;
    return n;
}
#else
#define JM_INLINE static inline __attribute__((always_inline))
#define JM_PREFETCH(p) __builtin_prefetch(p)
#define JM_PREFETCH_L2(p) __builtin_prefetch(p, 0, 2)
#define JM_UNREACHABLE() __builtin_unreachable()
#define JM_UNLIKELY(c) __builtin_expect(!!(c), 0)
#define JM_COLD __attribute__((cold, noinline))
#define jm_popcount(m) __builtin_popcount(m)
#endif

/* ---------------------------------------------------------------- arithmetic -- */
#if JM_ISA == JM_ISA_AVX512
JM_INLINE vf v_set1(float a) { return _mm512_set1_ps(a); }
JM_INLINE vf v_add(vf a, vf b) { return _mm512_add_ps(a, b); }
JM_INLINE vf v_sub(vf a, vf b) { return _mm512_sub_ps(a, b); }
JM_INLINE vf v_mul(vf a, vf b) { return _mm512_mul_ps(a, b); }
JM_INLINE vf v_div(vf a, vf b) { return _mm512_div_ps(a, b); }
JM_INLINE vf v_min(vf a, vf b) { return _mm512_min_ps(a, b); }
JM_INLINE vf v_max(vf a, vf b) { return _mm512_max_ps(a, b); }
JM_INLINE vf v_sqrt(vf a) { return _mm512_sqrt_ps(a); }
JM_INLINE vf v_fmadd(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }   /* a*b + c */
JM_INLINE vf v_fnmadd(vf a, vf b, vf c) { return _mm512_fnmadd_ps(a, b, c); } /* c - a*b */
JM_INLINE vf v_rsqrt_approx(vf a) { return _mm512_rsqrt14_ps(a); }
JM_INLINE vf v_rcp_approx(vf a) { return _mm512_rcp14_ps(a); }
JM_INLINE vf v_xor(vf a, vf b) { return _mm512_xor_ps(a, b); }
JM_INLINE vf v_and(vf a, vf b) { return _mm512_and_ps(a, b); }
JM_INLINE vmask v_gt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
JM_INLINE vmask v_ge(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
JM_INLINE vmask v_lt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
JM_INLINE vmask m_and(vmask a, vmask b) { return (vmask)(a & b); }
JM_INLINE vmask m_or(vmask a, vmask b) { return (vmask)(a | b); }
JM_INLINE vmask m_not(vmask a) { return (vmask)~a; }
/* lanes where m is set take a, the others b */
JM_INLINE vf v_select(vmask m, vf a, vf b) { return _mm512_mask_blend_ps(m, b, a); }
/* JM_W floats from p (any alignment) */
JM_INLINE vf v_loadu(const float *p) { return _mm512_loadu_ps(p); }
#elif JM_ISA == JM_ISA_AVX2
JM_INLINE vf v_set1(float a) { return _mm256_set1_ps(a); }
JM_INLINE vf v_add(vf a, vf b) { return _mm256_add_ps(a, b); }
JM_INLINE vf v_sub(vf a, vf b) { return _mm256_sub_ps(a, b); }
JM_INLINE vf v_mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
JM_INLINE vf v_div(vf a, vf b) { return _mm256_div_ps(a, b); }
JM_INLINE vf v_min(vf a, vf b) { return _mm256_min_ps(a, b); }
JM_INLINE vf v_max(vf a, vf b) { return _mm256_max_ps(a, b); }
JM_INLINE vf v_sqrt(vf a) { return _mm256_sqrt_ps(a); }
JM_INLINE vf v_fmadd(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
JM_INLINE vf v_fnmadd(vf a, vf b, vf c) { return _mm256_fnmadd_ps(a, b, c); }
JM_INLINE vf v_rsqrt_approx(vf a) { return _mm256_rsqrt_ps(a); }
JM_INLINE vf v_rcp_approx(vf a) { return _mm256_rcp_ps(a); }
JM_INLINE vf v_xor(vf a, vf b) { return _mm256_xor_ps(a, b); }
JM_INLINE vf v_and(vf a, vf b) { return _mm256_and_ps(a, b); }
JM_INLINE vmask v_gt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
JM_INLINE vmask v_ge(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
JM_INLINE vmask v_lt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
JM_INLINE vmask m_and(vmask a, vmask b) { return _mm256_and_ps(a, b); }
JM_INLINE vmask m_or(vmask a, vmask b) { return _mm256_or_ps(a, b); }
JM_INLINE vmask m_not(vmask a) { return _mm256_xor_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(-1))); }
JM_INLINE vf v_select(vmask m, vf a, vf b) { return _mm256_blendv_ps(b, a, m); }
JM_INLINE vf v_loadu(const float *p) { return _mm256_loadu_ps(p); }
#elif JM_ISA == JM_ISA_SSE
JM_INLINE vf v_set1(float a) { return _mm_set1_ps(a); }
JM_INLINE vf v_add(vf a, vf b) { return _mm_add_ps(a, b); }
JM_INLINE vf v_sub(vf a, vf b) { return _mm_sub_ps(a, b); }
JM_INLINE vf v_mul(vf a, vf b) { return _mm_mul_ps(a, b); }
JM_INLINE vf v_div(vf a, vf b) { return _mm_div_ps(a, b); }
JM_INLINE vf v_min(vf a, vf b) { return _mm_min_ps(a, b); }
JM_INLINE vf v_max(vf a, vf b) { return _mm_max_ps(a, b); }
JM_INLINE vf v_sqrt(vf a) { return _mm_sqrt_ps(a); }
/* SSE has no FMA: a separate multiply and add (one more rounding, covered by every bound). */
JM_INLINE vf v_fmadd(vf a, vf b, vf c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
JM_INLINE vf v_fnmadd(vf a, vf b, vf c) { return _mm_sub_ps(c, _mm_mul_ps(a, b)); }
JM_INLINE vf v_rsqrt_approx(vf a) { return _mm_rsqrt_ps(a); }
JM_INLINE vf v_rcp_approx(vf a) { return _mm_rcp_ps(a); }
JM_INLINE vf v_xor(vf a, vf b) { return _mm_xor_ps(a, b); }
JM_INLINE vf v_and(vf a, vf b) { return _mm_and_ps(a, b); }
JM_INLINE vmask v_gt(vf a, vf b) { return _mm_cmpgt_ps(a, b); }
JM_INLINE vmask v_ge(vf a, vf b) { return _mm_cmpge_ps(a, b); }
JM_INLINE vmask v_lt(vf a, vf b) { return _mm_cmplt_ps(a, b); }
JM_INLINE vmask m_and(vmask a, vmask b) { return _mm_and_ps(a, b); }
JM_INLINE vmask m_or(vmask a, vmask b) { return _mm_or_ps(a, b); }
JM_INLINE vmask m_not(vmask a) { return _mm_xor_ps(a, _mm_castsi128_ps(_mm_set1_epi32(-1))); }
JM_INLINE vf v_select(vmask m, vf a, vf b) { return _mm_blendv_ps(b, a, m); }
JM_INLINE vf v_loadu(const float *p) { return _mm_loadu_ps(p); }
#elif JM_ISA == JM_ISA_NEON
JM_INLINE vf v_set1(float a) { return vdupq_n_f32(a); }
JM_INLINE vf v_add(vf a, vf b) { return vaddq_f32(a, b); }
JM_INLINE vf v_sub(vf a, vf b) { return vsubq_f32(a, b); }
JM_INLINE vf v_mul(vf a, vf b) { return vmulq_f32(a, b); }
JM_INLINE vf v_div(vf a, vf b) { return vdivq_f32(a, b); }
/* minps / maxps semantics (b when the two compare equal or either is NaN), not fmin's */
JM_INLINE vf v_min(vf a, vf b) { return vbslq_f32(vcltq_f32(a, b), a, b); }
JM_INLINE vf v_max(vf a, vf b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }
JM_INLINE vf v_sqrt(vf a) { return vsqrtq_f32(a); }
JM_INLINE vf v_fmadd(vf a, vf b, vf c) { return vfmaq_f32(c, a, b); }
JM_INLINE vf v_fnmadd(vf a, vf b, vf c) { return vfmsq_f32(c, a, b); }
/*
 * NEON's estimates are good to only ~8 bits; one Newton-Raphson step (vrsqrtsq / vrecpsq, exact
 * at 0 and inf, so 0 still gives inf) takes them past the 12 bits of rsqrtps / rcpps (worst
 * relative error over every float in [1, 4): 1.6e-5 for 1/sqrt, 8.2e-6 for 1/x), so the
 * refinements below (v_rsqrt, v_rcp, v_rsqrt_fine) are at least as accurate as on x86 and every
 * kernel keeps its bound.
 */
JM_INLINE vf v_rsqrt_approx(vf a) {
    vf y = vrsqrteq_f32(a);
    return vmulq_f32(y, vrsqrtsq_f32(a, vmulq_f32(y, y)));
}
JM_INLINE vf v_rcp_approx(vf a) {
    vf y = vrecpeq_f32(a);
    return vmulq_f32(y, vrecpsq_f32(a, y));
}
JM_INLINE vf v_xor(vf a, vf b) { return vreinterpretq_f32_u32(veorq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b))); }
JM_INLINE vf v_and(vf a, vf b) { return vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b))); }
JM_INLINE vmask v_gt(vf a, vf b) { return vcgtq_f32(a, b); }
JM_INLINE vmask v_ge(vf a, vf b) { return vcgeq_f32(a, b); }
JM_INLINE vmask v_lt(vf a, vf b) { return vcltq_f32(a, b); }
JM_INLINE vmask m_and(vmask a, vmask b) { return vandq_u32(a, b); }
JM_INLINE vmask m_or(vmask a, vmask b) { return vorrq_u32(a, b); }
JM_INLINE vmask m_not(vmask a) { return vmvnq_u32(a); }
JM_INLINE vf v_select(vmask m, vf a, vf b) { return vbslq_f32(m, a, b); }
JM_INLINE vf v_loadu(const float *p) { return vld1q_f32(p); }
#else
JM_INLINE vf v_set1(float a) { return a; }
JM_INLINE vf v_add(vf a, vf b) { return a + b; }
JM_INLINE vf v_sub(vf a, vf b) { return a - b; }
JM_INLINE vf v_mul(vf a, vf b) { return a * b; }
JM_INLINE vf v_div(vf a, vf b) { return a / b; }
JM_INLINE vf v_min(vf a, vf b) { return a < b ? a : b; } /* b when equal or either is NaN, like minps */
JM_INLINE vf v_max(vf a, vf b) { return a > b ? a : b; } /* likewise, like maxps */
JM_INLINE vf v_sqrt(vf a) { return sqrtf(a); }
/* The scalar path is built for baseline x86-64, where fmaf is a library call: plain mul+add (on
   arm64 too, so that the scalar path rounds alike on every CPU). */
JM_INLINE vf v_fmadd(vf a, vf b, vf c) { return a * b + c; }
JM_INLINE vf v_fnmadd(vf a, vf b, vf c) { return c - a * b; }
JM_INLINE vf v_rsqrt_approx(vf a) { return 1.0f / sqrtf(a); }
JM_INLINE vf v_rcp_approx(vf a) { return 1.0f / a; }
JM_INLINE vf v_xor(vf a, vf b) {
    uint32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    ia ^= ib;
    memcpy(&a, &ia, 4);
    return a;
}
JM_INLINE vf v_and(vf a, vf b) {
    uint32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    ia &= ib;
    memcpy(&a, &ia, 4);
    return a;
}
JM_INLINE vmask v_gt(vf a, vf b) { return a > b; }
JM_INLINE vmask v_ge(vf a, vf b) { return a >= b; }
JM_INLINE vmask v_lt(vf a, vf b) { return a < b; }
JM_INLINE vmask m_and(vmask a, vmask b) { return a & b; }
JM_INLINE vmask m_or(vmask a, vmask b) { return a | b; }
JM_INLINE vmask m_not(vmask a) { return !a; }
JM_INLINE vf v_select(vmask m, vf a, vf b) { return m ? a : b; }
JM_INLINE vf v_loadu(const float *p) {
    float f;
    memcpy(&f, p, sizeof f);
    return f;
}
#endif

/* a float from its IEEE-754 bit pattern (sign masks and the like) */
JM_INLINE float jm_float_from_bits(uint32_t bits) {
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}
JM_INLINE vf v_abs(vf a) { return v_and(a, v_set1(jm_float_from_bits(0x7fffffffu))); }

/*
 * a*b - c*d with the sign of the exact value: both products of floats are exact in double
 * (24 + 24 bits), their difference is rounded once, so the result is zero only when a*b == c*d
 * exactly and otherwise has the exact sign; it is then rounded to float (a nonzero difference of
 * multiples of 2^-149 stays nonzero, one past FLT_MAX becomes an infinity of the same sign). The
 * magnitude is only as accurate as that final rounding.
 */
#if JM_ISA == JM_ISA_AVX512
JM_INLINE __m512d jm_diff_of_products_pd(__m256 a, __m256 b, __m256 c, __m256 d) {
    return _mm512_sub_pd(_mm512_mul_pd(_mm512_cvtps_pd(a), _mm512_cvtps_pd(b)),
                         _mm512_mul_pd(_mm512_cvtps_pd(c), _mm512_cvtps_pd(d)));
}
JM_INLINE vf v_diff_of_products(vf a, vf b, vf c, vf d) {
    __m512d lo = jm_diff_of_products_pd(_mm512_castps512_ps256(a), _mm512_castps512_ps256(b),
                                        _mm512_castps512_ps256(c), _mm512_castps512_ps256(d));
    __m512d hi = jm_diff_of_products_pd(_mm512_extractf32x8_ps(a, 1), _mm512_extractf32x8_ps(b, 1),
                                        _mm512_extractf32x8_ps(c, 1), _mm512_extractf32x8_ps(d, 1));
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo)), _mm512_cvtpd_ps(hi), 1);
}
#elif JM_ISA == JM_ISA_AVX2
JM_INLINE __m256d jm_diff_of_products_pd(__m128 a, __m128 b, __m128 c, __m128 d) {
    return _mm256_sub_pd(_mm256_mul_pd(_mm256_cvtps_pd(a), _mm256_cvtps_pd(b)),
                         _mm256_mul_pd(_mm256_cvtps_pd(c), _mm256_cvtps_pd(d)));
}
JM_INLINE vf v_diff_of_products(vf a, vf b, vf c, vf d) {
    __m256d lo = jm_diff_of_products_pd(_mm256_castps256_ps128(a), _mm256_castps256_ps128(b),
                                        _mm256_castps256_ps128(c), _mm256_castps256_ps128(d));
    __m256d hi = jm_diff_of_products_pd(_mm256_extractf128_ps(a, 1), _mm256_extractf128_ps(b, 1),
                                        _mm256_extractf128_ps(c, 1), _mm256_extractf128_ps(d, 1));
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo)), _mm256_cvtpd_ps(hi), 1);
}
#elif JM_ISA == JM_ISA_SSE
/* lanes 0-1 of each argument (the caller moves lanes 2-3 down first) */
JM_INLINE __m128d jm_diff_of_products_pd(__m128 a, __m128 b, __m128 c, __m128 d) {
    return _mm_sub_pd(_mm_mul_pd(_mm_cvtps_pd(a), _mm_cvtps_pd(b)), _mm_mul_pd(_mm_cvtps_pd(c), _mm_cvtps_pd(d)));
}
JM_INLINE vf v_diff_of_products(vf a, vf b, vf c, vf d) {
    __m128d lo = jm_diff_of_products_pd(a, b, c, d);
    __m128d hi = jm_diff_of_products_pd(_mm_movehl_ps(a, a), _mm_movehl_ps(b, b), _mm_movehl_ps(c, c),
                                        _mm_movehl_ps(d, d));
    return _mm_movelh_ps(_mm_cvtpd_ps(lo), _mm_cvtpd_ps(hi));
}
#elif JM_ISA == JM_ISA_NEON
JM_INLINE vf v_diff_of_products(vf a, vf b, vf c, vf d) {
    float64x2_t lo = vsubq_f64(vmulq_f64(vcvt_f64_f32(vget_low_f32(a)), vcvt_f64_f32(vget_low_f32(b))),
                               vmulq_f64(vcvt_f64_f32(vget_low_f32(c)), vcvt_f64_f32(vget_low_f32(d))));
    float64x2_t hi = vsubq_f64(vmulq_f64(vcvt_high_f64_f32(a), vcvt_high_f64_f32(b)),
                               vmulq_f64(vcvt_high_f64_f32(c), vcvt_high_f64_f32(d)));
    return vcvt_high_f32_f64(vcvt_f32_f64(lo), hi);
}
#else
JM_INLINE vf v_diff_of_products(vf a, vf b, vf c, vf d) { return (float)((double)a * b - (double)c * d); }
#endif

/*
 * v_scale_pow2: multiplies v[0..n) (a quaternion, a matrix: any group of lanes normalised
 * together) by the power of two that puts the largest |v[i]| in [1, 2), and returns that largest
 * |v[i]| as it was. Exact: powers of two change no mantissa bit, so anything computed from the
 * result is the same for every scale of the input, and sums of squares can neither overflow
 * nor underflow. A subnormal largest is first lifted by 2^64 (exactly) so that its exponent
 * can be read; the scale 2^-e of the exponent-only value 2^e comes from flipping its exponent
 * bits (E -> 255 - E is 2^(1 - e), exact for every normal 2^e) and halving: no division.
 * All zero: unchanged (the scale is capped). An inf: NaN (inf * 0); a NaN stays NaN (v_max
 * may drop it from the returned largest).
 */
JM_INLINE vf v_scale_pow2(vf *v, int n) {
    vf largest = v_abs(v[0]);
    for (int i = 1; i < n; i++)
        largest = v_max(largest, v_abs(v[i]));
    const vf exponent_bits = v_set1(jm_float_from_bits(0x7f800000u));
    vf lift = v_select(v_ge(largest, v_set1(0x1p-126f)), v_set1(1.0f), v_set1(0x1p64f));
    vf power = v_and(v_mul(largest, lift), exponent_bits); /* 2^floor(log2), 0 for zero, inf for inf */
    /* 2^-e; zero's inf capped at 2^126 (0 * 2^126 = 0), the largest scale a normal input needs */
    vf scale = v_min(v_mul(v_xor(power, exponent_bits), v_set1(0.5f)), v_set1(0x1p126f));
    for (int i = 0; i < n; i++)
        v[i] = v_mul(v_mul(v[i], lift), scale);
    return largest;
}

/*
 * 1/sqrt(a) to about 2 ulp: the estimate (12 bits on SSE/AVX2, 14 on AVX-512, ~16 on NEON, see
 * v_rsqrt_approx) refined by one Newton-Raphson step y' = y * (1.5 - 0.5 * a * y * y). The
 * scalar path divides exactly.
 * a = 0 gives NaN on the SIMD paths (inf * 0 in the step); callers keep a away from zero.
 */
JM_INLINE vf v_rsqrt(vf a) {
#if JM_ISA == JM_ISA_SCALAR
    return 1.0f / sqrtf(a);
#else
    vf y = v_rsqrt_approx(a);
    vf half_a_y = v_mul(v_mul(v_set1(0.5f), a), y);
    return v_mul(y, v_fnmadd(half_a_y, y, v_set1(1.5f)));
#endif
}

/*
 * 1/a to about 1 ulp: the hardware estimate refined by one Newton-Raphson step
 * y' = y + y (1 - a y); far cheaper than a division on every SIMD path (a 512-bit divide costs
 * about two cycles per lane-group of work on some CPUs). The scalar path divides exactly.
 */
JM_INLINE vf v_rcp(vf a) {
#if JM_ISA == JM_ISA_SCALAR
    return 1.0f / a;
#else
    vf y = v_rcp_approx(a);
    return v_fmadd(y, v_fnmadd(a, y, v_set1(1.0f)), y);
#endif
}

/* whether any lane of a mask is set (loop exits of iterative kernels) */
#if JM_ISA == JM_ISA_AVX512
JM_INLINE int m_any(vmask m) { return m != 0; }
#elif JM_ISA == JM_ISA_AVX2
JM_INLINE int m_any(vmask m) { return _mm256_movemask_ps(m) != 0; }
#elif JM_ISA == JM_ISA_SSE
JM_INLINE int m_any(vmask m) { return _mm_movemask_ps(m) != 0; }
#elif JM_ISA == JM_ISA_NEON
JM_INLINE int m_any(vmask m) { return vmaxvq_u32(m) != 0; }
#else
JM_INLINE int m_any(vmask m) { return m != 0; }
#endif

/*
 * 1/sqrt(a) to rounding accuracy (about 1 ulp): the hardware estimate y with relative error e0,
 * then the second-order correction y' = y (1 + e/2 + 3e^2/8) of e = 1 - a y^2, which leaves
 * ~e0^3 (< 1e-10 from the 12-bit estimate, where v_rsqrt's one Newton step leaves ~2e-7).
 * Costs one operation more than v_rsqrt. The scalar path divides exactly. Same a = 0 caveat.
 */
JM_INLINE vf v_rsqrt_fine(vf a) {
#if JM_ISA == JM_ISA_SCALAR
    return 1.0f / sqrtf(a);
#else
    vf y = v_rsqrt_approx(a);
    vf e = v_fnmadd(v_mul(a, y), y, v_set1(1.0f));
    return v_fmadd(v_mul(y, e), v_fmadd(e, v_set1(0.375f), v_set1(0.5f)), y);
#endif
}

/* ----------------------------------------------------- record loads and stores -- */
/*
 * v_load_quads: for i in [0, JM_W) read floats [0, 4) at (base + i * stride) and return them
 * transposed: c0 lane i = first float of record i, ..., c3 lane i = fourth float.
 * v_store_quads writes the inverse. stride is in bytes and may be anything (records of any
 * size, unaligned, negative strides of sliced arrays).
 */
#if JM_ISA == JM_ISA_AVX512
/*
 * AVX-512 lane order: the quads of records 4j .. 4j+3 fill one vector (128-bit lane L = record
 * 4j + L), and the in-lane transpose of the four such vectors puts record 4j + L in lane 4L + j.
 * Packed records (stride = their size) then load and store as whole 512-bit vectors.
 */
JM_INLINE __m512 jm_load_4_quads(const char *p, ptrdiff_t s) {
    __m512 v = _mm512_castps128_ps512(_mm_loadu_ps((const float *)p));
    v = _mm512_insertf32x4(v, _mm_loadu_ps((const float *)(p + s)), 1);
    v = _mm512_insertf32x4(v, _mm_loadu_ps((const float *)(p + 2 * s)), 2);
    return _mm512_insertf32x4(v, _mm_loadu_ps((const float *)(p + 3 * s)), 3);
}
JM_INLINE void jm_store_4_quads(char *p, ptrdiff_t s, __m512 v) {
    _mm_storeu_ps((float *)p, _mm512_castps512_ps128(v));
    _mm_storeu_ps((float *)(p + s), _mm512_extractf32x4_ps(v, 1));
    _mm_storeu_ps((float *)(p + 2 * s), _mm512_extractf32x4_ps(v, 2));
    _mm_storeu_ps((float *)(p + 3 * s), _mm512_extractf32x4_ps(v, 3));
}
/* 4x4 transpose inside every 128-bit lane */
JM_INLINE void jm_transpose_lanes(vf *a, vf *b, vf *c, vf *d) {
    __m512 t0 = _mm512_unpacklo_ps(*a, *b), t1 = _mm512_unpackhi_ps(*a, *b);
    __m512 t2 = _mm512_unpacklo_ps(*c, *d), t3 = _mm512_unpackhi_ps(*c, *d);
    *a = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2)));
    *b = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2)));
    *c = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
    *d = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
}
#elif JM_ISA == JM_ISA_AVX2
JM_INLINE __m256 jm_load_4_quads(const char *p, ptrdiff_t s) {
    /* low lane: record j, high lane: record 4 + j */
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps((const float *)p)),
                                _mm_loadu_ps((const float *)(p + 4 * s)), 1);
}
JM_INLINE void jm_store_4_quads(char *p, ptrdiff_t s, __m256 v) {
    _mm_storeu_ps((float *)p, _mm256_castps256_ps128(v));
    _mm_storeu_ps((float *)(p + 4 * s), _mm256_extractf128_ps(v, 1));
}
JM_INLINE void jm_transpose_lanes(vf *a, vf *b, vf *c, vf *d) {
    __m256 t0 = _mm256_unpacklo_ps(*a, *b), t1 = _mm256_unpackhi_ps(*a, *b);
    __m256 t2 = _mm256_unpacklo_ps(*c, *d), t3 = _mm256_unpackhi_ps(*c, *d);
    *a = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(t0), _mm256_castps_pd(t2)));
    *b = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(t0), _mm256_castps_pd(t2)));
    *c = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(t1), _mm256_castps_pd(t3)));
    *d = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(t1), _mm256_castps_pd(t3)));
}
#elif JM_ISA == JM_ISA_SSE
JM_INLINE __m128 jm_load_4_quads(const char *p, ptrdiff_t s) {
    (void)s;
    return _mm_loadu_ps((const float *)p);
}
JM_INLINE void jm_store_4_quads(char *p, ptrdiff_t s, __m128 v) {
    (void)s;
    _mm_storeu_ps((float *)p, v);
}
JM_INLINE void jm_transpose_lanes(vf *a, vf *b, vf *c, vf *d) { _MM_TRANSPOSE4_PS(*a, *b, *c, *d); }
#elif JM_ISA == JM_ISA_NEON
JM_INLINE float32x4_t jm_load_4_quads(const char *p, ptrdiff_t s) {
    (void)s;
    return vld1q_f32((const float *)p);
}
JM_INLINE void jm_store_4_quads(char *p, ptrdiff_t s, float32x4_t v) {
    (void)s;
    vst1q_f32((float *)p, v);
}
/* 32-bit transposes of the pairs, then 64-bit ones: a = a0 b0 c0 d0, ..., d = a3 b3 c3 d3 */
JM_INLINE float32x4_t jm_trn64(float32x4_t a, float32x4_t b, int second) {
    float64x2_t a64 = vreinterpretq_f64_f32(a), b64 = vreinterpretq_f64_f32(b);
    return vreinterpretq_f32_f64(second ? vtrn2q_f64(a64, b64) : vtrn1q_f64(a64, b64));
}
JM_INLINE void jm_transpose_lanes(vf *a, vf *b, vf *c, vf *d) {
    float32x4_t t0 = vtrn1q_f32(*a, *b), t1 = vtrn2q_f32(*a, *b); /* a0 b0 a2 b2, a1 b1 a3 b3 */
    float32x4_t t2 = vtrn1q_f32(*c, *d), t3 = vtrn2q_f32(*c, *d); /* c0 d0 c2 d2, c1 d1 c3 d3 */
    *a = jm_trn64(t0, t2, 0);
    *b = jm_trn64(t1, t3, 0);
    *c = jm_trn64(t0, t2, 1);
    *d = jm_trn64(t1, t3, 1);
}
#endif

#if JM_ISA == JM_ISA_SCALAR
JM_INLINE void v_load_quads(const char *base, ptrdiff_t stride, vf *c0, vf *c1, vf *c2, vf *c3) {
    float q[4];
    (void)stride;
    memcpy(q, base, sizeof q); /* memcpy: records may be unaligned */
    *c0 = q[0];
    *c1 = q[1];
    *c2 = q[2];
    *c3 = q[3];
}
JM_INLINE void v_store_quads(char *base, ptrdiff_t stride, vf c0, vf c1, vf c2, vf c3) {
    float q[4] = {c0, c1, c2, c3};
    (void)stride;
    memcpy(base, q, sizeof q);
}
#else
/* the four vectors that jm_transpose_lanes turns into components (AVX-512: records 4j.., else j..) */
#if JM_ISA == JM_ISA_AVX512
#define JM_GROUP_STEP 4
#else
#define JM_GROUP_STEP 1
#endif
JM_INLINE void v_load_quads(const char *base, ptrdiff_t stride, vf *c0, vf *c1, vf *c2, vf *c3) {
#if JM_ISA == JM_ISA_NEON
    if (stride == 16) { /* packed quads: one de-interleaving load does the transpose */
        float32x4x4_t v = vld4q_f32((const float *)base);
        *c0 = v.val[0];
        *c1 = v.val[1];
        *c2 = v.val[2];
        *c3 = v.val[3];
        return;
    }
#endif
    vf r0 = jm_load_4_quads(base, stride);
    vf r1 = jm_load_4_quads(base + JM_GROUP_STEP * stride, stride);
    vf r2 = jm_load_4_quads(base + 2 * JM_GROUP_STEP * stride, stride);
    vf r3 = jm_load_4_quads(base + 3 * JM_GROUP_STEP * stride, stride);
    jm_transpose_lanes(&r0, &r1, &r2, &r3);
    *c0 = r0;
    *c1 = r1;
    *c2 = r2;
    *c3 = r3;
}
JM_INLINE void v_store_quads(char *base, ptrdiff_t stride, vf c0, vf c1, vf c2, vf c3) {
#if JM_ISA == JM_ISA_NEON
    if (stride == 16) {
        float32x4x4_t v = {{c0, c1, c2, c3}};
        vst4q_f32((float *)base, v);
        return;
    }
#endif
    jm_transpose_lanes(&c0, &c1, &c2, &c3);
    jm_store_4_quads(base, stride, c0);
    jm_store_4_quads(base + JM_GROUP_STEP * stride, stride, c1);
    jm_store_4_quads(base + 2 * JM_GROUP_STEP * stride, stride, c2);
    jm_store_4_quads(base + 3 * JM_GROUP_STEP * stride, stride, c3);
}
#endif

/*
 * Indexed and untransposed quad access. Lane i belongs to the record at base + idx[i] * stride
 * (idx = NULL: base + i * stride); the index is read with plain loads, never a gather/scatter.
 *
 * v_load_quads_idx / v_store_quads_idx: as v_load_quads / v_store_quads for those records.
 * v_load_quads_lanewise / v_store_quads_lanewise: the same quads NOT transposed (no shuffles):
 * the four vectors hold the JM_W quads in a fixed arrangement, so only lane-wise arithmetic
 * between vectors loaded the same way is meaningful (a lerp of translations); the store puts
 * every float back where the load found it.
 */
#define JM_REC(base, stride, idx, i) ((base) + ((idx) ? (ptrdiff_t)(idx)[i] : (ptrdiff_t)(i)) * (stride))

#if JM_ISA == JM_ISA_AVX512
/* 128-bit lane L holds the quad of the record of lane 4L + j */
JM_INLINE __m512 jm_load_4_quads_idx(const char *b, ptrdiff_t s, const intptr_t *idx, int j) {
    __m512 v = _mm512_castps128_ps512(_mm_loadu_ps((const float *)JM_REC(b, s, idx, j)));
    v = _mm512_insertf32x4(v, _mm_loadu_ps((const float *)JM_REC(b, s, idx, j + 4)), 1);
    v = _mm512_insertf32x4(v, _mm_loadu_ps((const float *)JM_REC(b, s, idx, j + 8)), 2);
    return _mm512_insertf32x4(v, _mm_loadu_ps((const float *)JM_REC(b, s, idx, j + 12)), 3);
}
JM_INLINE void jm_store_4_quads_idx(char *b, ptrdiff_t s, const intptr_t *idx, int j, __m512 v) {
    _mm_storeu_ps((float *)JM_REC(b, s, idx, j), _mm512_castps512_ps128(v));
    _mm_storeu_ps((float *)JM_REC(b, s, idx, j + 4), _mm512_extractf32x4_ps(v, 1));
    _mm_storeu_ps((float *)JM_REC(b, s, idx, j + 8), _mm512_extractf32x4_ps(v, 2));
    _mm_storeu_ps((float *)JM_REC(b, s, idx, j + 12), _mm512_extractf32x4_ps(v, 3));
}
#elif JM_ISA == JM_ISA_AVX2
JM_INLINE __m256 jm_load_4_quads_idx(const char *b, ptrdiff_t s, const intptr_t *idx, int j) {
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps((const float *)JM_REC(b, s, idx, j))),
                                _mm_loadu_ps((const float *)JM_REC(b, s, idx, j + 4)), 1);
}
JM_INLINE void jm_store_4_quads_idx(char *b, ptrdiff_t s, const intptr_t *idx, int j, __m256 v) {
    _mm_storeu_ps((float *)JM_REC(b, s, idx, j), _mm256_castps256_ps128(v));
    _mm_storeu_ps((float *)JM_REC(b, s, idx, j + 4), _mm256_extractf128_ps(v, 1));
}
#elif JM_ISA == JM_ISA_SSE
JM_INLINE __m128 jm_load_4_quads_idx(const char *b, ptrdiff_t s, const intptr_t *idx, int j) {
    return _mm_loadu_ps((const float *)JM_REC(b, s, idx, j));
}
JM_INLINE void jm_store_4_quads_idx(char *b, ptrdiff_t s, const intptr_t *idx, int j, __m128 v) {
    _mm_storeu_ps((float *)JM_REC(b, s, idx, j), v);
}
#elif JM_ISA == JM_ISA_NEON
JM_INLINE float32x4_t jm_load_4_quads_idx(const char *b, ptrdiff_t s, const intptr_t *idx, int j) {
    return vld1q_f32((const float *)JM_REC(b, s, idx, j));
}
JM_INLINE void jm_store_4_quads_idx(char *b, ptrdiff_t s, const intptr_t *idx, int j, float32x4_t v) {
    vst1q_f32((float *)JM_REC(b, s, idx, j), v);
}
#endif

#if JM_ISA == JM_ISA_SCALAR
JM_INLINE void v_load_quads_idx(const char *base, ptrdiff_t stride, const intptr_t *idx, vf *c0, vf *c1, vf *c2,
                                vf *c3) {
    v_load_quads(JM_REC(base, stride, idx, 0), stride, c0, c1, c2, c3);
}
JM_INLINE void v_store_quads_idx(char *base, ptrdiff_t stride, const intptr_t *idx, vf c0, vf c1, vf c2, vf c3) {
    v_store_quads(JM_REC(base, stride, idx, 0), stride, c0, c1, c2, c3);
}
/* one lane: transposed and untransposed are the same thing */
JM_INLINE void v_load_quads_lanewise(const char *base, ptrdiff_t stride, const intptr_t *idx, vf *c0, vf *c1,
                                     vf *c2, vf *c3) {
    v_load_quads_idx(base, stride, idx, c0, c1, c2, c3);
}
JM_INLINE void v_store_quads_lanewise(char *base, ptrdiff_t stride, const intptr_t *idx, vf c0, vf c1, vf c2,
                                      vf c3) {
    v_store_quads_idx(base, stride, idx, c0, c1, c2, c3);
}
#else
JM_INLINE void v_load_quads_lanewise(const char *base, ptrdiff_t stride, const intptr_t *idx, vf *c0, vf *c1,
                                     vf *c2, vf *c3) {
    *c0 = jm_load_4_quads_idx(base, stride, idx, 0);
    *c1 = jm_load_4_quads_idx(base, stride, idx, 1);
    *c2 = jm_load_4_quads_idx(base, stride, idx, 2);
    *c3 = jm_load_4_quads_idx(base, stride, idx, 3);
}
JM_INLINE void v_store_quads_lanewise(char *base, ptrdiff_t stride, const intptr_t *idx, vf c0, vf c1, vf c2,
                                      vf c3) {
    jm_store_4_quads_idx(base, stride, idx, 0, c0);
    jm_store_4_quads_idx(base, stride, idx, 1, c1);
    jm_store_4_quads_idx(base, stride, idx, 2, c2);
    jm_store_4_quads_idx(base, stride, idx, 3, c3);
}
JM_INLINE void v_load_quads_idx(const char *base, ptrdiff_t stride, const intptr_t *idx, vf *c0, vf *c1, vf *c2,
                                vf *c3) {
    v_load_quads_lanewise(base, stride, idx, c0, c1, c2, c3);
    jm_transpose_lanes(c0, c1, c2, c3);
}
JM_INLINE void v_store_quads_idx(char *base, ptrdiff_t stride, const intptr_t *idx, vf c0, vf c1, vf c2, vf c3) {
    jm_transpose_lanes(&c0, &c1, &c2, &c3);
    v_store_quads_lanewise(base, stride, idx, c0, c1, c2, c3);
}
#endif

/*
 * 32-byte records of two quads ("octs", a joint's q and t): v_load_octs gives the FIRST quad of
 * JM_W records transposed (head[k] lane i = float k of the record of lane i, as
 * v_load_quads_idx) and the records in a raw form, JM_OCT_RAW vectors holding at least every
 * SECOND quad in a fixed lane-wise arrangement (on AVX-512 the whole records, read with full
 * 512-bit loads when they are contiguous: the transposition then costs 12 permutes per 16
 * records instead of 20 inserts and shuffles; on AVX2 one 256-bit load per record). Only
 * lane-wise arithmetic between raw forms loaded the same way is meaningful. v_store_octs writes
 * the records back: first quad from head (transposed), second quad from raw. Records as in
 * v_load_quads_idx (idx may be NULL).
 */
#if JM_ISA == JM_ISA_AVX512
#define JM_OCT_RAW 8
typedef struct { vf v[JM_OCT_RAW]; } voct; /* v[k]: the records of lanes 2k and 2k + 1 */

/* permute indices: four runs of four consecutive indices, starting at a0, a1, a2, a3 */
JM_INLINE __m512i jm_runs4(int a0, int a1, int a2, int a3) {
    return _mm512_setr_epi32(a0, a0 + 1, a0 + 2, a0 + 3, a1, a1 + 1, a1 + 2, a1 + 3, a2, a2 + 1, a2 + 2, a2 + 3, a3,
                             a3 + 1, a3 + 2, a3 + 3);
}

JM_INLINE void v_load_octs(const char *base, ptrdiff_t stride, const intptr_t *idx, vf head[4], voct *raw) {
    for (int k = 0; k < 8; k++) {
        if (!idx && stride == 32)
            raw->v[k] = _mm512_loadu_ps((const float *)(base + 64 * k));
        else
            raw->v[k] = _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_loadu_ps((const float *)JM_REC(base, stride, idx, 2 * k))),
                                           _mm256_loadu_ps((const float *)JM_REC(base, stride, idx, 2 * k + 1)), 1);
    }
    /* s[j] = x, y, z, w (four floats each) of records 4j .. 4j+3 */
    const __m512i pick_q = _mm512_setr_epi32(0, 8, 16, 24, 1, 9, 17, 25, 2, 10, 18, 26, 3, 11, 19, 27);
    vf s[4];
    for (int j = 0; j < 4; j++)
        s[j] = _mm512_permutex2var_ps(raw->v[2 * j], pick_q, raw->v[2 * j + 1]);
    /* t0 = x, y of records 0..7; t1 = z, w of 0..7; t2, t3 the same of 8..15 */
    const __m512i lo_pairs = jm_runs4(0, 16, 4, 20), hi_pairs = jm_runs4(8, 24, 12, 28);
    vf t0 = _mm512_permutex2var_ps(s[0], lo_pairs, s[1]), t1 = _mm512_permutex2var_ps(s[0], hi_pairs, s[1]);
    vf t2 = _mm512_permutex2var_ps(s[2], lo_pairs, s[3]), t3 = _mm512_permutex2var_ps(s[2], hi_pairs, s[3]);
    const __m512i first_halves = jm_runs4(0, 4, 16, 20), second_halves = jm_runs4(8, 12, 24, 28);
    head[0] = _mm512_permutex2var_ps(t0, first_halves, t2);
    head[1] = _mm512_permutex2var_ps(t0, second_halves, t2);
    head[2] = _mm512_permutex2var_ps(t1, first_halves, t3);
    head[3] = _mm512_permutex2var_ps(t1, second_halves, t3);
}

JM_INLINE void v_store_octs(char *base, ptrdiff_t stride, const intptr_t *idx, const vf head[4], const voct *raw) {
    /* the inverse of v_load_octs' permutes */
    const __m512i first_halves = jm_runs4(0, 4, 16, 20), second_halves = jm_runs4(8, 12, 24, 28);
    vf t0 = _mm512_permutex2var_ps(head[0], first_halves, head[1]);  /* x, y of records 0..7 */
    vf t1 = _mm512_permutex2var_ps(head[2], first_halves, head[3]);  /* z, w of 0..7 */
    vf t2 = _mm512_permutex2var_ps(head[0], second_halves, head[1]); /* x, y of 8..15 */
    vf t3 = _mm512_permutex2var_ps(head[2], second_halves, head[3]);
    const __m512i lo_quads = jm_runs4(0, 8, 16, 24), hi_quads = jm_runs4(4, 12, 20, 28);
    vf s[4] = {_mm512_permutex2var_ps(t0, lo_quads, t1), _mm512_permutex2var_ps(t0, hi_quads, t1),
               _mm512_permutex2var_ps(t2, lo_quads, t3), _mm512_permutex2var_ps(t2, hi_quads, t3)};
    /* record pair k: q of record 2k (s lanes 4c + 0 or 2), its t, q of record 2k + 1, its t */
    const __m512i even = _mm512_setr_epi32(0, 4, 8, 12, 20, 21, 22, 23, 1, 5, 9, 13, 28, 29, 30, 31);
    const __m512i odd = _mm512_setr_epi32(2, 6, 10, 14, 20, 21, 22, 23, 3, 7, 11, 15, 28, 29, 30, 31);
    for (int k = 0; k < 8; k++) {
        vf v = _mm512_permutex2var_ps(s[k / 2], k % 2 ? odd : even, raw->v[k]);
        if (!idx && stride == 32) {
            _mm512_storeu_ps((float *)(base + 64 * k), v);
        } else {
            _mm256_storeu_ps((float *)JM_REC(base, stride, idx, 2 * k), _mm512_castps512_ps256(v));
            _mm256_storeu_ps((float *)JM_REC(base, stride, idx, 2 * k + 1), _mm512_extractf32x8_ps(v, 1));
        }
    }
}
#elif JM_ISA == JM_ISA_AVX2
#define JM_OCT_RAW 4
typedef struct { vf v[JM_OCT_RAW]; } voct; /* v[j]: the second quads of records j and j + 4 */

/* one 256-bit load per record, records j and j + 4 split into quads by two 128-bit permutes
   (one quad at a time, 16 loads and 16 inserts per 8 records: fewer registers left for the
   index offsets, and indexed blocks ~5 % slower, measured side by side). Records a constant
   stride apart other than 32 bytes (every_second_joint_block's stride of two records, strided
   lists) load one quad at a time: every second joint of 1,024 with a separate out went from
   0.63-0.68 to 0.59-0.62 of the full call on avx2 and from 0.59-0.77 to 0.56-0.71 on avx512 (its
   AVX2 kernel), the other indexes unchanged, at four placements of the lists
   (partial_body_kernels.sh, OFFSET 0, 48,0,16, 16,32,48, 32,48,0, 41 rounds, an AMD Zen 4); the
   stores one quad at a time too gave back a third of that */
JM_INLINE void v_load_octs(const char *base, ptrdiff_t stride, const intptr_t *idx, vf head[4], voct *raw) {
    for (int j = 0; j < 4; j++) {
        const float *lo = (const float *)JM_REC(base, stride, idx, j);
        const float *hi = (const float *)JM_REC(base, stride, idx, j + 4);
        if (idx || stride == 32) {
            __m256 first = _mm256_loadu_ps(lo), second = _mm256_loadu_ps(hi);
            head[j] = _mm256_permute2f128_ps(first, second, 0x20);
            raw->v[j] = _mm256_permute2f128_ps(first, second, 0x31);
        } else {
            head[j] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(lo)), _mm_loadu_ps(hi), 1);
            raw->v[j] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(lo + 4)), _mm_loadu_ps(hi + 4), 1);
        }
    }
    jm_transpose_lanes(&head[0], &head[1], &head[2], &head[3]);
}

JM_INLINE void v_store_octs(char *base, ptrdiff_t stride, const intptr_t *idx, const vf head[4], const voct *raw) {
    vf q[4] = {head[0], head[1], head[2], head[3]};
    jm_transpose_lanes(&q[0], &q[1], &q[2], &q[3]);
    for (int j = 0; j < 4; j++) {
        _mm256_storeu_ps((float *)JM_REC(base, stride, idx, j), _mm256_permute2f128_ps(q[j], raw->v[j], 0x20));
        _mm256_storeu_ps((float *)JM_REC(base, stride, idx, j + 4), _mm256_permute2f128_ps(q[j], raw->v[j], 0x31));
    }
}
#else
#define JM_OCT_RAW 4
typedef struct { vf v[JM_OCT_RAW]; } voct; /* the second quads, v_load_quads_lanewise */

JM_INLINE void v_load_octs(const char *base, ptrdiff_t stride, const intptr_t *idx, vf head[4], voct *raw) {
    v_load_quads_idx(base, stride, idx, &head[0], &head[1], &head[2], &head[3]);
    v_load_quads_lanewise(base + 16, stride, idx, &raw->v[0], &raw->v[1], &raw->v[2], &raw->v[3]);
}

JM_INLINE void v_store_octs(char *base, ptrdiff_t stride, const intptr_t *idx, const vf head[4], const voct *raw) {
    v_store_quads_idx(base, stride, idx, head[0], head[1], head[2], head[3]);
    v_store_quads_lanewise(base + 16, stride, idx, raw->v[0], raw->v[1], raw->v[2], raw->v[3]);
}
#endif

/* jm_copy_record32: one 32-byte record from src to dst; with AVX a single 256-bit move (memcpy
   of 32 bytes compiles to two 128-bit moves under the generic tuning: the indexed slerp's copy
   of the unselected joints was ~10 % slower that way, measured). */
JM_INLINE void jm_copy_record32(char *dst, const char *src) {
#if JM_ISA == JM_ISA_AVX2 || JM_ISA == JM_ISA_AVX512
    _mm256_storeu_ps((float *)dst, _mm256_loadu_ps((const float *)src));
#else
    memcpy(dst, src, 32);
#endif
}

/*
 * v_load_records / v_store_records: whole records of `quads` quads (1, 2 or 3: float[4],
 * JOINT_QUAT, JOINT_MAT); c[4k + e] holds float e of quad k. The same as v_load_quads per quad,
 * but on AVX-512 packed records (stride == 16 * quads) move as full 512-bit vectors rearranged
 * by 128-bit block permutes: far fewer shuffles and stores than one quad at a time.
 */
#if JM_ISA == JM_ISA_AVX512
/* index vector picking 128-bit blocks b0..b3 (0-3 from the first source, 4-7 the second) */
#define JM_BLOCKS(b0, b1, b2, b3)                                                                \
    _mm512_set_epi32(4 * (b3) + 3, 4 * (b3) + 2, 4 * (b3) + 1, 4 * (b3), 4 * (b2) + 3, 4 * (b2) + 2, \
                     4 * (b2) + 1, 4 * (b2), 4 * (b1) + 3, 4 * (b1) + 2, 4 * (b1) + 1, 4 * (b1),     \
                     4 * (b0) + 3, 4 * (b0) + 2, 4 * (b0) + 1, 4 * (b0))
#define JM_LANES_OF_BLOCK(b) ((__mmask16)(0xF << (4 * (b))))

/* group j of packed records: r[k] = quad k of records 4j .. 4j+3 (128-bit lane L = record 4j+L) */
JM_INLINE void jm_load_packed_group(const char *p, int quads, __m512 r[3]) {
    const float *f = (const float *)p;
    if (quads == 1) {
        r[0] = _mm512_loadu_ps(f);
    } else if (quads == 2) { /* [Q0 T0 Q1 T1] [Q2 T2 Q3 T3] */
        __m512 a = _mm512_loadu_ps(f), b = _mm512_loadu_ps(f + 16);
        r[0] = _mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(2, 0, 2, 0));
        r[1] = _mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(3, 1, 3, 1));
    } else { /* [A0 B0 C0 A1] [B1 C1 A2 B2] [C2 A3 B3 C3] */
        __m512 l0 = _mm512_loadu_ps(f), l1 = _mm512_loadu_ps(f + 16), l2 = _mm512_loadu_ps(f + 32);
        __m512 a = _mm512_permutex2var_ps(l0, JM_BLOCKS(0, 3, 6, 0), l1);
        __m512 b = _mm512_permutex2var_ps(l0, JM_BLOCKS(1, 4, 7, 0), l1);
        __m512 c = _mm512_permutex2var_ps(l1, JM_BLOCKS(0, 1, 4, 7), l2);
        r[0] = _mm512_mask_shuffle_f32x4(a, JM_LANES_OF_BLOCK(3), l2, l2, _MM_SHUFFLE(1, 0, 0, 0));
        r[1] = _mm512_mask_shuffle_f32x4(b, JM_LANES_OF_BLOCK(3), l2, l2, _MM_SHUFFLE(2, 0, 0, 0));
        r[2] = _mm512_mask_shuffle_f32x4(c, JM_LANES_OF_BLOCK(0), l0, l0, _MM_SHUFFLE(0, 0, 0, 2));
    }
}

JM_INLINE void jm_store_packed_group(char *p, int quads, const __m512 r[3]) {
    float *f = (float *)p;
    if (quads == 1) {
        _mm512_storeu_ps(f, r[0]);
    } else if (quads == 2) {
        _mm512_storeu_ps(f, _mm512_permutex2var_ps(r[0], JM_BLOCKS(0, 4, 1, 5), r[1]));
        _mm512_storeu_ps(f + 16, _mm512_permutex2var_ps(r[0], JM_BLOCKS(2, 6, 3, 7), r[1]));
    } else {
        __m512 l0 = _mm512_permutex2var_ps(r[0], JM_BLOCKS(0, 4, 0, 1), r[1]);
        __m512 l1 = _mm512_permutex2var_ps(r[1], JM_BLOCKS(1, 5, 0, 2), r[2]);
        __m512 l2 = _mm512_permutex2var_ps(r[0], JM_BLOCKS(0, 3, 7, 0), r[1]);
        _mm512_storeu_ps(f, _mm512_mask_shuffle_f32x4(l0, JM_LANES_OF_BLOCK(2), r[2], r[2], _MM_SHUFFLE(0, 0, 0, 0)));
        _mm512_storeu_ps(f + 16, _mm512_mask_shuffle_f32x4(l1, JM_LANES_OF_BLOCK(2), r[0], r[0], _MM_SHUFFLE(0, 2, 0, 0)));
        _mm512_storeu_ps(f + 32, _mm512_mask_shuffle_f32x4(l2, JM_LANES_OF_BLOCK(0) | JM_LANES_OF_BLOCK(3), r[2], r[2],
                                                           _MM_SHUFFLE(3, 0, 0, 2)));
    }
}
#endif

JM_INLINE void v_load_records(const char *base, ptrdiff_t stride, int quads, vf *c) {
#if JM_ISA == JM_ISA_AVX512
    if (stride == 16 * quads) {
        __m512 g[4][3];
        for (int j = 0; j < 4; j++)
            jm_load_packed_group(base + 4 * j * stride, quads, g[j]);
        for (int k = 0; k < quads; k++) {
            jm_transpose_lanes(&g[0][k], &g[1][k], &g[2][k], &g[3][k]);
            for (int j = 0; j < 4; j++)
                c[4 * k + j] = g[j][k];
        }
        return;
    }
#endif
    for (int k = 0; k < quads; k++)
        v_load_quads(base + 16 * k, stride, &c[4 * k], &c[4 * k + 1], &c[4 * k + 2], &c[4 * k + 3]);
}

JM_INLINE void v_store_records(char *base, ptrdiff_t stride, int quads, const vf *c) {
#if JM_ISA == JM_ISA_AVX512
    if (stride == 16 * quads) {
        __m512 g[4][3];
        for (int k = 0; k < quads; k++) {
            for (int j = 0; j < 4; j++)
                g[j][k] = c[4 * k + j];
            jm_transpose_lanes(&g[0][k], &g[1][k], &g[2][k], &g[3][k]);
        }
        for (int j = 0; j < 4; j++)
            jm_store_packed_group(base + 4 * j * stride, quads, g[j]);
        return;
    }
#endif
    for (int k = 0; k < quads; k++)
        v_store_quads(base + 16 * k, stride, c[4 * k], c[4 * k + 1], c[4 * k + 2], c[4 * k + 3]);
}

/* ------------------------------------------------------------ 32-bit integers -- */
/*
 * vi: JM_W 32-bit integer lanes, for bit packing. v_round_int rounds to nearest, ties to even
 * (the default MXCSR mode on x86, vcvtnq on NEON, lrintf on the scalar path), so every path
 * produces the same integers from the same floats. vi_shl / vi_shr are logical shifts; vi_add wraps.
 * v_load_u32 / v_store_u32 move JM_W consecutive uint32 to and from the lanes of the records they
 * belong to (the lane order of v_load_quads: a permutation on AVX-512, the identity elsewhere);
 * v_store_u64 writes JM_W consecutive uint64, record k's from lane k of lo (bits 31..0) and hi
 * (bits 63..32), in the same lane order.
 */
#if JM_ISA == JM_ISA_AVX512
typedef __m512i vi;
JM_INLINE vi vi_set1(int32_t a) { return _mm512_set1_epi32(a); }
JM_INLINE vi v_round_int(vf a) { return _mm512_cvtps_epi32(a); }
JM_INLINE vf v_from_int(vi a) { return _mm512_cvtepi32_ps(a); }
JM_INLINE vi vi_or(vi a, vi b) { return _mm512_or_si512(a, b); }
JM_INLINE vi vi_and(vi a, vi b) { return _mm512_and_si512(a, b); }
JM_INLINE vi vi_add(vi a, vi b) { return _mm512_add_epi32(a, b); }
JM_INLINE vi vi_shl(vi a, unsigned n) { return _mm512_slli_epi32(a, n); }
JM_INLINE vi vi_shr(vi a, unsigned n) { return _mm512_srli_epi32(a, n); }
JM_INLINE vmask vi_eq(vi a, vi b) { return _mm512_cmpeq_epi32_mask(a, b); }
JM_INLINE vi vi_select(vmask m, vi a, vi b) { return _mm512_mask_blend_epi32(m, b, a); }
JM_INLINE int m_count(vmask m) { return jm_popcount(m); }
/* lane 4L + j <-> record 4j + L: the 4x4 index transpose, its own inverse */
JM_INLINE __m512i jm_record_order(void) {
    return _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
}
JM_INLINE vi v_load_u32(const char *p) { return _mm512_permutexvar_epi32(jm_record_order(), _mm512_loadu_si512(p)); }
JM_INLINE void v_store_u32(char *p, vi a) { _mm512_storeu_si512(p, _mm512_permutexvar_epi32(jm_record_order(), a)); }
JM_INLINE void v_store_u64(char *p, vi lo, vi hi) {
    /* dwords 2r, 2r + 1 of records r and r + 8: lo and hi (indices + 16) of lane 4 (r % 4) + r / 4 */
    const __m512i first = _mm512_setr_epi32(0, 16, 4, 20, 8, 24, 12, 28, 1, 17, 5, 21, 9, 25, 13, 29);
    const __m512i second = _mm512_setr_epi32(2, 18, 6, 22, 10, 26, 14, 30, 3, 19, 7, 23, 11, 27, 15, 31);
    _mm512_storeu_si512(p, _mm512_permutex2var_epi32(lo, first, hi));
    _mm512_storeu_si512(p + 64, _mm512_permutex2var_epi32(lo, second, hi));
}
#elif JM_ISA == JM_ISA_AVX2
typedef __m256i vi;
JM_INLINE vi vi_set1(int32_t a) { return _mm256_set1_epi32(a); }
JM_INLINE vi v_round_int(vf a) { return _mm256_cvtps_epi32(a); }
JM_INLINE vf v_from_int(vi a) { return _mm256_cvtepi32_ps(a); }
JM_INLINE vi vi_or(vi a, vi b) { return _mm256_or_si256(a, b); }
JM_INLINE vi vi_and(vi a, vi b) { return _mm256_and_si256(a, b); }
JM_INLINE vi vi_add(vi a, vi b) { return _mm256_add_epi32(a, b); }
JM_INLINE vi vi_shl(vi a, unsigned n) { return _mm256_slli_epi32(a, (int)n); }
JM_INLINE vi vi_shr(vi a, unsigned n) { return _mm256_srli_epi32(a, (int)n); }
JM_INLINE vmask vi_eq(vi a, vi b) { return _mm256_castsi256_ps(_mm256_cmpeq_epi32(a, b)); }
JM_INLINE vi vi_select(vmask m, vi a, vi b) { return _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(b), _mm256_castsi256_ps(a), m)); }
JM_INLINE int m_count(vmask m) { return jm_popcount((unsigned)_mm256_movemask_ps(m)); }
JM_INLINE vi v_load_u32(const char *p) { return _mm256_loadu_si256((const __m256i *)p); }
JM_INLINE void v_store_u32(char *p, vi a) { _mm256_storeu_si256((__m256i *)p, a); }
JM_INLINE void v_store_u64(char *p, vi lo, vi hi) {
    __m256i records_0145 = _mm256_unpacklo_epi32(lo, hi), records_2367 = _mm256_unpackhi_epi32(lo, hi);
    _mm256_storeu_si256((__m256i *)p, _mm256_permute2x128_si256(records_0145, records_2367, 0x20));
    _mm256_storeu_si256((__m256i *)(p + 32), _mm256_permute2x128_si256(records_0145, records_2367, 0x31));
}
#elif JM_ISA == JM_ISA_SSE
typedef __m128i vi;
JM_INLINE vi vi_set1(int32_t a) { return _mm_set1_epi32(a); }
JM_INLINE vi v_round_int(vf a) { return _mm_cvtps_epi32(a); }
JM_INLINE vf v_from_int(vi a) { return _mm_cvtepi32_ps(a); }
JM_INLINE vi vi_or(vi a, vi b) { return _mm_or_si128(a, b); }
JM_INLINE vi vi_and(vi a, vi b) { return _mm_and_si128(a, b); }
JM_INLINE vi vi_add(vi a, vi b) { return _mm_add_epi32(a, b); }
JM_INLINE vi vi_shl(vi a, unsigned n) { return _mm_slli_epi32(a, (int)n); }
JM_INLINE vi vi_shr(vi a, unsigned n) { return _mm_srli_epi32(a, (int)n); }
JM_INLINE vmask vi_eq(vi a, vi b) { return _mm_castsi128_ps(_mm_cmpeq_epi32(a, b)); }
JM_INLINE vi vi_select(vmask m, vi a, vi b) { return _mm_castps_si128(_mm_blendv_ps(_mm_castsi128_ps(b), _mm_castsi128_ps(a), m)); }
JM_INLINE int m_count(vmask m) { return jm_popcount((unsigned)_mm_movemask_ps(m)); }
JM_INLINE vi v_load_u32(const char *p) { return _mm_loadu_si128((const __m128i *)p); }
JM_INLINE void v_store_u32(char *p, vi a) { _mm_storeu_si128((__m128i *)p, a); }
JM_INLINE void v_store_u64(char *p, vi lo, vi hi) {
    _mm_storeu_si128((__m128i *)p, _mm_unpacklo_epi32(lo, hi));
    _mm_storeu_si128((__m128i *)(p + 16), _mm_unpackhi_epi32(lo, hi));
}
#elif JM_ISA == JM_ISA_NEON
typedef uint32x4_t vi;
JM_INLINE vi vi_set1(int32_t a) { return vdupq_n_u32((uint32_t)a); }
JM_INLINE vi v_round_int(vf a) { return vreinterpretq_u32_s32(vcvtnq_s32_f32(a)); }
JM_INLINE vf v_from_int(vi a) { return vcvtq_f32_s32(vreinterpretq_s32_u32(a)); }
JM_INLINE vi vi_or(vi a, vi b) { return vorrq_u32(a, b); }
JM_INLINE vi vi_and(vi a, vi b) { return vandq_u32(a, b); }
JM_INLINE vi vi_add(vi a, vi b) { return vaddq_u32(a, b); }
/* USHL by a vector of the count (negative: right), a constant hoisted out of loops after inlining */
JM_INLINE vi vi_shl(vi a, unsigned n) { return vshlq_u32(a, vdupq_n_s32((int32_t)n)); }
JM_INLINE vi vi_shr(vi a, unsigned n) { return vshlq_u32(a, vdupq_n_s32(-(int32_t)n)); }
JM_INLINE vmask vi_eq(vi a, vi b) { return vceqq_u32(a, b); }
JM_INLINE vi vi_select(vmask m, vi a, vi b) { return vbslq_u32(m, a, b); }
JM_INLINE int m_count(vmask m) { return (int)vaddvq_u32(vshrq_n_u32(m, 31)); }
JM_INLINE vi v_load_u32(const char *p) { return vld1q_u32((const uint32_t *)p); }
JM_INLINE void v_store_u32(char *p, vi a) { vst1q_u32((uint32_t *)p, a); }
JM_INLINE void v_store_u64(char *p, vi lo, vi hi) {
    vst1q_u32((uint32_t *)p, vzip1q_u32(lo, hi));
    vst1q_u32((uint32_t *)(p + 16), vzip2q_u32(lo, hi));
}
#else
typedef uint32_t vi;
JM_INLINE vi vi_set1(int32_t a) { return (uint32_t)a; }
JM_INLINE vi v_round_int(vf a) { return (uint32_t)(int32_t)lrintf(a); }
JM_INLINE vf v_from_int(vi a) { return (float)(int32_t)a; }
JM_INLINE vi vi_or(vi a, vi b) { return a | b; }
JM_INLINE vi vi_and(vi a, vi b) { return a & b; }
JM_INLINE vi vi_add(vi a, vi b) { return a + b; }
JM_INLINE vi vi_shl(vi a, unsigned n) { return a << n; }
JM_INLINE vi vi_shr(vi a, unsigned n) { return a >> n; }
JM_INLINE vmask vi_eq(vi a, vi b) { return a == b; }
JM_INLINE vi vi_select(vmask m, vi a, vi b) { return m ? a : b; }
JM_INLINE int m_count(vmask m) { return m != 0; }
JM_INLINE vi v_load_u32(const char *p) {
    uint32_t a;
    memcpy(&a, p, sizeof a);
    return a;
}
JM_INLINE void v_store_u32(char *p, vi a) { memcpy(p, &a, sizeof a); }
JM_INLINE void v_store_u64(char *p, vi lo, vi hi) {
    uint64_t a = (uint64_t)hi << 32 | lo;
    memcpy(p, &a, sizeof a);
}
#endif

/*
 * round(a * (b / c)) for floats a, b, c (c non-zero, the result below 2^31 in magnitude), with
 * *rest = q - round(q) for the value q computed in double: b / c rounded once, times a rounded
 * once, so |q - a b / c| <= 2^-52 |a b / c| (also for denormal inputs, which double holds as
 * normal numbers). round is to nearest, ties to even (an explicit rounding on the SIMD paths,
 * lrint in the default rounding mode on the scalar one); q - round(q) is exact in double and
 * then rounded to float, so |*rest| <= 1/2. Every path performs the same double operations: the
 * results are bit-identical. Calls that share b and c share the division (the compiler merges
 * the identical divisions of the inlined calls).
 */
#if JM_ISA == JM_ISA_AVX512
JM_INLINE __m256i jm_round_quotient_pd(__m256 a, __m256 b, __m256 c, __m256 *rest) {
    __m512d q = _mm512_mul_pd(_mm512_cvtps_pd(a), _mm512_div_pd(_mm512_cvtps_pd(b), _mm512_cvtps_pd(c)));
    __m512d rounded = _mm512_roundscale_pd(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    *rest = _mm512_cvtpd_ps(_mm512_sub_pd(q, rounded));
    return _mm512_cvtpd_epi32(rounded);
}
JM_INLINE vi v_round_quotient(vf a, vf b, vf c, vf *rest) {
    __m256 rest_lo, rest_hi;
    __m256i lo = jm_round_quotient_pd(_mm512_castps512_ps256(a), _mm512_castps512_ps256(b), _mm512_castps512_ps256(c),
                                      &rest_lo);
    __m256i hi = jm_round_quotient_pd(_mm512_extractf32x8_ps(a, 1), _mm512_extractf32x8_ps(b, 1),
                                      _mm512_extractf32x8_ps(c, 1), &rest_hi);
    *rest = _mm512_insertf32x8(_mm512_castps256_ps512(rest_lo), rest_hi, 1);
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}
#elif JM_ISA == JM_ISA_AVX2
JM_INLINE __m128i jm_round_quotient_pd(__m128 a, __m128 b, __m128 c, __m128 *rest) {
    __m256d q = _mm256_mul_pd(_mm256_cvtps_pd(a), _mm256_div_pd(_mm256_cvtps_pd(b), _mm256_cvtps_pd(c)));
    __m256d rounded = _mm256_round_pd(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    *rest = _mm256_cvtpd_ps(_mm256_sub_pd(q, rounded));
    return _mm256_cvtpd_epi32(rounded);
}
JM_INLINE vi v_round_quotient(vf a, vf b, vf c, vf *rest) {
    __m128 rest_lo, rest_hi;
    __m128i lo = jm_round_quotient_pd(_mm256_castps256_ps128(a), _mm256_castps256_ps128(b), _mm256_castps256_ps128(c),
                                      &rest_lo);
    __m128i hi = jm_round_quotient_pd(_mm256_extractf128_ps(a, 1), _mm256_extractf128_ps(b, 1),
                                      _mm256_extractf128_ps(c, 1), &rest_hi);
    *rest = _mm256_insertf128_ps(_mm256_castps128_ps256(rest_lo), rest_hi, 1);
    return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}
#elif JM_ISA == JM_ISA_SSE
/* lanes 0-1 of each argument (the caller moves lanes 2-3 down first); the two integers and
   rests land in lanes 0-1 */
JM_INLINE __m128i jm_round_quotient_pd(__m128 a, __m128 b, __m128 c, __m128 *rest) {
    __m128d q = _mm_mul_pd(_mm_cvtps_pd(a), _mm_div_pd(_mm_cvtps_pd(b), _mm_cvtps_pd(c)));
    __m128d rounded = _mm_round_pd(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    *rest = _mm_cvtpd_ps(_mm_sub_pd(q, rounded));
    return _mm_cvtpd_epi32(rounded);
}
JM_INLINE vi v_round_quotient(vf a, vf b, vf c, vf *rest) {
    __m128 rest_lo, rest_hi;
    __m128i lo = jm_round_quotient_pd(a, b, c, &rest_lo);
    __m128i hi = jm_round_quotient_pd(_mm_movehl_ps(a, a), _mm_movehl_ps(b, b), _mm_movehl_ps(c, c), &rest_hi);
    *rest = _mm_movelh_ps(rest_lo, rest_hi);
    return _mm_unpacklo_epi64(lo, hi);
}
#elif JM_ISA == JM_ISA_NEON
JM_INLINE int32x2_t jm_round_quotient_pd(float64x2_t a, float64x2_t b, float64x2_t c, float32x2_t *rest) {
    float64x2_t q = vmulq_f64(a, vdivq_f64(b, c));
    float64x2_t rounded = vrndnq_f64(q);
    *rest = vcvt_f32_f64(vsubq_f64(q, rounded));
    return vmovn_s64(vcvtq_s64_f64(rounded));
}
JM_INLINE vi v_round_quotient(vf a, vf b, vf c, vf *rest) {
    float32x2_t rest_lo, rest_hi;
    int32x2_t lo = jm_round_quotient_pd(vcvt_f64_f32(vget_low_f32(a)), vcvt_f64_f32(vget_low_f32(b)),
                                        vcvt_f64_f32(vget_low_f32(c)), &rest_lo);
    int32x2_t hi = jm_round_quotient_pd(vcvt_high_f64_f32(a), vcvt_high_f64_f32(b), vcvt_high_f64_f32(c), &rest_hi);
    *rest = vcombine_f32(rest_lo, rest_hi);
    return vreinterpretq_u32_s32(vcombine_s32(lo, hi));
}
#else
JM_INLINE vi v_round_quotient(vf a, vf b, vf c, vf *rest) {
    double q = (double)a * ((double)b / c);
    long rounded = lrint(q);
    *rest = (float)(q - (double)rounded);
    return (uint32_t)(int32_t)rounded;
}
#endif

/* ------------------------------------------------------------- float64 lanes -- */
/*
 * vd: a vector of JM_WD doubles (double itself on the scalar path); vdmask: the result of a
 * lane-wise comparison of vd, consumed by vd_select and the md_* mask ops.
 *
 *   path     JM_WD   vd               vdmask
 *   scalar   1       double           int
 *   sse      2       __m128d          __m128d
 *   avx2     4       __m256d          __m256d
 *   avx512   8       __m512d          __mmask8
 *   neon     2       float64x2_t      uint64x2_t
 *
 * The ops mirror the float32 ones (v_add -> vd_add, m_and -> md_and, ...) with the same
 * semantics: vd_min / vd_max return b when the two compare equal or either is NaN (minpd /
 * maxpd); comparisons are ordered (false with a NaN); vd_select(m, a, b) takes a where m is set.
 * vd_fmadd / vd_fnmadd are fused on AVX2, AVX-512 and NEON and a separate multiply and add on
 * SSE and the scalar path (one more rounding: every float64 bound holds with either).
 * Records of four doubles ("dquads", 32 bytes) move between memory and lanes with
 * vd_load_quads / vd_store_quads: lane i belongs to record i of the block on EVERY path (no
 * permutation, unlike the float32 AVX-512 order), by plain loads, shuffles and stores.
 */
#if JM_ISA == JM_ISA_AVX512
#define JM_WD 8
typedef __m512d vd;
typedef __mmask8 vdmask;
JM_INLINE vd vd_set1(double a) { return _mm512_set1_pd(a); }
JM_INLINE vd vd_add(vd a, vd b) { return _mm512_add_pd(a, b); }
JM_INLINE vd vd_sub(vd a, vd b) { return _mm512_sub_pd(a, b); }
JM_INLINE vd vd_mul(vd a, vd b) { return _mm512_mul_pd(a, b); }
JM_INLINE vd vd_div(vd a, vd b) { return _mm512_div_pd(a, b); }
JM_INLINE vd vd_min(vd a, vd b) { return _mm512_min_pd(a, b); }
JM_INLINE vd vd_max(vd a, vd b) { return _mm512_max_pd(a, b); }
JM_INLINE vd vd_sqrt(vd a) { return _mm512_sqrt_pd(a); }
JM_INLINE vd vd_fmadd(vd a, vd b, vd c) { return _mm512_fmadd_pd(a, b, c); }   /* a*b + c */
JM_INLINE vd vd_fnmadd(vd a, vd b, vd c) { return _mm512_fnmadd_pd(a, b, c); } /* c - a*b */
/* to the nearest integer, ties to even */
JM_INLINE vd vd_round(vd a) { return _mm512_roundscale_pd(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
JM_INLINE vd vd_xor(vd a, vd b) { return _mm512_xor_pd(a, b); }
JM_INLINE vd vd_and(vd a, vd b) { return _mm512_and_pd(a, b); }
JM_INLINE vdmask vd_gt(vd a, vd b) { return _mm512_cmp_pd_mask(a, b, _CMP_GT_OQ); }
JM_INLINE vdmask vd_ge(vd a, vd b) { return _mm512_cmp_pd_mask(a, b, _CMP_GE_OQ); }
JM_INLINE vdmask vd_lt(vd a, vd b) { return _mm512_cmp_pd_mask(a, b, _CMP_LT_OQ); }
JM_INLINE vdmask vd_eq(vd a, vd b) { return _mm512_cmp_pd_mask(a, b, _CMP_EQ_OQ); }
JM_INLINE vdmask md_and(vdmask a, vdmask b) { return (vdmask)(a & b); }
JM_INLINE vdmask md_or(vdmask a, vdmask b) { return (vdmask)(a | b); }
JM_INLINE vdmask md_not(vdmask a) { return (vdmask)~a; }
JM_INLINE int md_any(vdmask m) { return m != 0; }
JM_INLINE vd vd_select(vdmask m, vd a, vd b) { return _mm512_mask_blend_pd(m, b, a); }
#elif JM_ISA == JM_ISA_AVX2
#define JM_WD 4
typedef __m256d vd;
typedef __m256d vdmask;
JM_INLINE vd vd_set1(double a) { return _mm256_set1_pd(a); }
JM_INLINE vd vd_add(vd a, vd b) { return _mm256_add_pd(a, b); }
JM_INLINE vd vd_sub(vd a, vd b) { return _mm256_sub_pd(a, b); }
JM_INLINE vd vd_mul(vd a, vd b) { return _mm256_mul_pd(a, b); }
JM_INLINE vd vd_div(vd a, vd b) { return _mm256_div_pd(a, b); }
JM_INLINE vd vd_min(vd a, vd b) { return _mm256_min_pd(a, b); }
JM_INLINE vd vd_max(vd a, vd b) { return _mm256_max_pd(a, b); }
JM_INLINE vd vd_sqrt(vd a) { return _mm256_sqrt_pd(a); }
JM_INLINE vd vd_fmadd(vd a, vd b, vd c) { return _mm256_fmadd_pd(a, b, c); }
JM_INLINE vd vd_fnmadd(vd a, vd b, vd c) { return _mm256_fnmadd_pd(a, b, c); }
JM_INLINE vd vd_round(vd a) { return _mm256_round_pd(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
JM_INLINE vd vd_xor(vd a, vd b) { return _mm256_xor_pd(a, b); }
JM_INLINE vd vd_and(vd a, vd b) { return _mm256_and_pd(a, b); }
JM_INLINE vdmask vd_gt(vd a, vd b) { return _mm256_cmp_pd(a, b, _CMP_GT_OQ); }
JM_INLINE vdmask vd_ge(vd a, vd b) { return _mm256_cmp_pd(a, b, _CMP_GE_OQ); }
JM_INLINE vdmask vd_lt(vd a, vd b) { return _mm256_cmp_pd(a, b, _CMP_LT_OQ); }
JM_INLINE vdmask vd_eq(vd a, vd b) { return _mm256_cmp_pd(a, b, _CMP_EQ_OQ); }
JM_INLINE vdmask md_and(vdmask a, vdmask b) { return _mm256_and_pd(a, b); }
JM_INLINE vdmask md_or(vdmask a, vdmask b) { return _mm256_or_pd(a, b); }
JM_INLINE vdmask md_not(vdmask a) { return _mm256_xor_pd(a, _mm256_castsi256_pd(_mm256_set1_epi32(-1))); }
JM_INLINE int md_any(vdmask m) { return _mm256_movemask_pd(m) != 0; }
JM_INLINE vd vd_select(vdmask m, vd a, vd b) { return _mm256_blendv_pd(b, a, m); }
#elif JM_ISA == JM_ISA_SSE
#define JM_WD 2
typedef __m128d vd;
typedef __m128d vdmask;
JM_INLINE vd vd_set1(double a) { return _mm_set1_pd(a); }
JM_INLINE vd vd_add(vd a, vd b) { return _mm_add_pd(a, b); }
JM_INLINE vd vd_sub(vd a, vd b) { return _mm_sub_pd(a, b); }
JM_INLINE vd vd_mul(vd a, vd b) { return _mm_mul_pd(a, b); }
JM_INLINE vd vd_div(vd a, vd b) { return _mm_div_pd(a, b); }
JM_INLINE vd vd_min(vd a, vd b) { return _mm_min_pd(a, b); }
JM_INLINE vd vd_max(vd a, vd b) { return _mm_max_pd(a, b); }
JM_INLINE vd vd_sqrt(vd a) { return _mm_sqrt_pd(a); }
JM_INLINE vd vd_fmadd(vd a, vd b, vd c) { return _mm_add_pd(_mm_mul_pd(a, b), c); }
JM_INLINE vd vd_fnmadd(vd a, vd b, vd c) { return _mm_sub_pd(c, _mm_mul_pd(a, b)); }
JM_INLINE vd vd_round(vd a) { return _mm_round_pd(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
JM_INLINE vd vd_xor(vd a, vd b) { return _mm_xor_pd(a, b); }
JM_INLINE vd vd_and(vd a, vd b) { return _mm_and_pd(a, b); }
JM_INLINE vdmask vd_gt(vd a, vd b) { return _mm_cmpgt_pd(a, b); }
JM_INLINE vdmask vd_ge(vd a, vd b) { return _mm_cmpge_pd(a, b); }
JM_INLINE vdmask vd_lt(vd a, vd b) { return _mm_cmplt_pd(a, b); }
JM_INLINE vdmask vd_eq(vd a, vd b) { return _mm_cmpeq_pd(a, b); }
JM_INLINE vdmask md_and(vdmask a, vdmask b) { return _mm_and_pd(a, b); }
JM_INLINE vdmask md_or(vdmask a, vdmask b) { return _mm_or_pd(a, b); }
JM_INLINE vdmask md_not(vdmask a) { return _mm_xor_pd(a, _mm_castsi128_pd(_mm_set1_epi32(-1))); }
JM_INLINE int md_any(vdmask m) { return _mm_movemask_pd(m) != 0; }
JM_INLINE vd vd_select(vdmask m, vd a, vd b) { return _mm_blendv_pd(b, a, m); }
#elif JM_ISA == JM_ISA_NEON
#define JM_WD 2
typedef float64x2_t vd;
typedef uint64x2_t vdmask;
JM_INLINE vd vd_set1(double a) { return vdupq_n_f64(a); }
JM_INLINE vd vd_add(vd a, vd b) { return vaddq_f64(a, b); }
JM_INLINE vd vd_sub(vd a, vd b) { return vsubq_f64(a, b); }
JM_INLINE vd vd_mul(vd a, vd b) { return vmulq_f64(a, b); }
JM_INLINE vd vd_div(vd a, vd b) { return vdivq_f64(a, b); }
/* minpd / maxpd semantics (b when the two compare equal or either is NaN), not fmin's */
JM_INLINE vd vd_min(vd a, vd b) { return vbslq_f64(vcltq_f64(a, b), a, b); }
JM_INLINE vd vd_max(vd a, vd b) { return vbslq_f64(vcgtq_f64(a, b), a, b); }
JM_INLINE vd vd_sqrt(vd a) { return vsqrtq_f64(a); }
JM_INLINE vd vd_fmadd(vd a, vd b, vd c) { return vfmaq_f64(c, a, b); }
JM_INLINE vd vd_fnmadd(vd a, vd b, vd c) { return vfmsq_f64(c, a, b); }
JM_INLINE vd vd_round(vd a) { return vrndnq_f64(a); }
JM_INLINE vd vd_xor(vd a, vd b) { return vreinterpretq_f64_u64(veorq_u64(vreinterpretq_u64_f64(a), vreinterpretq_u64_f64(b))); }
JM_INLINE vd vd_and(vd a, vd b) { return vreinterpretq_f64_u64(vandq_u64(vreinterpretq_u64_f64(a), vreinterpretq_u64_f64(b))); }
JM_INLINE vdmask vd_gt(vd a, vd b) { return vcgtq_f64(a, b); }
JM_INLINE vdmask vd_ge(vd a, vd b) { return vcgeq_f64(a, b); }
JM_INLINE vdmask vd_lt(vd a, vd b) { return vcltq_f64(a, b); }
JM_INLINE vdmask vd_eq(vd a, vd b) { return vceqq_f64(a, b); }
JM_INLINE vdmask md_and(vdmask a, vdmask b) { return vandq_u64(a, b); }
JM_INLINE vdmask md_or(vdmask a, vdmask b) { return vorrq_u64(a, b); }
JM_INLINE vdmask md_not(vdmask a) { return vreinterpretq_u64_u32(vmvnq_u32(vreinterpretq_u32_u64(a))); }
JM_INLINE int md_any(vdmask m) { return vmaxvq_u32(vreinterpretq_u32_u64(m)) != 0; }
JM_INLINE vd vd_select(vdmask m, vd a, vd b) { return vbslq_f64(m, a, b); }
#else
#define JM_WD 1
typedef double vd;
typedef int vdmask;
JM_INLINE vd vd_set1(double a) { return a; }
JM_INLINE vd vd_add(vd a, vd b) { return a + b; }
JM_INLINE vd vd_sub(vd a, vd b) { return a - b; }
JM_INLINE vd vd_mul(vd a, vd b) { return a * b; }
JM_INLINE vd vd_div(vd a, vd b) { return a / b; }
JM_INLINE vd vd_min(vd a, vd b) { return a < b ? a : b; } /* b when equal or either is NaN, like minpd */
JM_INLINE vd vd_max(vd a, vd b) { return a > b ? a : b; } /* likewise, like maxpd */
JM_INLINE vd vd_sqrt(vd a) { return sqrt(a); }
/* plain mul+add, as the float32 scalar path (fma is a library call on baseline x86-64) */
JM_INLINE vd vd_fmadd(vd a, vd b, vd c) { return a * b + c; }
JM_INLINE vd vd_fnmadd(vd a, vd b, vd c) { return c - a * b; }
JM_INLINE vd vd_round(vd a) { return nearbyint(a); } /* the default mode: to nearest, ties to even */
JM_INLINE vd vd_xor(vd a, vd b) {
    uint64_t ia, ib;
    memcpy(&ia, &a, 8);
    memcpy(&ib, &b, 8);
    ia ^= ib;
    memcpy(&a, &ia, 8);
    return a;
}
JM_INLINE vd vd_and(vd a, vd b) {
    uint64_t ia, ib;
    memcpy(&ia, &a, 8);
    memcpy(&ib, &b, 8);
    ia &= ib;
    memcpy(&a, &ia, 8);
    return a;
}
JM_INLINE vdmask vd_gt(vd a, vd b) { return a > b; }
JM_INLINE vdmask vd_ge(vd a, vd b) { return a >= b; }
JM_INLINE vdmask vd_lt(vd a, vd b) { return a < b; }
JM_INLINE vdmask vd_eq(vd a, vd b) { return a == b; }
JM_INLINE vdmask md_and(vdmask a, vdmask b) { return a & b; }
JM_INLINE vdmask md_or(vdmask a, vdmask b) { return a | b; }
JM_INLINE vdmask md_not(vdmask a) { return !a; }
JM_INLINE int md_any(vdmask m) { return m != 0; }
JM_INLINE vd vd_select(vdmask m, vd a, vd b) { return m ? a : b; }
#endif

/* a double from its IEEE-754 bit pattern */
JM_INLINE double jm_double_from_bits(uint64_t bits) {
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}
JM_INLINE vd vd_abs(vd a) { return vd_and(a, vd_set1(jm_double_from_bits(0x7fffffffffffffffull))); }
JM_INLINE vd vd_negate(vd a) { return vd_xor(a, vd_set1(-0.0)); }

/*
 * vd_scale_pow2: v_scale_pow2 for doubles. Multiplies v[0..n) by the power of two that puts the
 * largest |v[i]| in [1, 2) and returns that largest |v[i]| as it was. Exact, so anything computed
 * from the result is the same for every scale of the input (2^-1074 ... DBL_MAX), and sums of
 * squares neither overflow nor underflow. A subnormal largest is first lifted by 2^64 (exactly);
 * the scale 2^-e of the exponent-only value 2^e comes from flipping its 11 exponent bits
 * (E -> 2047 - E is 2^(1 - e)) and halving. All zero: unchanged (the scale is capped at
 * 2^1022). An inf: NaN (inf * 0); a NaN stays NaN.
 */
JM_INLINE vd vd_scale_pow2(vd *v, int n) {
    vd largest = vd_abs(v[0]);
    for (int i = 1; i < n; i++)
        largest = vd_max(largest, vd_abs(v[i]));
    const vd exponent_bits = vd_set1(jm_double_from_bits(0x7ff0000000000000ull));
    vd lift = vd_select(vd_ge(largest, vd_set1(0x1p-1022)), vd_set1(1.0), vd_set1(0x1p64));
    vd power = vd_and(vd_mul(largest, lift), exponent_bits); /* 2^floor(log2), 0 for zero, inf for inf */
    vd scale = vd_min(vd_mul(vd_xor(power, exponent_bits), vd_set1(0.5)), vd_set1(0x1p1022));
    for (int i = 0; i < n; i++)
        v[i] = vd_mul(vd_mul(v[i], lift), scale);
    return largest;
}

/*
 * vd_load_quads: for i in [0, JM_WD) read doubles [0, 4) at (base + i * stride) and return them
 * transposed: c0 lane i = first double of record i, ..., c3 lane i = fourth double.
 * vd_store_quads writes the inverse. stride is in bytes and may be anything (records of any
 * size, unaligned, negative strides). Records of 3 doubles go through staged buffers
 * (JM_FOR_BLOCKS_D's tails) or overlapping quads (a 3x3 matrix as doubles 0..3, 4..7, 5..8), or
 * stride 24 when the 8 bytes after the last record belong to the caller: vd_store_quads writes
 * the records in increasing order on every path, so each record's fourth double is overwritten
 * by the next record's first (the Euler kernels' blocks before the last).
 */
#if JM_ISA == JM_ISA_AVX512
/* records r and r + 1 as one vector: a single 512-bit load when they are adjacent */
JM_INLINE __m512d jm_load_dquad_pair(const char *p, ptrdiff_t s) {
    if (s == 32)
        return _mm512_loadu_pd((const double *)p);
    return _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_loadu_pd((const double *)p)),
                              _mm256_loadu_pd((const double *)(p + s)), 1);
}
JM_INLINE void jm_store_dquad_pair(char *p, ptrdiff_t s, __m512d v) {
    if (s == 32) {
        _mm512_storeu_pd((double *)p, v);
        return;
    }
    _mm256_storeu_pd((double *)p, _mm512_castpd512_pd256(v));
    _mm256_storeu_pd((double *)(p + s), _mm512_extractf64x4_pd(v, 1));
}
/*
 * pairs (records 2k, 2k + 1) -> components, and back: the same two permutes each way. With
 * z0 = [r0 r1], z1 = [r2 r3]: lo = [r0.0 r1.0 r2.0 r3.0  r0.1 r1.1 r2.1 r3.1], hi the same of
 * doubles 2 and 3; then 256-bit halves of the lo / hi of the two pair groups combine.
 */
JM_INLINE void jm_transpose_dquads(__m512d z0, __m512d z1, __m512d z2, __m512d z3, vd *c0, vd *c1, vd *c2, vd *c3) {
    const __m512i first = _mm512_setr_epi64(0, 4, 8, 12, 1, 5, 9, 13), second = _mm512_setr_epi64(2, 6, 10, 14, 3, 7, 11, 15);
    __m512d lo_a = _mm512_permutex2var_pd(z0, first, z1), hi_a = _mm512_permutex2var_pd(z0, second, z1);
    __m512d lo_b = _mm512_permutex2var_pd(z2, first, z3), hi_b = _mm512_permutex2var_pd(z2, second, z3);
    *c0 = _mm512_shuffle_f64x2(lo_a, lo_b, _MM_SHUFFLE(1, 0, 1, 0));
    *c1 = _mm512_shuffle_f64x2(lo_a, lo_b, _MM_SHUFFLE(3, 2, 3, 2));
    *c2 = _mm512_shuffle_f64x2(hi_a, hi_b, _MM_SHUFFLE(1, 0, 1, 0));
    *c3 = _mm512_shuffle_f64x2(hi_a, hi_b, _MM_SHUFFLE(3, 2, 3, 2));
}
JM_INLINE void vd_load_quads(const char *base, ptrdiff_t stride, vd *c0, vd *c1, vd *c2, vd *c3) {
    jm_transpose_dquads(jm_load_dquad_pair(base, stride), jm_load_dquad_pair(base + 2 * stride, stride),
                        jm_load_dquad_pair(base + 4 * stride, stride), jm_load_dquad_pair(base + 6 * stride, stride),
                        c0, c1, c2, c3);
}
JM_INLINE void vd_store_quads(char *base, ptrdiff_t stride, vd c0, vd c1, vd c2, vd c3) {
    /* the inverse: halves back to lo / hi groups, then the same permutes (their own inverse) */
    __m512d lo_a = _mm512_shuffle_f64x2(c0, c1, _MM_SHUFFLE(1, 0, 1, 0));
    __m512d lo_b = _mm512_shuffle_f64x2(c0, c1, _MM_SHUFFLE(3, 2, 3, 2));
    __m512d hi_a = _mm512_shuffle_f64x2(c2, c3, _MM_SHUFFLE(1, 0, 1, 0));
    __m512d hi_b = _mm512_shuffle_f64x2(c2, c3, _MM_SHUFFLE(3, 2, 3, 2));
    const __m512i first = _mm512_setr_epi64(0, 4, 8, 12, 1, 5, 9, 13), second = _mm512_setr_epi64(2, 6, 10, 14, 3, 7, 11, 15);
    jm_store_dquad_pair(base, stride, _mm512_permutex2var_pd(lo_a, first, hi_a));
    jm_store_dquad_pair(base + 2 * stride, stride, _mm512_permutex2var_pd(lo_a, second, hi_a));
    jm_store_dquad_pair(base + 4 * stride, stride, _mm512_permutex2var_pd(lo_b, first, hi_b));
    jm_store_dquad_pair(base + 6 * stride, stride, _mm512_permutex2var_pd(lo_b, second, hi_b));
}
#elif JM_ISA == JM_ISA_AVX2
/* doubles [k, k + 2) of records j (low half) and j + 2 (high half) */
JM_INLINE __m256d jm_load_dpairs(const char *p, ptrdiff_t s) {
    return _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd((const double *)p)),
                                _mm_loadu_pd((const double *)(p + 2 * s)), 1);
}
JM_INLINE void vd_load_quads(const char *base, ptrdiff_t stride, vd *c0, vd *c1, vd *c2, vd *c3) {
    __m256d front_02 = jm_load_dpairs(base, stride), front_13 = jm_load_dpairs(base + stride, stride);
    __m256d back_02 = jm_load_dpairs(base + 16, stride), back_13 = jm_load_dpairs(base + stride + 16, stride);
    *c0 = _mm256_unpacklo_pd(front_02, front_13);
    *c1 = _mm256_unpackhi_pd(front_02, front_13);
    *c2 = _mm256_unpacklo_pd(back_02, back_13);
    *c3 = _mm256_unpackhi_pd(back_02, back_13);
}
JM_INLINE void vd_store_quads(char *base, ptrdiff_t stride, vd c0, vd c1, vd c2, vd c3) {
    __m256d front_02 = _mm256_unpacklo_pd(c0, c1), front_13 = _mm256_unpackhi_pd(c0, c1);
    __m256d back_02 = _mm256_unpacklo_pd(c2, c3), back_13 = _mm256_unpackhi_pd(c2, c3);
    _mm256_storeu_pd((double *)base, _mm256_permute2f128_pd(front_02, back_02, 0x20));
    _mm256_storeu_pd((double *)(base + stride), _mm256_permute2f128_pd(front_13, back_13, 0x20));
    _mm256_storeu_pd((double *)(base + 2 * stride), _mm256_permute2f128_pd(front_02, back_02, 0x31));
    _mm256_storeu_pd((double *)(base + 3 * stride), _mm256_permute2f128_pd(front_13, back_13, 0x31));
}
#elif JM_ISA == JM_ISA_SSE
JM_INLINE void vd_load_quads(const char *base, ptrdiff_t stride, vd *c0, vd *c1, vd *c2, vd *c3) {
    __m128d front_0 = _mm_loadu_pd((const double *)base), back_0 = _mm_loadu_pd((const double *)(base + 16));
    __m128d front_1 = _mm_loadu_pd((const double *)(base + stride));
    __m128d back_1 = _mm_loadu_pd((const double *)(base + stride + 16));
    *c0 = _mm_unpacklo_pd(front_0, front_1);
    *c1 = _mm_unpackhi_pd(front_0, front_1);
    *c2 = _mm_unpacklo_pd(back_0, back_1);
    *c3 = _mm_unpackhi_pd(back_0, back_1);
}
JM_INLINE void vd_store_quads(char *base, ptrdiff_t stride, vd c0, vd c1, vd c2, vd c3) {
    _mm_storeu_pd((double *)base, _mm_unpacklo_pd(c0, c1));
    _mm_storeu_pd((double *)(base + 16), _mm_unpacklo_pd(c2, c3));
    _mm_storeu_pd((double *)(base + stride), _mm_unpackhi_pd(c0, c1));
    _mm_storeu_pd((double *)(base + stride + 16), _mm_unpackhi_pd(c2, c3));
}
#elif JM_ISA == JM_ISA_NEON
JM_INLINE void vd_load_quads(const char *base, ptrdiff_t stride, vd *c0, vd *c1, vd *c2, vd *c3) {
    if (stride == 32) { /* two packed records: one de-interleaving load does the transpose */
        float64x2x4_t v = vld4q_f64((const double *)base);
        *c0 = v.val[0];
        *c1 = v.val[1];
        *c2 = v.val[2];
        *c3 = v.val[3];
        return;
    }
    float64x2_t front_0 = vld1q_f64((const double *)base), back_0 = vld1q_f64((const double *)(base + 16));
    float64x2_t front_1 = vld1q_f64((const double *)(base + stride));
    float64x2_t back_1 = vld1q_f64((const double *)(base + stride + 16));
    *c0 = vzip1q_f64(front_0, front_1);
    *c1 = vzip2q_f64(front_0, front_1);
    *c2 = vzip1q_f64(back_0, back_1);
    *c3 = vzip2q_f64(back_0, back_1);
}
JM_INLINE void vd_store_quads(char *base, ptrdiff_t stride, vd c0, vd c1, vd c2, vd c3) {
    if (stride == 32) {
        float64x2x4_t v = {{c0, c1, c2, c3}};
        vst4q_f64((double *)base, v);
        return;
    }
    vst1q_f64((double *)base, vzip1q_f64(c0, c1));
    vst1q_f64((double *)(base + 16), vzip1q_f64(c2, c3));
    vst1q_f64((double *)(base + stride), vzip2q_f64(c0, c1));
    vst1q_f64((double *)(base + stride + 16), vzip2q_f64(c2, c3));
}
#else
JM_INLINE void vd_load_quads(const char *base, ptrdiff_t stride, vd *c0, vd *c1, vd *c2, vd *c3) {
    double q[4];
    (void)stride;
    memcpy(q, base, sizeof q); /* memcpy: records may be unaligned */
    *c0 = q[0];
    *c1 = q[1];
    *c2 = q[2];
    *c3 = q[3];
}
JM_INLINE void vd_store_quads(char *base, ptrdiff_t stride, vd c0, vd c1, vd c2, vd c3) {
    double q[4] = {c0, c1, c2, c3};
    (void)stride;
    memcpy(base, q, sizeof q);
}
#endif

/*
 * vd_load_mat3: for i in [0, JM_WD) read the nine doubles at (base + i * stride), a row-major
 * double[3][3], into r[0..9) lane i; vd_store_mat3 writes the inverse. stride is in bytes, any
 * value (records may overlap only when nothing is stored). vd_load_mat3 on AVX-512 with
 * stride >= 72 (every record after the one before it): one 8x8 transpose of doubles 0..7
 * (full-record 64-byte loads) and double 8 of record i through lane i of a one-lane masked load
 * at base + i * stride + 64 - 8 i, whose 64 bytes lie between the block's first and last byte
 * (for i < 7 they reach past record i into the next; masked-off lanes are not read and cannot
 * fault). Negative or smaller strides take the quads. (The AVX-512 path has no vd_store_mat3
 * caller: its quat_to_matrix runs the AVX2 kernel, csrc/convert.c.)
 * That is 24 shuffles per 8 matrices where three overlapping dquads (doubles 0..3, 4..7, 5..8,
 * the other paths and other strides) take 24 512-bit shuffles plus 12 half extracts or
 * inserts; on CPUs that split 512-bit shuffles in two (AMD Zen 4) the shuffles bound these
 * kernels.
 */
#if JM_ISA == JM_ISA_AVX512
/* t[i] lane k = c[k] lane i: in-lane unpacks, then two rounds of 128-bit block shuffles */
JM_INLINE void jm_transpose_8x8_pd(const __m512d c[8], __m512d t[8]) {
    __m512d pairs[8], halves[8];
    for (int k = 0; k < 4; k++) { /* pairs[2k] = records 0, 2, 4, 6 of doubles 2k, 2k+1; pairs[2k+1] odd records */
        pairs[2 * k] = _mm512_unpacklo_pd(c[2 * k], c[2 * k + 1]);
        pairs[2 * k + 1] = _mm512_unpackhi_pd(c[2 * k], c[2 * k + 1]);
    }
    for (int odd = 0; odd < 2; odd++) { /* records odd + {0, 4} (then odd + {2, 6}): doubles 0..3, then 4..7 */
        halves[4 * odd + 0] = _mm512_shuffle_f64x2(pairs[odd], pairs[2 + odd], _MM_SHUFFLE(2, 0, 2, 0));
        halves[4 * odd + 1] = _mm512_shuffle_f64x2(pairs[4 + odd], pairs[6 + odd], _MM_SHUFFLE(2, 0, 2, 0));
        halves[4 * odd + 2] = _mm512_shuffle_f64x2(pairs[odd], pairs[2 + odd], _MM_SHUFFLE(3, 1, 3, 1));
        halves[4 * odd + 3] = _mm512_shuffle_f64x2(pairs[4 + odd], pairs[6 + odd], _MM_SHUFFLE(3, 1, 3, 1));
    }
    for (int j = 0; j < 4; j++) { /* halves[2j], halves[2j + 1] hold records r and r + 4, r = {0, 2, 1, 3}[j] */
        const int r = (j & 1) * 2 + (j >> 1);
        t[r] = _mm512_shuffle_f64x2(halves[2 * j], halves[2 * j + 1], _MM_SHUFFLE(2, 0, 2, 0));
        t[r + 4] = _mm512_shuffle_f64x2(halves[2 * j], halves[2 * j + 1], _MM_SHUFFLE(3, 1, 3, 1));
    }
}
#endif
JM_INLINE void vd_load_mat3(const char *base, ptrdiff_t stride, vd r[9]) {
#if JM_ISA == JM_ISA_AVX512
    if (stride >= 72) {
        __m512d rows[8], last = _mm512_setzero_pd();
        for (int i = 0; i < 8; i++) {
            rows[i] = _mm512_loadu_pd((const double *)(base + i * stride));
            last = _mm512_mask_loadu_pd(last, (__mmask8)(1u << i), (const double *)(base + i * stride + 64 - 8 * i));
        }
        jm_transpose_8x8_pd(rows, r);
        r[8] = last;
        return;
    }
#endif
    vd again5, again6, again7;
    vd_load_quads(base, stride, &r[0], &r[1], &r[2], &r[3]);
    vd_load_quads(base + 32, stride, &r[4], &r[5], &r[6], &r[7]);
    vd_load_quads(base + 40, stride, &again5, &again6, &again7, &r[8]); /* doubles 5..8: inside the record */
    (void)again5, (void)again6, (void)again7;
}
JM_INLINE void vd_store_mat3(char *base, ptrdiff_t stride, const vd r[9]) {
    /* doubles 5..8 overlap the second quad by three doubles of equal value */
    vd_store_quads(base, stride, r[0], r[1], r[2], r[3]);
    vd_store_quads(base + 32, stride, r[4], r[5], r[6], r[7]);
    vd_store_quads(base + 40, stride, r[5], r[6], r[7], r[8]);
}

/* --------------------------------------- float64 lanes: ops of the interpolation kernels -- */
/* vd_loadu: JM_WD consecutive doubles from p (any alignment) into lanes 0 .. JM_WD - 1 (the
   per-element fractions t of csrc/interp.c's float64 kernels). */
#if JM_ISA == JM_ISA_AVX512
JM_INLINE vd vd_loadu(const double *p) { return _mm512_loadu_pd(p); }
#elif JM_ISA == JM_ISA_AVX2
JM_INLINE vd vd_loadu(const double *p) { return _mm256_loadu_pd(p); }
#elif JM_ISA == JM_ISA_SSE
JM_INLINE vd vd_loadu(const double *p) { return _mm_loadu_pd(p); }
#elif JM_ISA == JM_ISA_NEON
JM_INLINE vd vd_loadu(const double *p) { return vld1q_f64(p); }
#else
JM_INLINE vd vd_loadu(const double *p) {
    double v;
    memcpy(&v, p, sizeof v); /* memcpy: p may be unaligned */
    return v;
}
#endif

/* ------------------------- float64 lanes: ops of the extraction and packing kernels -- */
/*
 * vd_store_u32: JM_WD uint32 to p (any alignment), lane i to p + 4 i, from lanes holding integers
 * in [0, 2^32) (exactly; anything else is not converted meaningfully). vd_store_u64_halves:
 * JM_WD uint64 to p, lane i's hi * 2^32 + lo to p + 8 i, from lanes lo and hi holding integers in
 * [0, 2^32). Integer codes and counts computed exactly in float64 lanes leave through these
 * (the packed quaternion codes of csrc/pack.c, the iteration counts of csrc/extract.c).
 */
#if JM_ISA == JM_ISA_AVX512
JM_INLINE void vd_store_u32(char *p, vd a) { _mm256_storeu_si256((__m256i *)p, _mm512_cvtpd_epu32(a)); }
JM_INLINE void vd_store_u64_halves(char *p, vd lo, vd hi) {
    _mm512_storeu_si512(p, _mm512_or_si512(_mm512_slli_epi64(_mm512_cvtpd_epu64(hi), 32), _mm512_cvtpd_epu64(lo)));
}
#elif JM_ISA == JM_ISA_AVX2
/* no unsigned conversion: a - 2^31 (exact) fits int32, and its sign bit flipped back is a */
JM_INLINE void vd_store_u32(char *p, vd a) {
    __m128i biased = _mm256_cvtpd_epi32(_mm256_sub_pd(a, _mm256_set1_pd(0x1p31)));
    _mm_storeu_si128((__m128i *)p, _mm_xor_si128(biased, _mm_set1_epi32(INT32_MIN)));
}
/* a + 2^52 (exact) holds a in the low 32 bits of its pattern */
JM_INLINE void vd_store_u64_halves(char *p, vd lo, vd hi) {
    const __m256d magic = _mm256_set1_pd(0x1p52);
    __m256i lo_bits = _mm256_castpd_si256(_mm256_add_pd(lo, magic));
    __m256i hi_bits = _mm256_slli_epi64(_mm256_castpd_si256(_mm256_add_pd(hi, magic)), 32);
    _mm256_storeu_si256((__m256i *)p, _mm256_blend_epi32(lo_bits, hi_bits, 0xAA));
}
#elif JM_ISA == JM_ISA_SSE
JM_INLINE void vd_store_u32(char *p, vd a) {
    __m128i biased = _mm_cvtpd_epi32(_mm_sub_pd(a, _mm_set1_pd(0x1p31)));
    _mm_storel_epi64((__m128i *)p, _mm_xor_si128(biased, _mm_set1_epi32(INT32_MIN)));
}
JM_INLINE void vd_store_u64_halves(char *p, vd lo, vd hi) {
    const __m128d magic = _mm_set1_pd(0x1p52);
    __m128i lo_bits = _mm_castpd_si128(_mm_add_pd(lo, magic));
    __m128i hi_bits = _mm_slli_epi64(_mm_castpd_si128(_mm_add_pd(hi, magic)), 32);
    _mm_storeu_si128((__m128i *)p, _mm_blend_epi16(lo_bits, hi_bits, 0xCC));
}
#elif JM_ISA == JM_ISA_NEON
JM_INLINE void vd_store_u32(char *p, vd a) { vst1_u32((uint32_t *)p, vmovn_u64(vcvtq_u64_f64(a))); }
JM_INLINE void vd_store_u64_halves(char *p, vd lo, vd hi) {
    vst1q_u64((uint64_t *)p, vorrq_u64(vshlq_n_u64(vcvtq_u64_f64(hi), 32), vcvtq_u64_f64(lo)));
}
#else
JM_INLINE void vd_store_u32(char *p, vd a) {
    uint32_t v = (uint32_t)a;
    memcpy(p, &v, sizeof v);
}
JM_INLINE void vd_store_u64_halves(char *p, vd lo, vd hi) {
    uint64_t v = (uint64_t)hi << 32 | (uint64_t)lo;
    memcpy(p, &v, sizeof v);
}
#endif

/* ------------------------------------------------------------ the block driver -- */
/*
 * JM_FOR_BLOCKS runs `block(in, in_stride, out, out_stride)` over n records, JM_W at a time
 * (float32 lanes); JM_FOR_BLOCKS_D the same JM_WD at a time (float64 lanes). The last records
 * that do not fill a block are copied into zeroed stack buffers, processed as one full block
 * and copied back, so no path reads or writes past either array. in_size / out_size are the
 * record sizes in bytes (what the tail copies, at most JM_MAX_RECORD, or JM_MAX_RECORD_D for
 * JM_FOR_BLOCKS_D: a double 3x4 matrix); the strides may be larger.
 */
#define JM_MAX_RECORD 64
#define JM_MAX_RECORD_D 96
#define JM_FOR_BLOCKS(block, in, in_stride, in_size, out, out_stride, out_size, n)               \
    JM_FOR_BLOCKS_OF(JM_W, JM_MAX_RECORD, block, in, in_stride, in_size, out, out_stride, out_size, n)
#define JM_FOR_BLOCKS_D(block, in, in_stride, in_size, out, out_stride, out_size, n)             \
    JM_FOR_BLOCKS_OF(JM_WD, JM_MAX_RECORD_D, block, in, in_stride, in_size, out, out_stride, out_size, n)
#define JM_FOR_BLOCKS_OF(width, max_record, block, in, in_stride, in_size, out, out_stride, out_size, n) \
    do {                                                                                         \
        size_t jm_i_ = 0;                                                                        \
        for (; jm_i_ + (width) <= (n); jm_i_ += (width))                                         \
            block((in) + (ptrdiff_t)jm_i_ * (in_stride), (in_stride),                            \
                  (out) + (ptrdiff_t)jm_i_ * (out_stride), (out_stride));                        \
        if (jm_i_ < (n)) {                                                                       \
            char jm_in_[(width) * (max_record)] = {0}, jm_out_[(width) * (max_record)];          \
            size_t jm_r_ = (n) - jm_i_;                                                          \
            for (size_t k = 0; k < jm_r_; k++)                                                   \
                memcpy(jm_in_ + k * (in_size), (in) + (ptrdiff_t)(jm_i_ + k) * (in_stride),      \
                       (in_size));                                                               \
            block(jm_in_, (ptrdiff_t)(in_size), jm_out_, (ptrdiff_t)(out_size));                 \
            for (size_t k = 0; k < jm_r_; k++)                                                   \
                memcpy((out) + (ptrdiff_t)(jm_i_ + k) * (out_stride), jm_out_ + k * (out_size),  \
                       (out_size));                                                              \
        }                                                                                        \
    } while (0)

#endif /* JM_SIMD_H */
