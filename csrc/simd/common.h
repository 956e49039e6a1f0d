/*
 * simd/common.h - the vector layer every kernel file is written against.
 *
 * A kernel file includes this header once; the build compiles that file once per ISA path with
 * JM_ISA set to one of the values of csrc/isas.h (and the path's target flags), so the same
 * source becomes jm_<kernel>_scalar and, on x86-64, jm_<kernel>_sse, jm_<kernel>_avx2 and
 * jm_<kernel>_avx512, or on arm64 jm_<kernel>_neon (NEON is baseline there: no target flags).
 *
 * This header selects the path's header (simd/scalar.h, sse.h, avx2.h, avx512.h, neon.h; the
 * only place that tests JM_ISA), which defines the primitives below, the same set in the same
 * order on every path; then it defines, once, the helpers built on them. A path with a faster
 * way to do what a generic helper does defines JM_NATIVE_<NAME> and its own version (listed at
 * the top of its header); the generic one below is then skipped. See docs/design/simd-layer.md.
 *
 * Primitives (each path header):
 *   vf, vmask     a vector of JM_W floats (float itself on the scalar path) and the result of a
 *                 lane-wise comparison, consumed by v_select and the m_* ops. v_min / v_max
 *                 return b when the two compare equal or either is NaN (minps / maxps);
 *                 comparisons are ordered (false with a NaN); v_select(m, a, b) takes a where m
 *                 is set. v_fmadd(a, b, c) = a*b + c and v_fnmadd(a, b, c) = c - a*b, fused on
 *                 AVX2, AVX-512 and NEON, a separate multiply and add on SSE and the scalar path
 *                 (one more rounding, covered by every bound). v_rsqrt_approx / v_rcp_approx:
 *                 the hardware estimates (12 bits on SSE/AVX2, 14 on AVX-512, ~16 on NEON after
 *                 one step, exact on the scalar path). v_loadu: JM_W floats, any alignment.
 *                 m_any: whether any lane is set; m_count: how many.
 *   v_diff_of_products(a, b, c, d)
 *                 a*b - c*d with the sign of the exact value: both products of floats are exact
 *                 in double (24 + 24 bits), their difference is rounded once, so the result is
 *                 zero only when a*b == c*d exactly and otherwise has the exact sign; it is then
 *                 rounded to float (a nonzero difference of multiples of 2^-149 stays nonzero,
 *                 one past FLT_MAX becomes an infinity of the same sign). The magnitude is only
 *                 as accurate as that final rounding.
 *   vi            JM_W 32-bit integer lanes, for bit packing. v_round_int rounds to nearest, ties
 *                 to even (the default MXCSR mode on x86, vcvtnq on NEON, lrintf on the scalar
 *                 path), so every path produces the same integers from the same floats. vi_shl /
 *                 vi_shr are logical shifts; vi_add wraps. v_load_u32 / v_store_u32 move JM_W
 *                 consecutive uint32 to and from the lanes of the records they belong to (the
 *                 lane order of v_load_quads: a permutation on AVX-512, the identity elsewhere);
 *                 v_store_u64 writes JM_W consecutive uint64, record k's from lane k of lo (bits
 *                 31..0) and hi (bits 63..32), in the same lane order.
 *   v_round_quotient(a, b, c, &rest)
 *                 round(a * (b / c)) for floats a, b, c (c non-zero, the result below 2^31 in
 *                 magnitude), with rest = q - round(q) for the value q computed in double: b / c
 *                 rounded once, times a rounded once, so |q - a b / c| <= 2^-52 |a b / c| (also
 *                 for denormal inputs, which double holds as normal numbers). round is to
 *                 nearest, ties to even; q - round(q) is exact in double and then rounded to
 *                 float, so |rest| <= 1/2. Every path performs the same double operations: the
 *                 results are bit-identical. Calls that share b and c share the division (the
 *                 compiler merges the identical divisions of the inlined calls).
 *   records       Records (joints, quaternions, matrices) move between memory and registers as
 *                 128-bit "quads" of four floats, by plain loads, shuffles and stores (no
 *                 gather/scatter). jm_load_4_quads(base, stride, k) reads the quads of records
 *                 k, k + 4, ... of a block of JM_W records base + i * stride into one vector
 *                 (no shuffles; jm_store_4_quads writes them back; the _idx forms take the
 *                 records at JM_REC). jm_load_lanewise (below, from these) reads a whole block
 *                 as four such vectors, which jm_transpose_lanes turns into components
 *                 (v_load_quads); jm_store_lanewise writes them back. v_load_quads_lanewise / v_store_quads_lanewise: the same for
 *                 the records of the lanes i at JM_REC(base, stride, idx, i), see below.
 *                 jm_copy_record32: one 32-byte record, src to dst.
 *   vd, vdmask    the same for doubles: JM_WD lanes, the ops of vf with the prefixes vd_ / md_
 *                 and the same semantics, plus vd_round (to nearest, ties to even) and vd_eq.
 *                 vd_loadu: JM_WD consecutive doubles, any alignment. vd_store_u32: JM_WD uint32
 *                 to p (any alignment), lane i to p + 4 i, from lanes holding integers in
 *                 [0, 2^32) (exactly; anything else is not converted meaningfully);
 *                 vd_store_u64_halves: JM_WD uint64 to p, lane i's hi * 2^32 + lo to p + 8 i,
 *                 from lanes lo and hi holding integers in [0, 2^32).
 *   vd_load_quads / vd_store_quads
 *                 records of four doubles ("dquads", 32 bytes): for i in [0, JM_WD) read doubles
 *                 [0, 4) at base + i * stride, transposed: c0 lane i = first double of record i,
 *                 ..., c3 lane i = fourth double; the store writes the inverse. Lane i belongs to
 *                 record i on EVERY path (no permutation, unlike the float32 AVX-512 order).
 *                 stride is in bytes and may be anything (unaligned, negative). Records of 3
 *                 doubles go through staged buffers (JM_FOR_BLOCKS_D's tails) or overlapping
 *                 quads (a 3x3 matrix as doubles 0..3, 4..7, 5..8), or stride 24 when the 8
 *                 bytes after the last record belong to the caller: vd_store_quads writes the
 *                 records in increasing order on every path, so each record's fourth double is
 *                 overwritten by the next record's first (the Euler kernels' blocks before the
 *                 last).
 *
 * Helpers (this header): v_rsqrt v_rcp v_rsqrt_fine; jm_float_from_bits v_abs v_negate
 * v_scale_pow2 v_pow2_inverse and the path-identical v_mul_add v_neg_mul_add v_rcp_ieee
 * v_rsqrt_ieee (the same bits on every path), and their float64 twins jm_double_from_bits vd_abs
 * vd_negate vd_scale_pow2 vd_pow2_inverse vd_mul_add vd_neg_mul_add vd_rcp_ieee vd_rsqrt_ieee (one template,
 * simd/lane_helpers.h); jm_load_lanewise jm_store_lanewise v_load_quads_lanewise
 * v_store_quads_lanewise; v_load_quads v_store_quads v_load_quads_idx v_store_quads_idx
 * v_load_octs v_store_octs v_load_records v_store_records; vd_load_mat3 vd_store_mat3;
 * JM_FOR_BLOCKS JM_FOR_BLOCKS_D. Paths override these by name (JM_NATIVE_<NAME>):
 * JM_NATIVE_RECIPROCALS, JM_NATIVE_LANEWISE, JM_NATIVE_OCTS, and the fast paths tested per call
 * JM_NATIVE_PACKED_QUADS (jm_quads_packed), JM_NATIVE_PACKED_RECORDS (jm_records_packed), JM_NATIVE_PACKED_MAT3
 * (vd_mat3_packed).
 *
 * Kernel overrides (the section of that name below): what a kernel does differently on some
 * paths, with a default here and each differing path's value in its header.
 */
