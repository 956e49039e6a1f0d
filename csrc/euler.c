/*
 * euler.c - Tait-Bryan angles to quaternions.
 *
 * Compiled once per ISA (see simd.h). Each block converts JM_W angle triples, one per lane.
 */
#include "jointmath.h"
#include "simd.h"

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

/* p * q, Hamilton product, components (x, y, z, w) */
JM_INLINE void quat_mul(const vf p[4], const vf q[4], vf out[4]) {
    out[0] = v_fmadd(p[3], q[0], v_fmadd(p[0], q[3], v_fnmadd(p[2], q[1], v_mul(p[1], q[2]))));
    out[1] = v_fmadd(p[3], q[1], v_fmadd(p[1], q[3], v_fnmadd(p[0], q[2], v_mul(p[2], q[0]))));
    out[2] = v_fmadd(p[3], q[2], v_fmadd(p[2], q[3], v_fnmadd(p[1], q[0], v_mul(p[0], q[1]))));
    out[3] = v_fnmadd(p[0], q[0], v_fnmadd(p[1], q[1], v_fnmadd(p[2], q[2], v_mul(p[3], q[3]))));
}

/*
 * euler_to_quats: q = e0 e1 e2 (intrinsic) or e2 e1 e0 (extrinsic), e_k the rotation by angle
 * a_k (degrees or radians) about axis axes[k]: (sin(a_k / 2) along the axis, cos(a_k / 2)).
 * Angles are float[3] records, packed; the quaternions float[4], packed. Accuracy, float32:
 * rotation angle error <= 1e-6 rad against float64 (scipy) for angles within +-720 degrees on
 * every path (measured 4.0e-7 over 10^6 triples; tests/test_bvh.py).
 */
JM_INLINE void euler_block(const char *src, char *dst, const int *axes, int intrinsic, int degrees) {
    float staged[JM_W][4] = {{0}};
    for (int k = 0; k < JM_W; k++)
        memcpy(staged[k], src + 12 * k, 12); /* 12-byte records: staged so no quad reads past one */
    vf a[4], e[3][4], t[4], q[4];
    v_load_records((const char *)staged, 16, 1, a);
    for (int k = 0; k < 3; k++) {
        vf s, c;
        half_angle_sin_cos(a[k], degrees, &s, &c);
        for (int m = 0; m < 3; m++)
            e[k][m] = m == axes[k] ? s : v_set1(0.0f);
        e[k][3] = c;
    }
    if (intrinsic) {
        quat_mul(e[0], e[1], t);
        quat_mul(t, e[2], q);
    } else {
        quat_mul(e[2], e[1], t);
        quat_mul(t, e[0], q);
    }
    v_store_records(dst, 16, 1, q);
}

void JM_FN(jm_euler_to_quats)(const float *angles, float *quats, size_t n, const int *axes, int intrinsic,
                              int degrees) {
    const char *src = (const char *)angles;
    char *dst = (char *)quats;
    size_t i = 0;
    for (; i + JM_W <= n; i += JM_W)
        euler_block(src + 12 * i, dst + 16 * i, axes, intrinsic, degrees);
    if (i < n) {
        float in[JM_W * 3] = {0}, out[JM_W * 4];
        memcpy(in, src + 12 * i, 12 * (n - i));
        euler_block((const char *)in, (char *)out, axes, intrinsic, degrees);
        memcpy(dst + 16 * i, out, 16 * (n - i));
    }
}
