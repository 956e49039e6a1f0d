/*
 * quat_math.h - quaternion math shared by kernel families (included after simd/common.h, so it is
 * compiled per ISA like its includers).
 */
#ifndef JM_QUAT_MATH_H
#define JM_QUAT_MATH_H

#include "simd/common.h"

/* EACH(g, groups, statement): the statement for every group g < groups. Kernels that convert
   several blocks of lanes at once write each step for all groups before the next step, so that
   the groups' dependency chains overlap in the instruction window. */
#define EACH(g, groups, statement)            \
    for (int g = 0; g < (groups); g++) {      \
        statement;                            \
    }

/* squares, is_near_unit (| |q|^2 - 1 | < 2^-12: every normalised float32 quaternion),
   rotation_from_squares and divisor_entries on float32 lanes */
#define T vf
#define T_MASK vmask
#define T_OP(op) v_##op
#define T_MASK_OP(op) m_##op
#define T_FN(name) name
#define T_NEAR_UNIT (1.0f / 4096)
#include "quat_rotation.h"
#undef T
#undef T_MASK
#undef T_OP
#undef T_MASK_OP
#undef T_FN
#undef T_NEAR_UNIT

/* the same on float64 lanes (squares_f64, ..., divisor_entries_f64; | |q|^2 - 1 | < 2^-28:
   every quaternion normalised in float64) */
#define T vd
#define T_MASK vdmask
#define T_OP(op) vd_##op
#define T_MASK_OP(op) md_##op
#define T_FN(name) name##_f64
#define T_NEAR_UNIT 0x1p-28
#include "quat_rotation.h"
#undef T
#undef T_MASK
#undef T_OP
#undef T_MASK_OP
#undef T_FN
#undef T_NEAR_UNIT

/*
 * rotation_to_quat: the unit quaternion of a rotation matrix r (row-major, 9 elements).
 *
 * Largest-divisor method: the four numbers 4x^2 = 1 + r0 - r4 - r8, 4y^2 = 1 - r0 + r4 - r8,
 * 4z^2 = 1 - r0 - r4 + r8 and 4w^2 = 1 + r0 + r4 + r8 always sum to 4, so the largest is >= 1.
 * Its component is sqrt(t)/2 and the other three are sums or differences of off-diagonal pairs
 * times 1/(2 sqrt(t)) - never a division by a small number. The case is picked per lane without
 * branches (ties go to the lowest of x, y, z, w), and the component used as divisor comes out
 * positive. The matrix is not orthogonalised: for a non-rotation the result is whatever this
 * formula gives, normalised. Domain: rotation matrices. Outside it: finite r whose candidates and
 * entries (sums of three elements and 1) stay finite, |elements| below about 1e38, give a finite
 * unit quaternion; NaN or inf in r, or sums that overflow, give NaN in all four components (the
 * same class on every path: the entries are exact IEEE sums).
 * Accuracy, float32, rotation input: angle error <= 1e-6 rad, | |q| - 1 | <= 1e-6, including
 * case boundaries and 180-degree rotations.
 */
/* v_scale_pow2(e, 4), bit for bit, with a short path for blocks whose largest |e[i]| is normal in
   every lane (every rotation matrix): there v_scale_pow2's lift is 1 and its cap never binds, so
   the scale is the flipped exponent halved. Why: the full step cost as much as the rest of the
   conversion */
JM_INLINE void scale_pow2_entries(vf e[4]) {
    vf largest = v_abs(e[0]); /* in v_scale_pow2's order, so that a NaN is kept or dropped alike */
    for (int i = 1; i < 4; i++)
        largest = v_max(largest, v_abs(e[i]));
    if (JM_UNLIKELY(m_any(m_not(v_ge(largest, v_set1(FLT_MIN)))))) { /* zero, subnormal or NaN */
        v_scale_pow2(e, 4);
        return;
    }
    const vf exponent_bits = v_set1(jm_float_from_bits(0x7f800000u));
    vf scale = v_mul(v_xor(v_and(largest, exponent_bits), exponent_bits), v_set1(0.5f));
    for (int i = 0; i < 4; i++)
        e[i] = v_mul(e[i], scale);
}