#ifndef JM_SIMD_COMMON_H
#define JM_SIMD_COMMON_H

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../isas.h"

#ifndef JM_ISA
#error "JM_ISA must be defined by the build (see setup.py)"
#endif

/* JM_FN(name) gives the ISA-suffixed symbol the dispatcher links against. */
#define JM_CAT_(a, b) a##_##b
#define JM_CAT(a, b) JM_CAT_(a, b)
#define JM_FN(name) JM_CAT(name, JM_ISA_NAME)

/*
 * Compiler portability: GCC and clang (Linux, macOS) or MSVC (Windows; x86-64 has no POPCNT
 * guarantee at the SSE4.1 level, so it counts mask bits in plain C).
 * JM_PREFETCH(p): a hint to load the cache line at p; JM_PREFETCH_L2(p): the same into the L2
 * cache only (a request far ahead then does not hold one of the L1's few miss buffers while
 * memory answers); JM_UNREACHABLE(): tells the optimiser that a branch never runs;
 * JM_UNLIKELY(c): c, hinted to be rarely true; JM_COLD: a function kept out of line and out of
 * the hot code (rare fallbacks).
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
#define JM_NOINLINE __declspec(noinline) /* kept out of line, without JM_COLD's placement */
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
#define JM_NOINLINE __attribute__((noinline)) /* kept out of line, without JM_COLD's placement */
#define jm_popcount(m) __builtin_popcount(m)
#endif

