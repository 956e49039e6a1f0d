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
#define T_ATAN2 atan2_approx
#define T_HALF_SIN_COS half_angle_sin_cos
#define T_TO_ROTATION quat_to_rotation
#define T_FROM_ROTATION rotation_to_quat_array
#define T_NEAR_ZERO 0x1p-12
#define T_SERIES_ANGLE2 0.0625
#define T_PARALLEL2 0x1p-40 /* (16 ulp)^2 */
#define T_FAR_RADIANS 32.0
#define T_FAR_DEGREES 1800.0
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
#undef T_ATAN2
#undef T_HALF_SIN_COS
#undef T_TO_ROTATION
#undef T_FROM_ROTATION
#undef T_NEAR_ZERO
#undef T_SERIES_ANGLE2
#undef T_PARALLEL2
#undef T_FAR_RADIANS
#undef T_FAR_DEGREES

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
#define T_ATAN2 atan2_f64
#define T_HALF_SIN_COS half_angle_sin_cos_f64
#define T_TO_ROTATION quat_to_rotation_f64
#define T_FROM_ROTATION rotation_to_quat_f64
#define T_NEAR_ZERO 0x1p-27
#define T_SERIES_ANGLE2 0x1p-14
#define T_PARALLEL2 0x1p-98 /* (16 ulp)^2 */
#define T_FAR_RADIANS 0x1p20
#define T_FAR_DEGREES 0x1p20
#include "algebra_lanes.h"