JM_INLINE void rotation_to_quat(const vf r[9], vf *qx, vf *qy, vf *qz, vf *qw) {
    vf e[4];
    (void)divisor_entries(r, e);
    /* every entry is 4 * component * (divisor component): normalised after an exact power-of-two
       scaling. Why: squaring the entries of a matrix with elements near 1e20 overflowed, and
       rsqrt(inf) gave 0 (a zero quaternion) on some paths and NaN on others */
    scale_pow2_entries(e);
    vf x = e[0], y = e[1], z = e[2], w = e[3];
    vf inv_norm = v_rsqrt(v_fmadd(x, x, v_fmadd(y, y, v_fmadd(z, z, v_mul(w, w)))));
    *qx = v_mul(x, inv_norm);
    *qy = v_mul(y, inv_norm);
    *qz = v_mul(z, inv_norm);
    *qw = v_mul(w, inv_norm);
}

/*
 * rotation_to_quat_f64: rotation_to_quat on float64 lanes, for the float64 kernels.
 *
 * The same largest-divisor candidates, case choice (ties to the lowest of x, y, z, w) and
 * positive divisor component; the four entries 4 c d (d the divisor component) are then
 * normalised in one step: scaled by a power of two (vd_scale_pow2, exact) so that the sum of
 * squares, in [1, 16), can neither overflow nor underflow, then multiplied by 1 / its square root
 * (a square root and a division: faster than an estimate with two corrections,
 * docs/design/float64-kernels.md). Finite input gives a finite unit quaternion; NaN input NaN.
 * Accuracy, float64, rotation input (the float64 rounding of a rotation): angle error
 * <= 2e-15 rad and | |q| - 1 | <= 1e-15 against an extended-precision evaluation, including
 * case boundaries and 180-degree rotations (tests/kernels/test_convert.py; 3.8e-16 rad and 3.2e-16
 * measured over 300,000 rotations).
 */
JM_INLINE void rotation_to_quat_f64(const vd r[9], vd q[4]) {
    divisor_entries_f64(r, q); /* the entry table of rotation_to_quat */
    vd_scale_pow2(q, 4);
    vd norm2 = vd_fmadd(q[0], q[0], vd_fmadd(q[1], q[1], vd_fmadd(q[2], q[2], vd_mul(q[3], q[3]))));
    vd inv_norm = vd_div(vd_set1(1.0), vd_sqrt(norm2));
    for (int i = 0; i < 4; i++)
        q[i] = vd_mul(q[i], inv_norm);
}

/*
 * quat_to_rotation: R = the rotation of q / |q|, with h = 1 / |q|^2:
 *
 *   R = [(ww+xx-yy-zz) h   2(xy - wz) h       2(xz + wy) h    ]
 *       [2(xy + wz) h      (ww-xx+yy-zz) h    2(yz - wx) h    ]
 *       [2(xz - wy) h      2(yz + wx) h       (ww-xx-yy+zz) h ]
 *
 * Ten products of the components, then one scaling each. The diagonal as a difference of
 * squares, rather than the shorter 1 - 2(yy+zz), halves the worst float32 error (elements near
 * -1 lose two roundings at magnitude 2 in the short form). For nearly unit q
 * (| |q|^2 - 1 | < 2^-12, every normalised float32 quaternion) h is 2 - |q|^2 instead of the
 * reciprocal: exact (Sterbenz), relative error (|q|^2 - 1)^2 < 6e-8.
 * Any other q is first multiplied by the power of two that puts its largest |component| in
 * [1, 2) (v_scale_pow2; exact, so R does not change) and h is the refined reciprocal (about
 * 1 ulp, see v_rcp): every finite non-zero q, from a subnormal 2^-149 to FLT_MAX, gives its
 * rotation without overflow or underflow; a zero q gives NaN (0 * 1/0), an inf or NaN
 * component NaN. That step runs only for blocks holding such a q (a branch on the lanes'
 * near-unit test): normalised input, the common case, pays one test per block, and a lane's
 * result never depends on its neighbours.
 * Accuracy, float32: unit q, max abs element error 2.4e-7 measured over 10^7 random unit
 * quaternions on every path (bound 5e-7, tested); any finite non-zero scale, 2.5e-7 measured
 * over 2^-149 ... 2^127 (tools/convert_numerics.py; bound 5e-7, tested).
 */
