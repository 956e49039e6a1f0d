/*
 * simd/neon.h - the arm64 NEON path: JM_W = 4 floats, JM_WD = 2 doubles per vector (128-bit).
 * NEON is baseline on arm64 (no target flags). Included by simd/common.h only.
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
 * Overrides of common.h's generic helpers: packed quads by de-interleaving loads and stores
 * (jm_quads_packed, jm_load_quads_packed, jm_store_quads_packed).
 * Kernel overrides (simd/common.h): JM_COMPOSE_ROWS.
 */
#ifndef JM_SIMD_COMMON_H
#error "include simd/common.h, which selects this header"
#endif

#include <arm_neon.h>

/* ---------------------------------------------------------------------- path -- */
#define JM_ISA_NAME neon
#define JM_W 4
typedef float32x4_t vf;
typedef uint32x4_t vmask;
typedef uint32x4_t vi;
#define JM_WD 2
typedef float64x2_t vd;
typedef uint64x2_t vdmask;

/* ------------------------------------------------------------------- float32 -- */
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
 * refinements of common.h (v_rsqrt, v_rcp, v_rsqrt_fine) are at least as accurate as on x86 and
 * every kernel keeps its bound.
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
JM_INLINE vf v_select(vmask m, vf a, vf b) { return vbslq_f32(m, a, b); }
JM_INLINE vf v_loadu(const float *p) { return vld1q_f32(p); }
JM_INLINE vf v_diff_of_products(vf a, vf b, vf c, vf d) {
    float64x2_t lo = vsubq_f64(vmulq_f64(vcvt_f64_f32(vget_low_f32(a)), vcvt_f64_f32(vget_low_f32(b))),
                               vmulq_f64(vcvt_f64_f32(vget_low_f32(c)), vcvt_f64_f32(vget_low_f32(d))));
    float64x2_t hi = vsubq_f64(vmulq_f64(vcvt_high_f64_f32(a), vcvt_high_f64_f32(b)),
                               vmulq_f64(vcvt_high_f64_f32(c), vcvt_high_f64_f32(d)));
    return vcvt_high_f32_f64(vcvt_f32_f64(lo), hi);
}

/* --------------------------------------------------------------------- masks -- */
JM_INLINE vmask m_and(vmask a, vmask b) { return vandq_u32(a, b); }
JM_INLINE vmask m_or(vmask a, vmask b) { return vorrq_u32(a, b); }
JM_INLINE vmask m_not(vmask a) { return vmvnq_u32(a); }
JM_INLINE int m_any(vmask m) { return vmaxvq_u32(m) != 0; }
JM_INLINE int m_count(vmask m) { return (int)vaddvq_u32(vshrq_n_u32(m, 31)); }

/* --------------------------------------------------------------------- int32 -- */
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
JM_INLINE vi v_load_u32(const char *p) { return vld1q_u32((const uint32_t *)p); }
JM_INLINE void v_store_u32(char *p, vi a) { vst1q_u32((uint32_t *)p, a); }
JM_INLINE void v_store_u64(char *p, vi lo, vi hi) {
    vst1q_u32((uint32_t *)p, vzip1q_u32(lo, hi));
    vst1q_u32((uint32_t *)(p + 16), vzip2q_u32(lo, hi));
}

/* ------------------------------------------------------------------- records -- */
/* lane-wise vector k of a block: the quad of record k */
JM_INLINE float32x4_t jm_load_4_quads(const char *base, ptrdiff_t stride, int k) {
    return vld1q_f32((const float *)(base + k * stride));
}
JM_INLINE void jm_store_4_quads(char *base, ptrdiff_t stride, int k, float32x4_t v) {
    vst1q_f32((float *)(base + k * stride), v);
}
JM_INLINE float32x4_t jm_load_4_quads_idx(const char *b, ptrdiff_t s, const intptr_t *idx, int k) {
    return vld1q_f32((const float *)JM_REC(b, s, idx, k));
}
JM_INLINE void jm_store_4_quads_idx(char *b, ptrdiff_t s, const intptr_t *idx, int k, float32x4_t v) {
    vst1q_f32((float *)JM_REC(b, s, idx, k), v);
}
/* each quad's element e (0 .. 3, a constant) in its four lanes */
JM_INLINE float32x4_t jm_quad_splat(float32x4_t v, int e) {
    switch (e) {
    case 0: return vdupq_laneq_f32(v, 0);
    case 1: return vdupq_laneq_f32(v, 1);
    case 2: return vdupq_laneq_f32(v, 2);
    default: return vdupq_laneq_f32(v, 3);
    }
}
/* each quad's lanes 0 .. 2 from filler, lane 3 from v */
JM_INLINE float32x4_t jm_quad_last(float32x4_t filler, float32x4_t v) { return vcopyq_laneq_f32(filler, 3, v, 3); }
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
JM_INLINE void jm_copy_record32(char *dst, const char *src) { memcpy(dst, src, 32); }

/* ------------------------------------------------------------------- float64 -- */
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
JM_INLINE vd vd_select(vdmask m, vd a, vd b) { return vbslq_f64(m, a, b); }
JM_INLINE vd vd_loadu(const double *p) { return vld1q_f64(p); }
JM_INLINE void vd_store_u32(char *p, vd a) { vst1_u32((uint32_t *)p, vmovn_u64(vcvtq_u64_f64(a))); }
JM_INLINE void vd_store_u64_halves(char *p, vd lo, vd hi) {
    vst1q_u64((uint64_t *)p, vorrq_u64(vshlq_n_u64(vcvtq_u64_f64(hi), 32), vcvtq_u64_f64(lo)));
}

/* -------------------------------------------------------------------- dmasks -- */
JM_INLINE vdmask md_and(vdmask a, vdmask b) { return vandq_u64(a, b); }
JM_INLINE vdmask md_or(vdmask a, vdmask b) { return vorrq_u64(a, b); }
JM_INLINE vdmask md_not(vdmask a) { return vreinterpretq_u64_u32(vmvnq_u32(vreinterpretq_u32_u64(a))); }
JM_INLINE int md_any(vdmask m) { return vmaxvq_u32(vreinterpretq_u32_u64(m)) != 0; }

/* ------------------------------------------------------------------ drecords -- */
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

/* ----------------------------------------------------------------- overrides -- */
/* packed quads (stride 16): one de-interleaving load or store does the transpose */
#define JM_NATIVE_PACKED_QUADS
JM_INLINE int jm_quads_packed(ptrdiff_t stride) { return stride == 16; }
JM_INLINE void jm_load_quads_packed(const char *base, vf *c0, vf *c1, vf *c2, vf *c3) {
    float32x4x4_t v = vld4q_f32((const float *)base);
    *c0 = v.val[0];
    *c1 = v.val[1];
    *c2 = v.val[2];
    *c3 = v.val[3];
}
JM_INLINE void jm_store_quads_packed(char *base, vf c0, vf c1, vf c2, vf c3) {
    float32x4x4_t v = {{c0, c1, c2, c3}};
    vst4q_f32((float *)base, v);
}

/* ---------------------------------------------------------- kernel overrides -- */
#define JM_COMPOSE_ROWS 1 /* as SSE: 4 lanes, the same trade (docs/design/domain-checks.md) */