/* The record of lane i: base + idx[i] * stride, or base + i * stride when idx is NULL. */
#define JM_REC(base, stride, idx, i) ((base) + ((idx) ? (ptrdiff_t)(idx)[i] : (ptrdiff_t)(i)) * (stride))

/*
 * The end of jm_copy_increasing (kernel overrides, below) on the paths that compare 64-bit
 * integers in registers (simd/avx2.h, avx512.h): index[k..n) copied after copy[0..k); nonzero
 * when a value is not above the one before it (-1 before the first), read from the copy.
 */
JM_INLINE uint64_t jm_copy_increasing_rest(const intptr_t *index, intptr_t *copy, size_t k, size_t n) {
    uint64_t bad = 0;
    intptr_t previous = k ? copy[k - 1] : -1; /* the copy: no second read of index */
    for (; k < n; k++) {
        const intptr_t v = index[k];
        copy[k] = v;
        bad |= v <= previous;
        previous = v;
    }
    return bad;
}

/* ------------------------------------------------------------ the path header -- */
#if JM_ISA == JM_ISA_SCALAR
#include "scalar.h"
#elif JM_ISA == JM_ISA_SSE
#include "sse.h"
#elif JM_ISA == JM_ISA_AVX2
#include "avx2.h"
#elif JM_ISA == JM_ISA_AVX512
#include "avx512.h"
#elif JM_ISA == JM_ISA_NEON
#include "neon.h"
#else
#error "unknown JM_ISA (see csrc/isas.h)"
#endif

/* ------------------------------------------------------ lane-wise record blocks -- */
/* A block's quads as four vectors, vector k holding records k, k + 4, ... one per 128-bit lane
   (jm_transpose_lanes then makes components of them), from the path's jm_load_4_quads /
   jm_store_4_quads; idx as JM_REC. */
#ifndef JM_NATIVE_LANEWISE
JM_INLINE void jm_load_lanewise(const char *base, ptrdiff_t stride, vf *c0, vf *c1, vf *c2, vf *c3) {
    *c0 = jm_load_4_quads(base, stride, 0);
    *c1 = jm_load_4_quads(base, stride, 1);
    *c2 = jm_load_4_quads(base, stride, 2);
    *c3 = jm_load_4_quads(base, stride, 3);
}
JM_INLINE void jm_store_lanewise(char *base, ptrdiff_t stride, vf c0, vf c1, vf c2, vf c3) {
    jm_store_4_quads(base, stride, 0, c0);
    jm_store_4_quads(base, stride, 1, c1);
    jm_store_4_quads(base, stride, 2, c2);
    jm_store_4_quads(base, stride, 3, c3);
}
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
#endif

/* -------------------------------------------------------- reciprocal helpers -- */
#ifndef JM_NATIVE_RECIPROCALS
/*
 * v_rsqrt: 1/sqrt(a) to about 2 ulp: the estimate refined by one Newton-Raphson step
 * y' = y * (1.5 - 0.5 * a * y * y). a = 0 gives NaN (inf * 0 in the step); callers keep a away
 * from zero. (The scalar path divides exactly, for all three.)
 */
JM_INLINE vf v_rsqrt(vf a) {
    vf y = v_rsqrt_approx(a);
    vf half_a_y = v_mul(v_mul(v_set1(0.5f), a), y);
    return v_mul(y, v_fnmadd(half_a_y, y, v_set1(1.5f)));
}

/* v_rcp: 1/a to about 1 ulp: the estimate refined by one Newton-Raphson step y' = y + y (1 - a y);
   far cheaper than a division on every SIMD path. */
JM_INLINE vf v_rcp(vf a) {
    vf y = v_rcp_approx(a);
    return v_fmadd(y, v_fnmadd(a, y, v_set1(1.0f)), y);
}

