/*
 * algebra.c - the element-wise rotation algebra on plain float arrays: quaternion product,
 * conjugate and inverse, rotating vectors, rotation vectors, rotation angles, the swing-twist
 * decomposition and the continuous 6-D representation, float32 and float64.
 *
 * Compiled once per ISA (see simd/common.h). Each block handles JM_W (float32) or JM_WD (float64)
 * records, one per vector lane; the kernels are written once in algebra_lanes.h and included
 * here once per lane type. Contracts and bounds: above each compute function there, measured
 * bounds in docs/families/algebra.md (tests/kernels/test_algebra.py checks them on every path).
 */
#include "jointmath.h"
#include "simd/common.h"
#include "quat_math.h"
#include "trig.h"

/* rotation_to_quat and rotation_to_quat_f64 behind one signature */
JM_INLINE void rotation_to_quat_array(const vf r[9], vf q[4]) { rotation_to_quat(r, &q[0], &q[1], &q[2], &q[3]); }

/*
 * atan_nonneg: atan2(y, x) in [0, pi/2] for y, x >= 0 (float32), in one division: with small, big
 * the smaller and larger of y and x, u = small / big, or (small - big) / (small + big) where
 * small > tan(pi/8) big (then atan = pi/4 + atan(u)), so |u| <= tan(pi/8); atan(u) by the classic
 * single-precision odd polynomial; then pi/4 or pi/2 - (...) where y > x, the constants in two
 * parts (pi/2 = hi + lo, the hi part exact in float) so that their rounding does not enter.
 * y = x = 0 gives NaN (0 / 0); the callers want NaN there (a zero quaternion).
 */
JM_INLINE vf atan_nonneg(vf y, vf x) {
    vf big = v_max(y, x), small = v_min(y, x);
    vmask above = v_gt(small, v_mul(big, v_set1(0.414213562f)));
    vf u = v_div(v_select(above, v_sub(small, big), small), v_select(above, v_add(small, big), big));
    vf u2 = v_mul(u, u);
    vf p = v_fmadd(v_fmadd(v_fmadd(v_fmadd(v_fmadd(v_set1(8.05374449538e-2f), u2, v_set1(-1.38776856032e-1f)), u2,
                                           v_set1(1.99777106478e-1f)), u2, v_set1(-3.33329491539e-1f)),
                           v_mul(u2, u), v_set1(0.0f)), v_set1(1.0f), u);
    vmask steep = v_gt(y, x);
    /* k = 0 (flat, small u), pi/4 (above), pi/2 (steep, small u); steep subtracts p */
    vf k_hi = v_select(above, v_set1(0.785398185253143310546875f), v_select(steep, v_set1(1.57079637050628662109375f), v_set1(0.0f)));
    vf k_lo = v_select(above, v_set1(-2.1855694e-08f), v_select(steep, v_set1(-4.3711388e-08f), v_set1(0.0f)));
    vf signed_p = v_select(steep, v_negate(p), p);
    return v_add(v_add(k_hi, signed_p), k_lo);
}

/* float32: 2^-12 makes (s / c)^2 / 3 < 2e-8 (below half an ulp); the series below 0.25 rad
   leaves theta^6 / 322560 < 8e-10; half_angle_sin_cos holds 1.2e-7 up to 40 rad / 2000 degrees */