JM_INLINE void quat_to_rotation(vf x, vf y, vf z, vf w, vf r[9]) {
    vf q[4] = {x, y, z, w}, sq[4];
    vf norm2 = squares(q, sq);
    vmask near_unit = is_near_unit(norm2);
    if (JM_UNLIKELY(m_any(m_not(near_unit)))) { /* out of line (docs/design/float64-kernels.md) */
        vf scaled[4] = {x, y, z, w};
        v_scale_pow2(scaled, 4);
        for (int i = 0; i < 4; i++)
            q[i] = v_select(near_unit, q[i], scaled[i]);
        norm2 = squares(q, sq);
        near_unit = is_near_unit(norm2);
    }
    vf p[6];
    products(q, p);
    vf h = v_select(near_unit, v_sub(v_set1(2.0f), norm2), v_rcp(norm2));
    rotation_from_squares(sq, p, h, r);
}

/*
 * quat_to_rotation_f64: quat_to_rotation on float64 lanes, the same formula (ten products, the
 * diagonal as a difference of squares, one scaling by h = 1 / |q|^2 each).
 * For nearly unit q (| |q|^2 - 1 | < 2^-28, every quaternion normalised in float64) h is
 * 2 - |q|^2: exact (Sterbenz), relative error (|q|^2 - 1)^2 < 2^-56. Any other q (a float32
 * quaternion widened to float64 included) is first multiplied by the power of two that puts
 * its largest |component| in [1, 2) (vd_scale_pow2, exact) and h is a correctly rounded
 * division: every finite non-zero q, from 2^-1074 to DBL_MAX, gives its rotation; a zero q
 * gives NaN (0 * 1/0), an inf or NaN component NaN, in its own record only (that step runs for
 * blocks holding such a q; a lane's result never depends on its neighbours).
 * Accuracy, float64: max abs element error <= 1e-15 against an extended-precision evaluation,
 * unit q and any finite non-zero scale, every path (tests/kernels/test_convert.py; 4.5e-16 measured over
 * 300,000 unit quaternions, 1.3e-16 over 2^-1074 ... DBL_MAX).
 */
JM_INLINE void quat_to_rotation_f64(vd x, vd y, vd z, vd w, vd r[9]) {
    vd q[4] = {x, y, z, w}, sq[4];
    vd norm2 = squares_f64(q, sq);
    vdmask near_unit = is_near_unit_f64(norm2);
    vd h;
    if (JM_UNLIKELY(md_any(md_not(near_unit)))) {
        vd scaled[4] = {x, y, z, w};
        vd_scale_pow2(scaled, 4);
        for (int i = 0; i < 4; i++)
            q[i] = vd_select(near_unit, q[i], scaled[i]);
        norm2 = squares_f64(q, sq);
        h = vd_select(near_unit, vd_sub(vd_set1(2.0), norm2), vd_div(vd_set1(1.0), norm2));
    } else {
        h = vd_sub(vd_set1(2.0), norm2);
    }
    vd p[6];
    products_f64(q, p);
    rotation_from_squares_f64(sq, p, h, r);
}

/*
 * atan(y) / y = 1 + s Q(s) for s = y^2 in [0, tan(pi/8)^2]: relative error 7.1e-18 with the
 * coefficients rounded to double (tools/fit_interp_polys.py, float64 section). atanc_tail_f64
 * is Q(s), for callers that add u s Q(s) to u in one fused step (atan2_f64 in trig.h); atanc_f64
 * the whole ratio (the float64 slerp weights).
 */
JM_INLINE vd atanc_tail_f64(vd s) {
    vd s2 = vd_mul(s, s), s4 = vd_mul(s2, s2), s8 = vd_mul(s4, s4);
    vd q01 = vd_fmadd(vd_set1(0.19999999999995521), s, vd_set1(-0.33333333333333331));
    vd q23 = vd_fmadd(vd_set1(0.11111111015256361), s, vd_set1(-0.14285714284666542));
    vd q45 = vd_fmadd(vd_set1(0.076921831908260865), s, vd_set1(-0.090909045781239026));
    vd q67 = vd_fmadd(vd_set1(0.0585814891280221), s, vd_set1(-0.066645114473819475));
    vd q89 = vd_fmadd(vd_set1(0.039231658295587189), s, vd_set1(-0.050854497379402598));
    vd q8_10 = vd_fmadd(vd_set1(-0.01917688711906226), s2, q89);
    vd q0_7 = vd_fmadd(vd_fmadd(q67, s2, q45), s4, vd_fmadd(q23, s2, q01));
    return vd_fmadd(q8_10, s8, q0_7);
}

JM_INLINE vd atanc_f64(vd s) { return vd_fmadd(atanc_tail_f64(s), s, vd_set1(1.0)); }

#endif /* JM_QUAT_MATH_H */
