/*
 * simd/scalar.h - the scalar path: one float (JM_W = 1) and one double (JM_WD = 1) per "vector",
 * plain C with no intrinsics (setup.py builds it with -fno-tree-vectorize: the honest baseline).
 * Included by simd/common.h only.
 *
 * Every ISA header defines the same primitives, in this order (contracts in simd/common.h):
 *   path     JM_ISA_NAME, JM_W, vf, vmask, vi, JM_WD, vd, vdmask
 *   float32  v_set1 v_add v_sub v_mul v_div v_min v_max v_sqrt v_fmadd v_fnmadd v_rsqrt_approx
 *            v_rcp_approx v_xor v_and v_gt v_ge v_lt v_select v_loadu v_diff_of_products
 *   masks    m_and m_or m_not m_any m_count
 *   int32    vi_set1 v_round_int v_from_int vi_or vi_and vi_add vi_shl vi_shr vi_eq vi_select
 *            v_round_quotient v_load_u32 v_store_u32 v_store_u64
 *   records  jm_load_lanewise jm_store_lanewise v_load_quads_lanewise v_store_quads_lanewise
 *            jm_transpose_lanes jm_copy_record32
 *   float64  vd_set1 vd_add vd_sub vd_mul vd_div vd_min vd_max vd_sqrt vd_fmadd vd_fnmadd vd_round
 *            vd_xor vd_and vd_gt vd_ge vd_lt vd_eq vd_select vd_loadu vd_store_u32
 *            vd_store_u64_halves
 *   dmasks   md_and md_or md_not md_any
 *   drecords vd_load_quads vd_store_quads
 * Overrides of common.h's generic helpers: v_rsqrt, v_rcp, v_rsqrt_fine (exact divisions); the
 * lane-wise record loads and stores (one record: JM_NATIVE_LANEWISE).
 * Kernel overrides: none (simd/common.h's defaults).
 */
#ifndef JM_SIMD_COMMON_H
#error "include simd/common.h, which selects this header"
#endif

/* ---------------------------------------------------------------------- path -- */
#define JM_ISA_NAME scalar
#define JM_W 1
typedef float vf;
typedef int vmask;
typedef uint32_t vi;
#define JM_WD 1
typedef double vd;
typedef int vdmask;

/* ------------------------------------------------------------------- float32 -- */
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
JM_INLINE vf v_select(vmask m, vf a, vf b) { return m ? a : b; }
JM_INLINE vf v_loadu(const float *p) {
    float f;
    memcpy(&f, p, sizeof f);
    return f;
}
JM_INLINE vf v_diff_of_products(vf a, vf b, vf c, vf d) { return (float)((double)a * b - (double)c * d); }

/* --------------------------------------------------------------------- masks -- */
JM_INLINE vmask m_and(vmask a, vmask b) { return a & b; }
JM_INLINE vmask m_or(vmask a, vmask b) { return a | b; }
JM_INLINE vmask m_not(vmask a) { return !a; }
JM_INLINE int m_any(vmask m) { return m != 0; }
JM_INLINE int m_count(vmask m) { return m != 0; }

/* --------------------------------------------------------------------- int32 -- */
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
JM_INLINE vi v_round_quotient(vf a, vf b, vf c, vf *rest) {
    double q = (double)a * ((double)b / c);
    long rounded = lrint(q);
    *rest = (float)(q - (double)rounded);
    return (uint32_t)(int32_t)rounded;
}
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

/* ------------------------------------------------------------------- records -- */
/* One lane: a block is one record, its four lane-wise vectors are its floats, and the transpose
   is the identity. memcpy: records may be unaligned. */
#define JM_NATIVE_LANEWISE
JM_INLINE void jm_load_lanewise(const char *base, ptrdiff_t stride, vf *c0, vf *c1, vf *c2, vf *c3) {
    float q[4];
    (void)stride;
    memcpy(q, base, sizeof q);
    *c0 = q[0];
    *c1 = q[1];
    *c2 = q[2];
    *c3 = q[3];
}
JM_INLINE void jm_store_lanewise(char *base, ptrdiff_t stride, vf c0, vf c1, vf c2, vf c3) {
    float q[4] = {c0, c1, c2, c3};
    (void)stride;
    memcpy(base, q, sizeof q);
}
JM_INLINE void v_load_quads_lanewise(const char *base, ptrdiff_t stride, const intptr_t *idx, vf *c0, vf *c1,
                                     vf *c2, vf *c3) {
    jm_load_lanewise(JM_REC(base, stride, idx, 0), stride, c0, c1, c2, c3);
}
JM_INLINE void v_store_quads_lanewise(char *base, ptrdiff_t stride, const intptr_t *idx, vf c0, vf c1, vf c2,
                                      vf c3) {
    jm_store_lanewise(JM_REC(base, stride, idx, 0), stride, c0, c1, c2, c3);
}
JM_INLINE void jm_transpose_lanes(vf *a, vf *b, vf *c, vf *d) { (void)a, (void)b, (void)c, (void)d; }
JM_INLINE void jm_copy_record32(char *dst, const char *src) { memcpy(dst, src, 32); }

/* ------------------------------------------------------------------- float64 -- */
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
JM_INLINE vd vd_select(vdmask m, vd a, vd b) { return m ? a : b; }
JM_INLINE vd vd_loadu(const double *p) {
    double v;
    memcpy(&v, p, sizeof v); /* memcpy: p may be unaligned */
    return v;
}
JM_INLINE void vd_store_u32(char *p, vd a) {
    uint32_t v = (uint32_t)a;
    memcpy(p, &v, sizeof v);
}
JM_INLINE void vd_store_u64_halves(char *p, vd lo, vd hi) {
    uint64_t v = (uint64_t)hi << 32 | (uint64_t)lo;
    memcpy(p, &v, sizeof v);
}

/* -------------------------------------------------------------------- dmasks -- */
JM_INLINE vdmask md_and(vdmask a, vdmask b) { return a & b; }
JM_INLINE vdmask md_or(vdmask a, vdmask b) { return a | b; }
JM_INLINE vdmask md_not(vdmask a) { return !a; }
JM_INLINE int md_any(vdmask m) { return m != 0; }

/* ------------------------------------------------------------------ drecords -- */
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

/* ----------------------------------------------------------------- overrides -- */
/* The scalar path divides exactly where the SIMD paths refine an estimate. */
#define JM_NATIVE_RECIPROCALS
JM_INLINE vf v_rsqrt(vf a) { return 1.0f / sqrtf(a); }
JM_INLINE vf v_rcp(vf a) { return 1.0f / a; }
JM_INLINE vf v_rsqrt_fine(vf a) { return 1.0f / sqrtf(a); }