/*
 * v_rsqrt_fine: 1/sqrt(a) to rounding accuracy (about 1 ulp): the estimate y with relative error
 * e0, then the second-order correction y' = y (1 + e/2 + 3e^2/8) of e = 1 - a y^2, which leaves
 * ~e0^3 (< 1e-10 from the 12-bit estimate, where v_rsqrt's one Newton step leaves ~2e-7). Costs
 * one operation more than v_rsqrt. Same a = 0 caveat.
 */
JM_INLINE vf v_rsqrt_fine(vf a) {
    vf y = v_rsqrt_approx(a);
    vf e = v_fnmadd(v_mul(a, y), y, v_set1(1.0f));
    return v_fmadd(v_mul(y, e), v_fmadd(e, v_set1(0.375f), v_set1(0.5f)), y);
}
#endif

/* --------------------------------------------- float32 and float64 lane helpers -- */
#define JM_T float
#define JM_T_BITS uint32_t
#define JM_T_EXPONENT_MASK 0x7f800000u
#define JM_T_MIN_NORMAL FLT_MIN
#define JM_T_VEC vf
#define JM_T_OP(name) v_##name
#define JM_T_FROM_BITS jm_float_from_bits
#include "lane_helpers.h"

#define JM_T double
#define JM_T_BITS uint64_t
#define JM_T_EXPONENT_MASK 0x7ff0000000000000ull
#define JM_T_MIN_NORMAL DBL_MIN
#define JM_T_VEC vd
#define JM_T_OP(name) vd_##name
#define JM_T_FROM_BITS jm_double_from_bits
#include "lane_helpers.h"

/* --------------------------------------------------- float32 record loads, stores -- */
#ifndef JM_NATIVE_PACKED_QUADS
/* whether the path moves quads `stride` apart with its own jm_load_quads_packed and
   jm_store_quads_packed (the transposed load and store of v_load_quads): by default never */
JM_INLINE int jm_quads_packed(ptrdiff_t stride) {
    (void)stride;
    return 0;
}
JM_INLINE void jm_load_quads_packed(const char *base, vf *c0, vf *c1, vf *c2, vf *c3) {
    (void)base, (void)c0, (void)c1, (void)c2, (void)c3;
}
JM_INLINE void jm_store_quads_packed(char *base, vf c0, vf c1, vf c2, vf c3) {
    (void)base, (void)c0, (void)c1, (void)c2, (void)c3;
}
#endif

/*
 * v_load_quads: for i in [0, JM_W) read floats [0, 4) at (base + i * stride) and return them
 * transposed: c0 lane i = first float of record i, ..., c3 lane i = fourth float (AVX-512: the
 * records of a block in its lane order, see simd/avx512.h). v_store_quads writes the inverse.
 * stride is in bytes and may be anything (records of any size, unaligned, negative strides of
 * sliced arrays). Kernels can mix quads of different record layouts freely: the lane order is
 * the same for every record size.
 */
JM_INLINE void v_load_quads(const char *base, ptrdiff_t stride, vf *c0, vf *c1, vf *c2, vf *c3) {
    if (jm_quads_packed(stride)) {
        jm_load_quads_packed(base, c0, c1, c2, c3);
        return;
    }
    vf r0, r1, r2, r3;
    jm_load_lanewise(base, stride, &r0, &r1, &r2, &r3);
    jm_transpose_lanes(&r0, &r1, &r2, &r3);
    *c0 = r0;
    *c1 = r1;
    *c2 = r2;
    *c3 = r3;
}
JM_INLINE void v_store_quads(char *base, ptrdiff_t stride, vf c0, vf c1, vf c2, vf c3) {
    if (jm_quads_packed(stride)) {
        jm_store_quads_packed(base, c0, c1, c2, c3);
        return;
    }
    jm_transpose_lanes(&c0, &c1, &c2, &c3);
    jm_store_lanewise(base, stride, c0, c1, c2, c3);
}

/*
 * Indexed and untransposed quad access. Lane i belongs to the record at JM_REC(base, stride,
 * idx, i) on every path (idx = NULL: base + i * stride); the index is read with plain loads,
 * never a gather/scatter.
 * v_load_quads_idx / v_store_quads_idx: as v_load_quads / v_store_quads for those records.
 * v_load_quads_lanewise / v_store_quads_lanewise (each path's primitives): the same quads NOT
 * transposed (no shuffles): the four vectors hold the JM_W quads in a fixed arrangement, so only
 * lane-wise arithmetic between vectors loaded the same way is meaningful (a lerp of
 * translations); the store puts every float back where the load found it.
 */
