/*
 * simd/avx2.h - the AVX2 + FMA path: JM_W = 8 floats, JM_WD = 4 doubles per vector (256-bit).
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
 * Overrides of common.h's generic helpers: the 32-byte record pairs (JM_OCT_RAW, voct,
 * v_load_octs, v_store_octs).
 * Kernel overrides (simd/common.h): JM_PREFETCH_FAR_BYTES, JM_RECORD32_SINGLE_MOVE, JM_COMPOSE_ROWS,
 * jm_copy_increasing.
 */
#ifndef JM_SIMD_COMMON_H
#error "include simd/common.h, which selects this header"
#endif

#include <immintrin.h>

/* ---------------------------------------------------------------------- path -- */
#define JM_ISA_NAME avx2
#define JM_W 8
typedef __m256 vf;
typedef __m256 vmask;
typedef __m256i vi;
#define JM_WD 4
typedef __m256d vd;
typedef __m256d vdmask;

/* ------------------------------------------------------------------- float32 -- */
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
JM_INLINE vf v_select(vmask m, vf a, vf b) { return _mm256_blendv_ps(b, a, m); }
JM_INLINE vf v_loadu(const float *p) { return _mm256_loadu_ps(p); }
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

/* --------------------------------------------------------------------- masks -- */
JM_INLINE vmask m_and(vmask a, vmask b) { return _mm256_and_ps(a, b); }
JM_INLINE vmask m_or(vmask a, vmask b) { return _mm256_or_ps(a, b); }
JM_INLINE vmask m_not(vmask a) { return _mm256_xor_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(-1))); }
JM_INLINE int m_any(vmask m) { return _mm256_movemask_ps(m) != 0; }
JM_INLINE int m_count(vmask m) { return jm_popcount((unsigned)_mm256_movemask_ps(m)); }

/* --------------------------------------------------------------------- int32 -- */
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
JM_INLINE vi v_load_u32(const char *p) { return _mm256_loadu_si256((const __m256i *)p); }
JM_INLINE void v_store_u32(char *p, vi a) { _mm256_storeu_si256((__m256i *)p, a); }
JM_INLINE void v_store_u64(char *p, vi lo, vi hi) {
    __m256i records_0145 = _mm256_unpacklo_epi32(lo, hi), records_2367 = _mm256_unpackhi_epi32(lo, hi);
    _mm256_storeu_si256((__m256i *)p, _mm256_permute2x128_si256(records_0145, records_2367, 0x20));
    _mm256_storeu_si256((__m256i *)(p + 32), _mm256_permute2x128_si256(records_0145, records_2367, 0x31));
}

/* ------------------------------------------------------------------- records -- */
/* lane-wise vector k of a block: the quads of records k (low 128-bit lane) and 4 + k (high) */
JM_INLINE __m256 jm_load_4_quads(const char *base, ptrdiff_t stride, int k) {
    const char *p = base + k * stride;
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps((const float *)p)),
                                _mm_loadu_ps((const float *)(p + 4 * stride)), 1);
}
JM_INLINE void jm_store_4_quads(char *base, ptrdiff_t stride, int k, __m256 v) {
    char *p = base + k * stride;
    _mm_storeu_ps((float *)p, _mm256_castps256_ps128(v));
    _mm_storeu_ps((float *)(p + 4 * stride), _mm256_extractf128_ps(v, 1));
}
JM_INLINE __m256 jm_load_4_quads_idx(const char *b, ptrdiff_t s, const intptr_t *idx, int k) {
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps((const float *)JM_REC(b, s, idx, k))),
                                _mm_loadu_ps((const float *)JM_REC(b, s, idx, k + 4)), 1);
}
JM_INLINE void jm_store_4_quads_idx(char *b, ptrdiff_t s, const intptr_t *idx, int k, __m256 v) {
    _mm_storeu_ps((float *)JM_REC(b, s, idx, k), _mm256_castps256_ps128(v));
    _mm_storeu_ps((float *)JM_REC(b, s, idx, k + 4), _mm256_extractf128_ps(v, 1));
}
/* each quad's element e (0 .. 3, a constant) in its four lanes */
JM_INLINE __m256 jm_quad_splat(__m256 v, int e) {
    switch (e) {
    case 0: return _mm256_permute_ps(v, 0x00);
    case 1: return _mm256_permute_ps(v, 0x55);
    case 2: return _mm256_permute_ps(v, 0xAA);
    default: return _mm256_permute_ps(v, 0xFF);
    }
}
/* each quad's lanes 0 .. 2 from filler, lane 3 from v */
JM_INLINE __m256 jm_quad_last(__m256 filler, __m256 v) { return _mm256_blend_ps(filler, v, 0x88); }
/* 4x4 transpose inside each 128-bit lane */
JM_INLINE void jm_transpose_lanes(vf *a, vf *b, vf *c, vf *d) {
    __m256 t0 = _mm256_unpacklo_ps(*a, *b), t1 = _mm256_unpackhi_ps(*a, *b);
    __m256 t2 = _mm256_unpacklo_ps(*c, *d), t3 = _mm256_unpackhi_ps(*c, *d);
    *a = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(t0), _mm256_castps_pd(t2)));
    *b = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(t0), _mm256_castps_pd(t2)));
    *c = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(t1), _mm256_castps_pd(t3)));
    *d = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(t1), _mm256_castps_pd(t3)));
}
/* one 256-bit move: memcpy of 32 bytes compiles to two 128-bit moves under the generic tuning
   (docs/design/simd-layer.md) */
