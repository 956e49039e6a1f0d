/*
 * simd/sse.h - the SSE4.1 path: JM_W = 4 floats, JM_WD = 2 doubles per vector (128-bit).
 * Included by simd/common.h only.
 *
 * Every ISA header defines the same primitives, in this order (contracts in simd/common.h):
 *   path     JM_ISA_NAME, JM_W, vf, vmask, vi, JM_WD, vd, vdmask
 *   float32  v_set1 v_add v_sub v_mul v_div v_min v_max v_sqrt v_fmadd v_fnmadd v_rsqrt_approx
 *            v_rcp_approx v_xor v_and v_gt v_ge v_lt v_select v_loadu v_diff_of_products
 *   masks    m_and m_or m_not m_any m_count
 *   int32    vi_set1 v_round_int v_from_int vi_or vi_and vi_add vi_shl vi_shr vi_eq vi_select
 *            v_round_quotient v_load_u32 v_store_u32 v_store_u64
 *   records  jm_load_4_quads jm_store_4_quads jm_load_4_quads_idx jm_store_4_quads_idx (the quads of
 *            records k, k + 4, ... of a block, one per 128-bit lane)
 *            jm_transpose_lanes jm_copy_record32 jm_quad_splat jm_quad_last
 *   float64  vd_set1 vd_add vd_sub vd_mul vd_div vd_min vd_max vd_sqrt vd_fmadd vd_fnmadd vd_round
 *            vd_xor vd_and vd_gt vd_ge vd_lt vd_eq vd_select vd_loadu vd_store_u32
 *            vd_store_u64_halves
 *   dmasks   md_and md_or md_not md_any
 *   drecords vd_load_quads vd_store_quads
 * Kernel overrides (simd/common.h): jm_copy_increasing, JM_COMPOSE_ROWS.
 */
#ifndef JM_SIMD_COMMON_H
#error "include simd/common.h, which selects this header"
#endif

#include <smmintrin.h>

/* ---------------------------------------------------------------------- path -- */
#define JM_ISA_NAME sse
#define JM_W 4
typedef __m128 vf;
typedef __m128 vmask;
typedef __m128i vi;
#define JM_WD 2
typedef __m128d vd;
typedef __m128d vdmask;

/* ------------------------------------------------------------------- float32 -- */
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
JM_INLINE vf v_select(vmask m, vf a, vf b) { return _mm_blendv_ps(b, a, m); }
JM_INLINE vf v_loadu(const float *p) { return _mm_loadu_ps(p); }
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

/* --------------------------------------------------------------------- masks -- */
JM_INLINE vmask m_and(vmask a, vmask b) { return _mm_and_ps(a, b); }
JM_INLINE vmask m_or(vmask a, vmask b) { return _mm_or_ps(a, b); }
JM_INLINE vmask m_not(vmask a) { return _mm_xor_ps(a, _mm_castsi128_ps(_mm_set1_epi32(-1))); }
JM_INLINE int m_any(vmask m) { return _mm_movemask_ps(m) != 0; }
JM_INLINE int m_count(vmask m) { return jm_popcount((unsigned)_mm_movemask_ps(m)); }

/* --------------------------------------------------------------------- int32 -- */
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
JM_INLINE vi v_load_u32(const char *p) { return _mm_loadu_si128((const __m128i *)p); }
JM_INLINE void v_store_u32(char *p, vi a) { _mm_storeu_si128((__m128i *)p, a); }
JM_INLINE void v_store_u64(char *p, vi lo, vi hi) {
    _mm_storeu_si128((__m128i *)p, _mm_unpacklo_epi32(lo, hi));
    _mm_storeu_si128((__m128i *)(p + 16), _mm_unpackhi_epi32(lo, hi));
}

/* ------------------------------------------------------------------- records -- */
/* lane-wise vector k of a block: the quad of record k */
JM_INLINE __m128 jm_load_4_quads(const char *base, ptrdiff_t stride, int k) {
    return _mm_loadu_ps((const float *)(base + k * stride));
}
JM_INLINE void jm_store_4_quads(char *base, ptrdiff_t stride, int k, __m128 v) {
    _mm_storeu_ps((float *)(base + k * stride), v);
}
JM_INLINE __m128 jm_load_4_quads_idx(const char *base, ptrdiff_t stride, const intptr_t *idx, int k) {
    return _mm_loadu_ps((const float *)JM_REC(base, stride, idx, k));
}
JM_INLINE void jm_store_4_quads_idx(char *base, ptrdiff_t stride, const intptr_t *idx, int k, __m128 v) {
    _mm_storeu_ps((float *)JM_REC(base, stride, idx, k), v);
}
/* each quad's element e (0 .. 3, a constant) in its four lanes */
JM_INLINE __m128 jm_quad_splat(__m128 v, int e) {
    switch (e) {
    case 0: return _mm_shuffle_ps(v, v, 0x00);
    case 1: return _mm_shuffle_ps(v, v, 0x55);
    case 2: return _mm_shuffle_ps(v, v, 0xAA);
    default: return _mm_shuffle_ps(v, v, 0xFF);
    }
}
/* each quad's lanes 0 .. 2 from filler, lane 3 from v */
JM_INLINE __m128 jm_quad_last(__m128 filler, __m128 v) { return _mm_blend_ps(filler, v, 0x8); }
JM_INLINE void jm_transpose_lanes(vf *a, vf *b, vf *c, vf *d) { _MM_TRANSPOSE4_PS(*a, *b, *c, *d); }
JM_INLINE void jm_copy_record32(char *dst, const char *src) { memcpy(dst, src, 32); }