JM_INLINE void v_load_quads_idx(const char *base, ptrdiff_t stride, const intptr_t *idx, vf *c0, vf *c1, vf *c2,
                                vf *c3) {
    v_load_quads_lanewise(base, stride, idx, c0, c1, c2, c3);
    jm_transpose_lanes(c0, c1, c2, c3);
}
JM_INLINE void v_store_quads_idx(char *base, ptrdiff_t stride, const intptr_t *idx, vf c0, vf c1, vf c2, vf c3) {
    jm_transpose_lanes(&c0, &c1, &c2, &c3);
    v_store_quads_lanewise(base, stride, idx, c0, c1, c2, c3);
}

/*
 * 32-byte records of two quads ("octs", a joint's q and t): v_load_octs gives the FIRST quad of
 * JM_W records transposed (head[k] lane i = float k of the record of lane i, as
 * v_load_quads_idx) and the records in a raw form, JM_OCT_RAW vectors holding at least every
 * SECOND quad in a fixed lane-wise arrangement. Only lane-wise arithmetic between raw forms
 * loaded the same way is meaningful. v_store_octs writes the records back: first quad from head
 * (transposed), second quad from raw. Records as in v_load_quads_idx (idx may be NULL).
 */
#ifndef JM_NATIVE_OCTS
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

#ifndef JM_NATIVE_PACKED_RECORDS
/* whether the path moves records of `quads` quads `stride` apart with its own
   jm_load_records_packed and jm_store_records_packed: by default never */
JM_INLINE int jm_records_packed(ptrdiff_t stride, int quads) {
    (void)stride, (void)quads;
    return 0;
}
JM_INLINE void jm_load_records_packed(const char *base, ptrdiff_t stride, int quads, vf *c) {
    (void)base, (void)stride, (void)quads, (void)c;
}
JM_INLINE void jm_store_records_packed(char *base, ptrdiff_t stride, int quads, const vf *c) {
    (void)base, (void)stride, (void)quads, (void)c;
}
#endif

/*
 * v_load_records / v_store_records: whole records of `quads` quads (1, 2 or 3: float[4],
 * JOINT_QUAT, JOINT_MAT); c[4k + e] holds float e of quad k. The same as v_load_quads per quad,
 * in fewer instructions where the path packs them (jm_load_records_packed).
 */
JM_INLINE void v_load_records(const char *base, ptrdiff_t stride, int quads, vf *c) {
    if (jm_records_packed(stride, quads)) {
        jm_load_records_packed(base, stride, quads, c);
        return;
    }
    for (int k = 0; k < quads; k++)
        v_load_quads(base + 16 * k, stride, &c[4 * k], &c[4 * k + 1], &c[4 * k + 2], &c[4 * k + 3]);
}

JM_INLINE void v_store_records(char *base, ptrdiff_t stride, int quads, const vf *c) {
    if (jm_records_packed(stride, quads)) {
        jm_store_records_packed(base, stride, quads, c);
        return;
    }
    for (int k = 0; k < quads; k++)
        v_store_quads(base + 16 * k, stride, c[4 * k], c[4 * k + 1], c[4 * k + 2], c[4 * k + 3]);
}

/* ------------------------------------------------------ float64 3x3 matrices -- */
#ifndef JM_NATIVE_PACKED_MAT3
/* whether the path loads double 3x3 matrices `stride` apart with its own vd_load_mat3_packed:
   by default never */
JM_INLINE int vd_mat3_packed(ptrdiff_t stride) {
    (void)stride;
    return 0;
}
JM_INLINE void vd_load_mat3_packed(const char *base, ptrdiff_t stride, vd r[9]) {
    (void)base, (void)stride, (void)r;
}
#endif

/*
 * vd_load_mat3: for i in [0, JM_WD) read the nine doubles at (base + i * stride), a row-major
 * double[3][3], into r[0..9) lane i; vd_store_mat3 writes the inverse. stride is in bytes, any
 * value (records may overlap only when nothing is stored). Three overlapping dquads (doubles
 * 0..3, 4..7, 5..8: nothing past the record is touched), or the path's packed load.
 */
