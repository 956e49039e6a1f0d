/*
 * simd/avx512.h - the AVX-512 (F, DQ, BW, VL) path: JM_W = 16 floats, JM_WD = 8 doubles per
 * vector (512-bit), comparisons into mask registers. Included by simd/common.h only.
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
 * Overrides of common.h's generic helpers: the 32-byte record pairs (JM_OCT_RAW, voct,
 * v_load_octs, v_store_octs), packed records as whole vectors (jm_records_packed,
 * jm_load_records_packed, jm_store_records_packed) and double 3x3 matrices whole rows apart
 * (vd_mat3_packed, vd_load_mat3_packed).
 * Kernel overrides (simd/common.h): JM_PREFETCH_FAR_BYTES, JM_RECORD32_SINGLE_MOVE, JM_COMPOSE_ROWS,
 * the hand-offs to the AVX2 path (JM_HANDOFF_FN, JM_HANDOFF_QUATS_TO_MATRICES_F64,
 * JM_HANDOFF_SLERP_JOINTS_INDEXED), jm_copy_increasing.
 *
 * Lane order: v_load_quads (and the records loads built on it, v_load_u32, v_store_u32,
 * v_store_u64) put record 4j + L of a block in lane 4L + j: the quads of records 4j .. 4j+3 fill
 * one vector (128-bit lane L = record 4j + L) and the in-lane transpose of the four such vectors
 * does the rest, so packed records load and store as whole 512-bit vectors. The indexed loads
 * keep lane i = record i.
 */
#ifndef JM_SIMD_COMMON_H
#error "include simd/common.h, which selects this header"
#endif

#include <immintrin.h>

/* ---------------------------------------------------------------------- path -- */
#define JM_ISA_NAME avx512
#define JM_W 16
typedef __m512 vf;
typedef __mmask16 vmask;
typedef __m512i vi;
#define JM_WD 8
typedef __m512d vd;
typedef __mmask8 vdmask;

