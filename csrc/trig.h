/*
 * trig.h - the vector sine, cosine and arctangent the kernel families share (Euler angles,
 * rotation vectors, rotation angles): sin and cos of a half angle with an exact reduction, and
 * atan2, on float32 and float64 lanes. Included after simd/common.h and quat_math.h (atan2_f64
 * uses atanc_tail_f64), so it is compiled per ISA like its includers.
 */
#ifndef JM_TRIG_H
#define JM_TRIG_H

#include "simd/common.h"
#include "quat_math.h"

/*
 * sin and cos of a half angle h = a / 2 (exact) for any float angle a with |a| < 2^20: h = k
 * quarter turns + r, then minimax polynomials on |r| <= pi/4 (the classic single-precision
 * coefficients) and the quadrant of k. In degrees the reduction h - 90 k is exact and r is
 * one rounding of (h - 90 k) pi / 180; in radians r = h - k pi/2 with a three-part pi/2
 * (Cody-Waite, exact products). Either way no rounding of a * pi / 360 enters the angle.
 * Accuracy: about 1 ulp of 1 (< 1.2e-7 abs) for |a| < 2000 (degrees) or 40 (radians).
 */
JM_INLINE void half_angle_sin_cos(vf a, int degrees, vf *sin_h, vf *cos_h) {
    vf h = v_mul(a, v_set1(0.5f)), r;
    vi k;
    if (degrees) {
        k = v_round_int(v_mul(h, v_set1(1.0f / 90)));
        r = v_mul(v_fnmadd(v_from_int(k), v_set1(90.0f), h), v_set1(0.0174532925f));
    } else {
        k = v_round_int(v_mul(h, v_set1(0.636619772f)));
        vf kf = v_from_int(k);
        r = v_fnmadd(kf, v_set1(1.5703125f), h);
        r = v_fnmadd(kf, v_set1(4.837512969970703125e-4f), r);
        r = v_fnmadd(kf, v_set1(7.54978995489188216e-8f), r);
    }
    vf r2 = v_mul(r, r);
    vf s = v_fmadd(v_mul(r2, r),
                   v_fmadd(v_fmadd(v_set1(-1.9515295891e-4f), r2, v_set1(8.3321608736e-3f)), r2, v_set1(-1.6666654611e-1f)),
                   r);
    vf c = v_fmadd(v_mul(r2, r2),
                   v_fmadd(v_fmadd(v_set1(2.443315711809948e-5f), r2, v_set1(-1.388731625493765e-3f)), r2,
                           v_set1(4.166664568298827e-2f)),
                   v_fnmadd(v_set1(0.5f), r2, v_set1(1.0f)));
    /* quadrant k mod 4: (s, c), (c, -s), (-s, -c), (-c, s) */
    vmask odd = vi_eq(vi_and(k, vi_set1(1)), vi_set1(1));
    vmask sin_negative = vi_eq(vi_and(k, vi_set1(2)), vi_set1(2));
    vmask cos_negative = vi_eq(vi_and(v_round_int(v_add(v_from_int(k), v_set1(1.0f))), vi_set1(2)), vi_set1(2));
    vf sin_r = v_select(odd, c, s), cos_r = v_select(odd, s, c);
    vf sign = v_set1(-0.0f);
    *sin_h = v_select(sin_negative, v_xor(sin_r, sign), sin_r);
    *cos_h = v_select(cos_negative, v_xor(cos_r, sign), cos_r);
}

/*
 * atan2(y, x) in (-pi, pi]: the ratio of the smaller to the larger magnitude in [0, 1], folded
 * to |u| <= tan(pi/8) around pi/4 when above it, a degree-9 odd minimax polynomial (the classic
 * single-precision coefficients), then the octant. atan2(0, 0) = 0. About 2 ulp.
 */
JM_INLINE vf atan2_approx(vf y, vf x) {
    vf ay = v_abs(y), ax = v_abs(x);
    vf big = v_max(ax, ay), small = v_min(ax, ay);
    vf ratio = v_select(v_gt(big, v_set1(0.0f)), v_div(small, big), v_set1(0.0f));
    vmask above = v_gt(ratio, v_set1(0.414213562f));
    vf u = v_select(above, v_div(v_sub(ratio, v_set1(1.0f)), v_add(ratio, v_set1(1.0f))), ratio);
    vf u2 = v_mul(u, u);
    vf p = v_fmadd(v_fmadd(v_fmadd(v_fmadd(v_set1(8.05374449538e-2f), u2, v_set1(-1.38776856032e-1f)), u2,
                                   v_set1(1.99777106478e-1f)), u2, v_set1(-3.33329491539e-1f)),
                   v_mul(u2, u), u);
    vf angle = v_add(p, v_select(above, v_set1(0.785398163f), v_set1(0.0f)));
    angle = v_select(v_gt(ay, ax), v_sub(v_set1(1.57079633f), angle), angle);
    angle = v_select(v_lt(x, v_set1(0.0f)), v_sub(v_set1(3.14159265f), angle), angle);
    return v_select(v_lt(y, v_set1(0.0f)), v_xor(angle, v_set1(-0.0f)), angle);
}