#define T vf
#define T_MASK vmask
#define T_OP(op) v_##op
#define T_MASK_OP(op) m_##op
#define T_FN(name) name
#define T_S float
#define T_W JM_W
#define T_QUAD 16
#define T_FROM_BITS jm_float_from_bits
#define T_EXPONENT_BITS 0x7f800000u
#define T_MIN_NORMAL FLT_MIN
#define T_ATAN atan_nonneg
#define T_RANGE_LO 0x1p-50
#define T_RANGE_HI 0x1p50
#define T_HALF_SIN_COS half_angle_sin_cos
#define T_TO_ROTATION quat_to_rotation
#define T_FROM_ROTATION rotation_to_quat_array
#define T_NEAR_ZERO 0x1p-12
#define T_SERIES_ANGLE2 0.0625
#define T_PARALLEL2 0x1p-40 /* (16 ulp)^2 */
#define T_FAR_RADIANS 32.0
#define T_FAR_DEGREES 1800.0
#define T_RSQRT v_rsqrt_fine /* about 1 ulp, no division: simd/common.h */
#define T_LOAD_RECORDS v_load_records /* packed records as whole vectors where the path has them */
#define T_STORE_RECORDS v_store_records
#define T_SIXD_LO 0x1p-100 /* then |b2|^2 >= T_PARALLEL2 |a2|^2 >= 2^-100 too: normal */
#define T_SIXD_LO2 0x1p-60
#define T_SIXD_HI 0x1p100
#define T_SWING_LO 0x1p-100 /* swing_twist's short form: |(p, w)|^2 >= this, |q|^2 <= T_SWING_HI */
#define T_SWING_HI 0x1p100
#include "algebra_lanes.h"
#undef T
#undef T_MASK
#undef T_OP
#undef T_MASK_OP
#undef T_FN
#undef T_S
#undef T_W
#undef T_QUAD
#undef T_FROM_BITS
#undef T_EXPONENT_BITS
#undef T_MIN_NORMAL
#undef T_ATAN
#undef T_RANGE_LO
#undef T_RANGE_HI
#undef T_HALF_SIN_COS
#undef T_TO_ROTATION
#undef T_FROM_ROTATION
#undef T_NEAR_ZERO
#undef T_SERIES_ANGLE2
#undef T_PARALLEL2
#undef T_FAR_RADIANS
#undef T_FAR_DEGREES
#undef T_RSQRT
#undef T_SWING_LO
#undef T_SWING_HI
#undef T_SIXD_LO
#undef T_SIXD_LO2
#undef T_SIXD_HI
#undef T_LOAD_RECORDS
#undef T_STORE_RECORDS

/* records of `quads` dquads (32 bytes) each, dquad k's components in c[4k .. 4k + 3] */
JM_INLINE void load_records_f64(const char *base, ptrdiff_t stride, int quads, vd *c) {
    for (int k = 0; k < quads; k++)
        vd_load_quads(base + 32 * k, stride, &c[4 * k], &c[4 * k + 1], &c[4 * k + 2], &c[4 * k + 3]);
}
JM_INLINE void store_records_f64(char *base, ptrdiff_t stride, int quads, const vd *c) {
    for (int k = 0; k < quads; k++)
        vd_store_quads(base + 32 * k, stride, c[4 * k], c[4 * k + 1], c[4 * k + 2], c[4 * k + 3]);
}

/* float64: 2^-27 makes (s / c)^2 / 3 < 3e-17; the series below 2^-7 rad leaves
   theta^6 / 322560 < 2e-18; half_angle_sin_cos_f64 reduces exactly up to 2^20 (either unit) */
#define T vd
#define T_MASK vdmask
#define T_OP(op) vd_##op
#define T_MASK_OP(op) md_##op
#define T_FN(name) name##_f64
#define T_S double
#define T_W JM_WD
#define T_QUAD 32
#define T_FROM_BITS jm_double_from_bits
#define T_EXPONENT_BITS 0x7ff0000000000000ull
#define T_MIN_NORMAL DBL_MIN
#define T_ATAN atan2_f64
#define T_RANGE_LO 0x1p-450
#define T_RANGE_HI 0x1p450
#define T_HALF_SIN_COS half_angle_sin_cos_f64
#define T_TO_ROTATION quat_to_rotation_f64
#define T_FROM_ROTATION rotation_to_quat_f64
#define T_NEAR_ZERO 0x1p-27
#define T_SERIES_ANGLE2 0x1p-14
#define T_PARALLEL2 0x1p-98 /* (16 ulp)^2 */
#define T_FAR_RADIANS 0x1p20
#define T_FAR_DEGREES 0x1p20
#define T_RSQRT(x) vd_div(vd_set1(1.0), vd_sqrt(x)) /* estimates need two more steps for 2e-15 */
#define T_LOAD_RECORDS load_records_f64
#define T_STORE_RECORDS store_records_f64
#define T_SIXD_LO 0x1p-900
#define T_SIXD_LO2 0x1p-800
#define T_SIXD_HI 0x1p900
#define T_SWING_LO 0x1p-900
#define T_SWING_HI 0x1p900
#include "algebra_lanes.h"