JM_INLINE void jm_copy_record32(char *dst, const char *src) {
    _mm256_storeu_ps((float *)dst, _mm256_loadu_ps((const float *)src));
}

/* ------------------------------------------------------------------- float64 -- */
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
JM_INLINE vd vd_select(vdmask m, vd a, vd b) { return _mm256_blendv_pd(b, a, m); }
JM_INLINE vd vd_loadu(const double *p) { return _mm256_loadu_pd(p); }
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

/* -------------------------------------------------------------------- dmasks -- */
JM_INLINE vdmask md_and(vdmask a, vdmask b) { return _mm256_and_pd(a, b); }
JM_INLINE vdmask md_or(vdmask a, vdmask b) { return _mm256_or_pd(a, b); }
JM_INLINE vdmask md_not(vdmask a) { return _mm256_xor_pd(a, _mm256_castsi256_pd(_mm256_set1_epi32(-1))); }
JM_INLINE int md_any(vdmask m) { return _mm256_movemask_pd(m) != 0; }

/* ------------------------------------------------------------------ drecords -- */
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

/* ----------------------------------------------------------------- overrides -- */
/*
 * Record pairs: one 256-bit load per record (contiguous or indexed), records j and j + 4 split
 * into quads by two 128-bit permutes; records a constant stride apart other than 32 bytes load
 * one quad at a time (fewer shuffles for the lists with gaps, docs/design/simd-layer.md).
 */
#define JM_NATIVE_OCTS
#define JM_OCT_RAW 4
typedef struct { vf v[JM_OCT_RAW]; } voct; /* v[j]: the second quads of records j and j + 4 */

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

/* ---------------------------------------------------------- kernel overrides -- */
#define JM_COMPOSE_ROWS 1 /* docs/design/domain-checks.md */
/* the joint blends' far requests (csrc/joint_blocks.h, PREFETCH_FAR) and copies by halves */
#define JM_PREFETCH_FAR_BYTES 256
#define JM_RECORD32_SINGLE_MOVE 1

/* jm_copy_increasing: four entries a step, compared in registers as signed 64-bit integers */
#define JM_NATIVE_COPY_INCREASING
JM_INLINE int jm_copy_increasing(const intptr_t *index, intptr_t *copy, size_t n) {
    size_t k = 0;
    __m256i last = _mm256_set1_epi64x(-1), above = _mm256_set1_epi64x(-1);
    for (; k + 4 <= n; k += 4) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(index + k));
        _mm256_storeu_si256((__m256i *)(copy + k), v);
        /* last[3], v[0], v[1], v[2]: last[2..3] | v[0..1], then per 128-bit lane 8 bytes along */
        const __m256i before = _mm256_alignr_epi8(v, _mm256_permute2x128_si256(last, v, 0x21), 8);
        above = _mm256_and_si256(above, _mm256_cmpgt_epi64(v, before));
        last = v;
    }
    uint64_t bad = _mm256_movemask_epi8(above) != -1;
    bad |= jm_copy_increasing_rest(index, copy, k, n);
    return !bad;
}