/*
 * sin and cos of a half angle h = a / 2 (exact) in float64: h = k quarter turns + r, then the
 * fdlibm kernel polynomials (__kernel_sin / __kernel_cos coefficients, < 1 ulp on |r| <= pi/4)
 * and the quadrant of k. In degrees the reduction h - 90 k is exact and r is one rounding of
 * (h - 90 k) pi / 180 (relative error <= 2^-52); in radians r = h - k pi/2 with fdlibm's 33-bit
 * three-part pi/2 (k p1 and k p2 exact for |k| < 2^20, so for |a| < 2^21 rad r is within
 * 2^-52 |r| + 2^-70 of the exact reduction). The quadrant comes from f = k/4 - round(k/4) in
 * {0, 1/4, +-1/2, -1/4} (exact): no integer lanes.
 * Accuracy: about 1 ulp of sin(h), cos(h) (the polynomials' < 1 ulp plus the reduction's
 * rounding); checked through euler_to_quat (tests/kernels/test_euler.py). A NaN or infinite angle
 * gives NaN.
 */
JM_INLINE void half_angle_sin_cos_f64(vd a, int degrees, vd *sin_h, vd *cos_h) {
    vd h = vd_mul(a, vd_set1(0.5)), k, r;
    if (degrees) {
        k = vd_round(vd_mul(h, vd_set1(1.0 / 90)));
        r = vd_mul(vd_fnmadd(k, vd_set1(90.0), h), vd_set1(0.017453292519943295));
    } else {
        k = vd_round(vd_mul(h, vd_set1(0.6366197723675814)));
        r = vd_fnmadd(k, vd_set1(1.57079632673412561417e+00), h);
        r = vd_fnmadd(k, vd_set1(6.07710050630396597660e-11), r);
        r = vd_fnmadd(k, vd_set1(2.02226624871116645580e-21), r);
    }
    vd z = vd_mul(r, r);
    vd ps = vd_fmadd(vd_fmadd(vd_fmadd(vd_fmadd(vd_fmadd(vd_set1(1.58969099521155010221e-10), z,
                                                         vd_set1(-2.50507602534068634195e-08)), z,
                                                vd_set1(2.75573137070700676789e-06)), z,
                                       vd_set1(-1.98412698298579493134e-04)), z,
                              vd_set1(8.33333333332248946124e-03)), z, vd_set1(-1.66666666666666324348e-01));
    vd pc = vd_fmadd(vd_fmadd(vd_fmadd(vd_fmadd(vd_fmadd(vd_set1(-1.13596475577881948265e-11), z,
                                                         vd_set1(2.08757232129817482790e-09)), z,
                                                vd_set1(-2.75573143513906633035e-07)), z,
                                       vd_set1(2.48015872894767294178e-05)), z,
                              vd_set1(-1.38888888888741095749e-03)), z, vd_set1(4.16666666666666019037e-02));
    vd s = vd_fmadd(vd_mul(r, z), ps, r);
    vd c = vd_fmadd(vd_mul(z, z), pc, vd_fnmadd(vd_set1(0.5), z, vd_set1(1.0)));
    /* k mod 4 = 0, 1, 2, 3: f = 0, 1/4, +-1/2, -1/4; (sin, cos) = (s, c), (c, -s), (-s, -c), (-c, s) */
    vd quarter = vd_mul(k, vd_set1(0.25));
    vd f = vd_sub(quarter, vd_round(quarter));
    vdmask odd = vd_eq(vd_abs(f), vd_set1(0.25));
    vdmask sin_negative = md_or(vd_lt(f, vd_set1(-0.125)), vd_gt(f, vd_set1(0.375)));
    vdmask cos_negative = md_or(vd_gt(f, vd_set1(0.125)), vd_lt(f, vd_set1(-0.375)));
    vd sin_r = vd_select(odd, c, s), cos_r = vd_select(odd, s, c);
    *sin_h = vd_select(sin_negative, vd_negate(sin_r), sin_r);
    *cos_h = vd_select(cos_negative, vd_negate(cos_r), cos_r);
}

/*
 * atan2(y, x) in (-pi, pi], float64: with the ratio u of the smaller to the larger magnitude,
 * atan(u) directly for u <= tan(pi/8), else pi/4 + atan((small - big) / (small + big)), so that
 * |u| <= tan(pi/8) either way; atan(u) = u + u s Q(s), s = u^2, with atanc_tail_f64's Q (relative
 * error 7.1e-18): one division per atan2 (Cephes' rational fit over |u| <= 0.66 needed two).
 * Then the octant. atan2(0, 0) = 0. A few ulp of the result: u
 * carries up to three roundings, the octant steps two more at magnitudes <= pi.
 */
JM_INLINE vd atan2_f64(vd y, vd x) {
    vd ay = vd_abs(y), ax = vd_abs(x);
    vd big = vd_max(ax, ay), small = vd_min(ax, ay);
    vdmask above = vd_gt(small, vd_mul(big, vd_set1(0.41421356237309503)));
    vd num = vd_select(above, vd_sub(small, big), small), den = vd_select(above, vd_add(small, big), big);
    vd u = vd_select(vd_gt(big, vd_set1(0.0)), vd_div(num, den), vd_set1(0.0));
    vd s = vd_mul(u, u);
    vd angle = vd_fmadd(vd_mul(u, s), atanc_tail_f64(s), u);
    angle = vd_add(angle, vd_select(above, vd_set1(0.7853981633974483), vd_set1(0.0)));
    angle = vd_select(vd_gt(ay, ax), vd_sub(vd_set1(1.5707963267948966), angle), angle);
    angle = vd_select(vd_lt(x, vd_set1(0.0)), vd_sub(vd_set1(3.141592653589793), angle), angle);
    return vd_select(vd_lt(y, vd_set1(0.0)), vd_negate(angle), angle);
}

#endif /* JM_TRIG_H */