/* ------------------------------------------------------------------- float64 -- */
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
JM_INLINE vd vd_select(vdmask m, vd a, vd b) { return _mm_blendv_pd(b, a, m); }
JM_INLINE vd vd_loadu(const double *p) { return _mm_loadu_pd(p); }
/* no unsigned conversion: a - 2^31 (exact) fits int32, and its sign bit flipped back is a */
JM_INLINE void vd_store_u32(char *p, vd a) {
    __m128i biased = _mm_cvtpd_epi32(_mm_sub_pd(a, _mm_set1_pd(0x1p31)));
    _mm_storel_epi64((__m128i *)p, _mm_xor_si128(biased, _mm_set1_epi32(INT32_MIN)));
}
/* a + 2^52 (exact) holds a in the low 32 bits of its pattern */
JM_INLINE void vd_store_u64_halves(char *p, vd lo, vd hi) {
    const __m128d magic = _mm_set1_pd(0x1p52);
    __m128i lo_bits = _mm_castpd_si128(_mm_add_pd(lo, magic));
    __m128i hi_bits = _mm_slli_epi64(_mm_castpd_si128(_mm_add_pd(hi, magic)), 32);
    _mm_storeu_si128((__m128i *)p, _mm_blend_epi16(lo_bits, hi_bits, 0xCC));
}

/* -------------------------------------------------------------------- dmasks -- */
JM_INLINE vdmask md_and(vdmask a, vdmask b) { return _mm_and_pd(a, b); }
JM_INLINE vdmask md_or(vdmask a, vdmask b) { return _mm_or_pd(a, b); }
JM_INLINE vdmask md_not(vdmask a) { return _mm_xor_pd(a, _mm_castsi128_pd(_mm_set1_epi32(-1))); }
JM_INLINE int md_any(vdmask m) { return _mm_movemask_pd(m) != 0; }

/* ------------------------------------------------------------------ drecords -- */
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

/* ---------------------------------------------------------- kernel overrides -- */
#define JM_COMPOSE_ROWS 1 /* docs/design/domain-checks.md */

/*
 * jm_copy_increasing: four entries a step in two registers, checked as the generic version (no
 * 64-bit compare before SSE4.2: unsigned differences and the top two bits, simd/common.h).
 */
#define JM_NATIVE_COPY_INCREASING
JM_INLINE int jm_copy_increasing(const intptr_t *index, intptr_t *copy, size_t n) {
    size_t k = 0;
    __m128i last = _mm_set1_epi64x(-1), top = _mm_setzero_si128();
    const __m128i one = _mm_set1_epi64x(1);
    for (; k + 4 <= n; k += 4) {
        const __m128i v0 = _mm_loadu_si128((const __m128i *)(index + k));
        const __m128i v1 = _mm_loadu_si128((const __m128i *)(index + k + 2));
        _mm_storeu_si128((__m128i *)(copy + k), v0);
        _mm_storeu_si128((__m128i *)(copy + k + 2), v1);
        const __m128i step0 = _mm_sub_epi64(v0, _mm_alignr_epi8(v0, last, 8)); /* v0 - (last[1], v0[0]) */
        const __m128i step1 = _mm_sub_epi64(v1, _mm_alignr_epi8(v1, v0, 8));
        top = _mm_or_si128(top, _mm_or_si128(_mm_or_si128(_mm_sub_epi64(step0, one), _mm_sub_epi64(step1, one)),
                                             _mm_or_si128(v0, v1)));
        last = v1;
    }
    uint64_t top_bits = (uint64_t)_mm_cvtsi128_si64(_mm_or_si128(top, _mm_unpackhi_epi64(top, top)));
    for (; k < n; k++) { /* the last entries of n not a multiple of 4 */
        const intptr_t v = index[k];
        copy[k] = v;
        top_bits |= ((uint64_t)v - (uint64_t)(k ? copy[k - 1] : -1) - 1) | (uint64_t)v;
    }
    return !(top_bits >> 62);
}