/* ------------------------------------------------------------------- float32 -- */
JM_INLINE vf v_set1(float a) { return _mm512_set1_ps(a); }
JM_INLINE vf v_add(vf a, vf b) { return _mm512_add_ps(a, b); }
JM_INLINE vf v_sub(vf a, vf b) { return _mm512_sub_ps(a, b); }
JM_INLINE vf v_mul(vf a, vf b) { return _mm512_mul_ps(a, b); }
JM_INLINE vf v_div(vf a, vf b) { return _mm512_div_ps(a, b); }
JM_INLINE vf v_min(vf a, vf b) { return _mm512_min_ps(a, b); }
JM_INLINE vf v_max(vf a, vf b) { return _mm512_max_ps(a, b); }
JM_INLINE vf v_sqrt(vf a) { return _mm512_sqrt_ps(a); }
JM_INLINE vf v_fmadd(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
JM_INLINE vf v_fnmadd(vf a, vf b, vf c) { return _mm512_fnmadd_ps(a, b, c); }
JM_INLINE vf v_rsqrt_approx(vf a) { return _mm512_rsqrt14_ps(a); }
JM_INLINE vf v_rcp_approx(vf a) { return _mm512_rcp14_ps(a); }
JM_INLINE vf v_xor(vf a, vf b) { return _mm512_xor_ps(a, b); }
JM_INLINE vf v_and(vf a, vf b) { return _mm512_and_ps(a, b); }
JM_INLINE vmask v_gt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
JM_INLINE vmask v_ge(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
JM_INLINE vmask v_lt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
JM_INLINE vf v_select(vmask m, vf a, vf b) { return _mm512_mask_blend_ps(m, b, a); }
JM_INLINE vf v_loadu(const float *p) { return _mm512_loadu_ps(p); }
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

/* --------------------------------------------------------------------- masks -- */
JM_INLINE vmask m_and(vmask a, vmask b) { return (vmask)(a & b); }
JM_INLINE vmask m_or(vmask a, vmask b) { return (vmask)(a | b); }
JM_INLINE vmask m_not(vmask a) { return (vmask)~a; }
JM_INLINE int m_any(vmask m) { return m != 0; }
JM_INLINE int m_count(vmask m) { return jm_popcount(m); }

/* --------------------------------------------------------------------- int32 -- */
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

/* ------------------------------------------------------------------- records -- */
/* lane-wise vector k of a block: the quads of records 4k .. 4k+3 (128-bit lane L = record 4k + L) */
JM_INLINE __m512 jm_load_4_quads(const char *base, ptrdiff_t stride, int k) {
    const char *p = base + 4 * k * stride;
    __m512 v = _mm512_castps128_ps512(_mm_loadu_ps((const float *)p));
    v = _mm512_insertf32x4(v, _mm_loadu_ps((const float *)(p + stride)), 1);
    v = _mm512_insertf32x4(v, _mm_loadu_ps((const float *)(p + 2 * stride)), 2);
    return _mm512_insertf32x4(v, _mm_loadu_ps((const float *)(p + 3 * stride)), 3);
}
JM_INLINE void jm_store_4_quads(char *base, ptrdiff_t stride, int k, __m512 v) {
    char *p = base + 4 * k * stride;
    _mm_storeu_ps((float *)p, _mm512_castps512_ps128(v));
    _mm_storeu_ps((float *)(p + stride), _mm512_extractf32x4_ps(v, 1));
    _mm_storeu_ps((float *)(p + 2 * stride), _mm512_extractf32x4_ps(v, 2));
    _mm_storeu_ps((float *)(p + 3 * stride), _mm512_extractf32x4_ps(v, 3));
}
/* indexed: 128-bit lane L holds the quad of the record of lane 4L + k */
JM_INLINE __m512 jm_load_4_quads_idx(const char *b, ptrdiff_t s, const intptr_t *idx, int k) {
    __m512 v = _mm512_castps128_ps512(_mm_loadu_ps((const float *)JM_REC(b, s, idx, k)));
    v = _mm512_insertf32x4(v, _mm_loadu_ps((const float *)JM_REC(b, s, idx, k + 4)), 1);
    v = _mm512_insertf32x4(v, _mm_loadu_ps((const float *)JM_REC(b, s, idx, k + 8)), 2);
    return _mm512_insertf32x4(v, _mm_loadu_ps((const float *)JM_REC(b, s, idx, k + 12)), 3);
}
JM_INLINE void jm_store_4_quads_idx(char *b, ptrdiff_t s, const intptr_t *idx, int k, __m512 v) {
    _mm_storeu_ps((float *)JM_REC(b, s, idx, k), _mm512_castps512_ps128(v));
    _mm_storeu_ps((float *)JM_REC(b, s, idx, k + 4), _mm512_extractf32x4_ps(v, 1));
    _mm_storeu_ps((float *)JM_REC(b, s, idx, k + 8), _mm512_extractf32x4_ps(v, 2));
    _mm_storeu_ps((float *)JM_REC(b, s, idx, k + 12), _mm512_extractf32x4_ps(v, 3));
}
/* each quad's element e (0 .. 3, a constant) in its four lanes */
JM_INLINE __m512 jm_quad_splat(__m512 v, int e) {
    switch (e) {
    case 0: return _mm512_permute_ps(v, 0x00);
    case 1: return _mm512_permute_ps(v, 0x55);
    case 2: return _mm512_permute_ps(v, 0xAA);
    default: return _mm512_permute_ps(v, 0xFF);
    }
}
/* each quad's lanes 0 .. 2 from filler, lane 3 from v */
JM_INLINE __m512 jm_quad_last(__m512 filler, __m512 v) { return _mm512_mask_blend_ps(0x8888, filler, v); }
/* 4x4 transpose inside every 128-bit lane */
JM_INLINE void jm_transpose_lanes(vf *a, vf *b, vf *c, vf *d) {
    __m512 t0 = _mm512_unpacklo_ps(*a, *b), t1 = _mm512_unpackhi_ps(*a, *b);
    __m512 t2 = _mm512_unpacklo_ps(*c, *d), t3 = _mm512_unpackhi_ps(*c, *d);
    *a = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2)));
    *b = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2)));
    *c = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
    *d = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
}
/* one 256-bit move, as on AVX2 */
JM_INLINE void jm_copy_record32(char *dst, const char *src) {
    _mm256_storeu_ps((float *)dst, _mm256_loadu_ps((const float *)src));
}