JM_INLINE void vd_load_mat3(const char *base, ptrdiff_t stride, vd r[9]) {
    if (vd_mat3_packed(stride)) {
        vd_load_mat3_packed(base, stride, r);
        return;
    }
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

/* ------------------------------------------------------------ kernel overrides -- */
/*
 * What a kernel does differently on some paths, named here so that the kernel sources test no
 * JM_ISA; each path header defines its own values under the same names (see its list).
 *
 * JM_PREFETCH_FAR_BYTES: how far ahead (bytes) the joint blends in place request the lines of
 * long lists beyond their near prefetches (csrc/joint_blocks.h, PREFETCH_FAR); 0: never.
 * JM_RECORD32_SINGLE_MOVE: 1 when jm_copy_record32 is one 256-bit access, which crosses a cache
 * line where the record starts 48 bytes into one (the indexed blends then copy some records by
 * halves, csrc/partial_body.c); 0 when it never crosses one more than memcpy does.
 * JM_HANDOFF_FN(name): the kernel `name` of the path this one hands some calls to (a path whose
 * own kernel is slower there and gives the same results); by default this path's own, never
 * called. JM_HANDOFF_QUATS_TO_MATRICES_F64: 1 when jm_quats_to_matrices_f64 always hands off;
 * JM_HANDOFF_SLERP_JOINTS_INDEXED(index, n): whether jm_slerp_joints_indexed hands off an index
 * of n joints. By default constants 0 (macros, not functions: the hand-off code is folded away
 * before the kernel is compiled, and leaves its object code as if it were not there).
 * JM_COMPOSE_ROWS: 1 where jm_compose_mats computes the blocks of packed records inside its domain
 * row by row, one record's row per 128-bit quad (jm_quad_splat, jm_quad_last), instead of moving
 * the records into lanes and back (csrc/compose.c); 0: always in lanes (the scalar path has no
 * quads).
 * jm_copy_increasing(index, copy, n): copies index[0..n) to copy[0..n) (copy may be index) and
 * returns 1 when the values copied are strictly increasing from 0 or more, each read once (the
 * check is made on the values as they were copied, never on a second read of index). It may
 * also return 0 for values of 2^62 or more (the caller then checks in full). Generic: chunks in
 * L1 are copied, then the copy is checked on unsigned differences (below).
 */
#ifndef JM_PREFETCH_FAR_BYTES
#define JM_PREFETCH_FAR_BYTES 0
#endif
#ifndef JM_RECORD32_SINGLE_MOVE
#define JM_RECORD32_SINGLE_MOVE 0
#endif
#ifndef JM_COMPOSE_ROWS
#define JM_COMPOSE_ROWS 0
#endif

#ifndef JM_HANDOFF_FN
#define JM_HANDOFF_FN(name) JM_FN(name)
#define JM_HANDOFF_QUATS_TO_MATRICES_F64 0
#define JM_HANDOFF_SLERP_JOINTS_INDEXED(index, n) 0
#endif

#ifndef JM_NATIVE_COPY_INCREASING
/* entries of index copied at a time, then checked in L1 (4 KB) */
#define JM_INDEX_CHUNK 512
/*
 * No 64-bit compare before SSE4.2 (nor on the scalar path): a strictly increasing copy of values
 * in [0, 2^62) has every copy[k] - copy[k - 1] - 1 and every copy[k] below 2^62; anything else
 * (a larger or negative value, a repeat, a step down) sets one of the two top bits. GCC
 * vectorises the check of a chunk.
 */
JM_INLINE int jm_copy_increasing(const intptr_t *index, intptr_t *copy, size_t n) {
    size_t k = 0;
    uint64_t top_bits = 0;
    for (; k < n; k += JM_INDEX_CHUNK) {
        const size_t len = n - k < JM_INDEX_CHUNK ? n - k : JM_INDEX_CHUNK;
        if (copy != index)
            memcpy(copy + k, index + k, len * sizeof(intptr_t));
        const intptr_t *chunk = copy + k;
        const uint64_t previous = k ? (uint64_t)chunk[-1] : (uint64_t)-1;
        top_bits |= ((uint64_t)chunk[0] - previous - 1) | (uint64_t)chunk[0];
        for (size_t j = 1; j < len; j++)
            top_bits |= ((uint64_t)chunk[j] - (uint64_t)chunk[j - 1] - 1) | (uint64_t)chunk[j];
    }
    return !(top_bits >> 62);
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

#endif /* JM_SIMD_COMMON_H */