/* ------------------------------------------------------------------- float64 -- */
JM_INLINE vd vd_set1(double a) { return _mm512_set1_pd(a); }
JM_INLINE vd vd_add(vd a, vd b) { return _mm512_add_pd(a, b); }
JM_INLINE vd vd_sub(vd a, vd b) { return _mm512_sub_pd(a, b); }
JM_INLINE vd vd_mul(vd a, vd b) { return _mm512_mul_pd(a, b); }
JM_INLINE vd vd_div(vd a, vd b) { return _mm512_div_pd(a, b); }
JM_INLINE vd vd_min(vd a, vd b) { return _mm512_min_pd(a, b); }
JM_INLINE vd vd_max(vd a, vd b) { return _mm512_max_pd(a, b); }
JM_INLINE vd vd_sqrt(vd a) { return _mm512_sqrt_pd(a); }
JM_INLINE vd vd_fmadd(vd a, vd b, vd c) { return _mm512_fmadd_pd(a, b, c); }
JM_INLINE vd vd_fnmadd(vd a, vd b, vd c) { return _mm512_fnmadd_pd(a, b, c); }
JM_INLINE vd vd_round(vd a) { return _mm512_roundscale_pd(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
JM_INLINE vd vd_xor(vd a, vd b) { return _mm512_xor_pd(a, b); }
JM_INLINE vd vd_and(vd a, vd b) { return _mm512_and_pd(a, b); }
JM_INLINE vdmask vd_gt(vd a, vd b) { return _mm512_cmp_pd_mask(a, b, _CMP_GT_OQ); }
JM_INLINE vdmask vd_ge(vd a, vd b) { return _mm512_cmp_pd_mask(a, b, _CMP_GE_OQ); }
JM_INLINE vdmask vd_lt(vd a, vd b) { return _mm512_cmp_pd_mask(a, b, _CMP_LT_OQ); }
JM_INLINE vdmask vd_eq(vd a, vd b) { return _mm512_cmp_pd_mask(a, b, _CMP_EQ_OQ); }
JM_INLINE vd vd_select(vdmask m, vd a, vd b) { return _mm512_mask_blend_pd(m, b, a); }
JM_INLINE vd vd_loadu(const double *p) { return _mm512_loadu_pd(p); }
JM_INLINE void vd_store_u32(char *p, vd a) { _mm256_storeu_si256((__m256i *)p, _mm512_cvtpd_epu32(a)); }
JM_INLINE void vd_store_u64_halves(char *p, vd lo, vd hi) {
    _mm512_storeu_si512(p, _mm512_or_si512(_mm512_slli_epi64(_mm512_cvtpd_epu64(hi), 32), _mm512_cvtpd_epu64(lo)));
}

/* -------------------------------------------------------------------- dmasks -- */
JM_INLINE vdmask md_and(vdmask a, vdmask b) { return (vdmask)(a & b); }
JM_INLINE vdmask md_or(vdmask a, vdmask b) { return (vdmask)(a | b); }
JM_INLINE vdmask md_not(vdmask a) { return (vdmask)~a; }
JM_INLINE int md_any(vdmask m) { return m != 0; }

/* ------------------------------------------------------------------ drecords -- */
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

/* ----------------------------------------------------------------- overrides -- */
/*
 * Record pairs: the whole records in raw (full 512-bit loads when contiguous), the first quads
 * transposed out of them by permutes: 12 permutes per 16 records instead of 20 inserts and
 * shuffles.
 */
#define JM_NATIVE_OCTS
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

/*
 * Packed records (stride == 16 * quads) move as full 512-bit vectors rearranged by 128-bit block
 * permutes: far fewer shuffles and stores than one quad at a time. Group j of a block: r[k] =
 * quad k of records 4j .. 4j+3 (128-bit lane L = record 4j + L), v_load_quads' lane order.
 */
#define JM_NATIVE_PACKED_RECORDS
/* index vector picking 128-bit blocks b0..b3 (0-3 from the first source, 4-7 the second) */
#define JM_BLOCKS(b0, b1, b2, b3)                                                                \
    _mm512_set_epi32(4 * (b3) + 3, 4 * (b3) + 2, 4 * (b3) + 1, 4 * (b3), 4 * (b2) + 3, 4 * (b2) + 2, \
                     4 * (b2) + 1, 4 * (b2), 4 * (b1) + 3, 4 * (b1) + 2, 4 * (b1) + 1, 4 * (b1),     \
                     4 * (b0) + 3, 4 * (b0) + 2, 4 * (b0) + 1, 4 * (b0))
#define JM_LANES_OF_BLOCK(b) ((__mmask16)(0xF << (4 * (b))))

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

JM_INLINE int jm_records_packed(ptrdiff_t stride, int quads) { return stride == 16 * quads; }

JM_INLINE void jm_load_records_packed(const char *base, ptrdiff_t stride, int quads, vf *c) {
    __m512 g[4][3];
    for (int j = 0; j < 4; j++)
        jm_load_packed_group(base + 4 * j * stride, quads, g[j]);
    for (int k = 0; k < quads; k++) {
        jm_transpose_lanes(&g[0][k], &g[1][k], &g[2][k], &g[3][k]);
        for (int j = 0; j < 4; j++)
            c[4 * k + j] = g[j][k];
    }
}

JM_INLINE void jm_store_records_packed(char *base, ptrdiff_t stride, int quads, const vf *c) {
    __m512 g[4][3];
    for (int k = 0; k < quads; k++) {
        for (int j = 0; j < 4; j++)
            g[j][k] = c[4 * k + j];
        jm_transpose_lanes(&g[0][k], &g[1][k], &g[2][k], &g[3][k]);
    }
    for (int j = 0; j < 4; j++)
        jm_store_packed_group(base + 4 * j * stride, quads, g[j]);
}

/*
 * Double 3x3 matrices a stride >= 72 apart (every record after the one before it): one 8x8
 * transpose of doubles 0..7 (full-record 64-byte loads) and double 8 of record i through lane i
 * of a one-lane masked load at base + i * stride + 64 - 8 i, whose 64 bytes lie between the
 * block's first and last byte (for i < 7 they reach past record i into the next; masked-off
 * lanes are not read and cannot fault). 24 shuffles per 8 matrices, where three overlapping
 * dquads take 24 512-bit shuffles plus 12 half extracts or inserts (docs/design/simd-layer.md).
 * No packed store: the path's only vd_store_mat3 caller runs the AVX2 kernel (csrc/convert.c).
 */
#define JM_NATIVE_PACKED_MAT3
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
JM_INLINE int vd_mat3_packed(ptrdiff_t stride) { return stride >= 72; }
JM_INLINE void vd_load_mat3_packed(const char *base, ptrdiff_t stride, vd r[9]) {
    __m512d rows[8], last = _mm512_setzero_pd();
    for (int i = 0; i < 8; i++) {
        rows[i] = _mm512_loadu_pd((const double *)(base + i * stride));
        last = _mm512_mask_loadu_pd(last, (__mmask8)(1u << i), (const double *)(base + i * stride + 64 - 8 * i));
    }
    jm_transpose_8x8_pd(rows, r);
    r[8] = last;
}

/* ---------------------------------------------------------- kernel overrides -- */
#define JM_PREFETCH_FAR_BYTES 256 /* as AVX2 */
#define JM_RECORD32_SINGLE_MOVE 1
#define JM_COMPOSE_ROWS 1 /* docs/design/domain-checks.md */

/*
 * Hand-offs to the AVX2 path (same results: the fixed-t slerp and the float64 conversion compute
 * the same operations in the same order on both): on a core that executes 512-bit shuffles as
 * two 256-bit halves the AVX2 kernels are faster for these calls (docs/design/simd-layer.md).
 * jm_quats_to_matrices_f64 always (its 8-lane transposes in and out cost more than the 8-lane
 * math gains); jm_slerp_joints_indexed unless the index has blocks of 16 and at least half of
 * them (of up to JM_RUNS_SAMPLE evenly spread) are runs of consecutive joints (one 512-bit move
 * per two records, as the full call): a scattered block of 16 reads and writes every record on
 * its own. Sampling, not reading every block's ends: the decision must cost next to nothing
 * beside the kernel's own pass over the index (docs/design/partial-body-scheduler.md).
 */
#define JM_HANDOFF_FN(name) JM_CAT(name, avx2)
#define JM_HANDOFF_QUATS_TO_MATRICES_F64 1
#define JM_RUNS_SAMPLE 16
static inline int jm_runs_dominate(const intptr_t *index, size_t n) {
    const size_t blocks = n / JM_W, step = blocks > JM_RUNS_SAMPLE ? blocks / JM_RUNS_SAMPLE : 1;
    size_t runs = 0, sampled = 0;
    for (size_t b = 0; b < blocks; b += step, sampled++)
        runs += index[b * JM_W + JM_W - 1] - index[b * JM_W] == JM_W - 1;
    return sampled && 2 * runs >= sampled;
}
#define JM_HANDOFF_SLERP_JOINTS_INDEXED(index, n) (!jm_runs_dominate(index, n))

/* jm_copy_increasing: eight entries a step, compared in registers as signed 64-bit integers */
#define JM_NATIVE_COPY_INCREASING
JM_INLINE int jm_copy_increasing(const intptr_t *index, intptr_t *copy, size_t n) {
    size_t k = 0;
    __m512i last = _mm512_set1_epi64(-1); /* the entry before the first: index[0] > -1 */
    __mmask8 not_above = 0;
    for (; k + 8 <= n; k += 8) {
        const __m512i v = _mm512_loadu_si512((const void *)(index + k));
        _mm512_storeu_si512((void *)(copy + k), v);
        not_above |= _mm512_cmple_epi64_mask(v, _mm512_alignr_epi64(v, last, 7)); /* last[7], v[0..6] */
        last = v;
    }
    uint64_t bad = not_above;
    bad |= jm_copy_increasing_rest(index, copy, k, n);
    return !bad;
}
