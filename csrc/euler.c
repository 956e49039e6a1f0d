/*
 * euler.c - Tait-Bryan angles to quaternions.
 *
 * Compiled once per ISA (see simd/common.h). Each block converts JM_W angle triples, one per lane.
 */
#include "jointmath.h"
#include "simd/common.h"
#include "quat_math.h"
#include "trig.h"

/*
 * Angles beyond FAR_ANGLE_F32 / FAR_ANGLE_F64 (either unit): the kernels' reductions (below) lose
 * their exactness there. Measured against scipy (random triples, XYZ, radians): float32 on scalar
 * and sse (no FMA: k times the parts of pi/2 rounds) 1.3e-6 rad at 2^15 and 0.07 rad at 2^19, on
 * avx2 / avx512 3.7e-5 at 2^24; float64 8e-9 at 2^26; then non-unit, infinite or NaN quaternions
 * (float32 from 2^26, float64 from 2^54). Such records are redone here in double: libm's sin and
 * cos reduce any finite double exactly, degrees first by whole turns (fmod, exact), so any finite
 * angle gives its unit quaternion within the kernels' bounds (float32 9.7e-8 rad, float64 within
 * 1e-15 of scipy, measured); an infinite one gives NaN, as in the kernels. Cold: only blocks
 * holding such an angle call it.
 */
#define FAR_ANGLE_F32 0x1p14
#define FAR_ANGLE_F64 0x1p20

/* q = e0 e1 e2 (intrinsic) or e2 e1 e0 (extrinsic) in double, e_k the rotation by a[k] about axes[k] */
static void far_record(const double a[3], double q[4], const int *axes, int intrinsic, int degrees) {
    double e[3][4];
    for (int k = 0; k < 3; k++) {
        const double h = degrees ? fmod(a[k] / 2, 360.0) * (3.141592653589793 / 180) : a[k] / 2;
        for (int m = 0; m < 3; m++)
            e[k][m] = m == axes[k] ? sin(h) : 0.0;
        e[k][3] = cos(h);
    }
    const double *p = e[intrinsic ? 0 : 2];
    memcpy(q, p, sizeof e[0]);
    for (int k = 1; k < 3; k++) { /* q = q e[next] (Hamilton product) */
        const double *r = e[intrinsic ? k : 2 - k];
        const double x = q[0], y = q[1], z = q[2], w = q[3];
        q[0] = w * r[0] + x * r[3] + y * r[2] - z * r[1];
        q[1] = w * r[1] + y * r[3] + z * r[0] - x * r[2];
        q[2] = w * r[2] + z * r[3] + x * r[1] - y * r[0];
        q[3] = w * r[3] - x * r[0] - y * r[1] - z * r[2];
    }
}

/* The records among n (float or double angle triples every in_size bytes from in, quaternions
   every out_size bytes from out) with an angle beyond FAR_ANGLE_F32 / _F64, redone by far_record. */
JM_COLD static void redo_far_records(const char *in, size_t in_size, char *out, size_t out_size, size_t n,
                                     int is_double, const int *axes, int intrinsic, int degrees) {
    for (size_t i = 0; i < n; i++) {
        double a[3], q[4];
        int far = 0;
        for (int k = 0; k < 3; k++) {
            if (is_double) {
                memcpy(&a[k], in + i * in_size + 8 * k, sizeof(double));
            } else {
                float f;
                memcpy(&f, in + i * in_size + 4 * k, sizeof f);
                a[k] = f;
            }
            far |= fabs(a[k]) > (is_double ? FAR_ANGLE_F64 : FAR_ANGLE_F32);
        }
        if (!far)
            continue;
        far_record(a, q, axes, intrinsic, degrees);
        for (int k = 0; k < 4; k++) {
            if (is_double) {
                memcpy(out + i * out_size + 8 * k, &q[k], sizeof(double));
            } else {
                const float f = (float)q[k];
                memcpy(out + i * out_size + 4 * k, &f, sizeof f);
            }
        }
    }
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
 * every path (measured 4.0e-7 over 10^6 triples; tests/kernels/test_euler.py).
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
    const vf far = v_set1((float)FAR_ANGLE_F32);
    if (JM_UNLIKELY(m_any(m_or(m_or(v_gt(v_abs(a[0]), far), v_gt(v_abs(a[1]), far)), v_gt(v_abs(a[2]), far)))))
        redo_far_records((const char *)staged, 16, dst, 16, JM_W, 0, axes, intrinsic, degrees);
}

/*
 * quats_to_euler: the Tait-Bryan angles (radians, or degrees) of quaternions of any finite
 * non-zero scale, by the method of Bernardes and Viollet (2022) as scipy's as_euler uses it:
 * with i, j, k the extrinsic axis sequence (the intrinsic order reversed) and e the sign of the
 * permutation, a = w - q_j, b = q_i + e q_k, c = q_j + w, d = e q_k - q_i; the middle angle is
 * 2 atan2(|(c, d)|, |(a, b)|) - pi/2, the outer ones atan2(b, a) -+ atan2(d, c).
 * Evaluated as one atan2 per output angle, each within (-pi, pi] (no sum of half angles to
 * round and wrap): the outer ones as the arguments of (a + ib)(c -+ id), the middle as
 * atan2(4 (w q_j - e q_i q_k), 2 |(a, b)| |(c, d)|), its sine part free of cancellation.
 * q is first multiplied by the power of two that puts its largest |component| in [1, 2)
 * (v_scale_pow2, exact): the angles are scale invariant, and no sum of squares overflows
 * (|q| > 1e19 gave NaN) or underflows (|q| < 1e-19 read as gimbal lock), from a subnormal 2^-149
 * to FLT_MAX.
 * Gimbal lock: the middle angle within 1e-7 rad of 0 or pi (scipy's threshold), tested on the
 * ratio, |(c, d)| < 5e-8 |(a, b)| or the reverse (tan(5e-8) = 5e-8 in float32), which float32
 * resolves at any size (the angle itself rounds to 2.4e-7 near pi); there the third angle is 0
 * and the first carries the rest, arg((a + ib)^2) or +-arg((c + id)^2).
 * Accuracy, float32 (tools/convert_numerics.py, every path): each angle within 3.7e-7 rad
 * of the float64 reference away from the lock (3.62e-7 the worst of 8e6 random quaternions; in
 * degrees 5.2e-7, the result's float32 rounding adding up to 1.3e-7 rad at 180 degrees: 5.09e-7
 * measured over 10^6), the rotation of the angles within 6.2e-7 rad of
 * q's at any scale (middle angles within 1e-5 rad of +-pi/2 included); euler_to_quat of them
 * within 7.6e-7 (bound 1e-6, tested). Near the lock the individual outer angles are ill-conditioned (as in any
 * precision), their rotation is not.
 * A zero quaternion, or one with a NaN or infinite component, gives three NaN angles.
 */
JM_INLINE void to_euler_block(const char *src, char *dst, const int *axes, int intrinsic, int degrees) {
    vf q[4];
    v_load_records(src, 16, 1, q);
    v_scale_pow2(q, 4);
    /* after the scaling a finite non-zero q has a component of magnitude >= 1; a zero q sums to
       0 and one with a NaN or inf component to NaN (atan2_approx would turn those into finite
       angles: its comparisons are false) */
    vmask valid = v_ge(v_add(v_add(v_abs(q[0]), v_abs(q[1])), v_add(v_abs(q[2]), v_abs(q[3]))), v_set1(1.0f));
    const int i = intrinsic ? axes[2] : axes[0], j = axes[1], k = intrinsic ? axes[0] : axes[2];
    const float e = (float)((i - j) * (j - k) * (k - i) / 2);
    vf qk = v_mul(q[k], v_set1(e));
    vf a = v_sub(q[3], q[j]), b = v_add(q[i], qk), c = v_add(q[j], q[3]), d = v_sub(qk, q[i]);
    vf ab = v_sqrt(v_fmadd(a, a, v_mul(b, b))), cd = v_sqrt(v_fmadd(c, c, v_mul(d, d)));
    /* middle - pi/2 = atan2(|cd|^2 - |ab|^2, 2 |ab| |cd|), and |cd|^2 - |ab|^2 = 4 (w q_j - e q_i q_k)
       without cancellation */
    vf middle = atan2_approx(v_mul(v_set1(2.0f), v_fnmadd(q[i], qk, v_mul(q[3], q[j]))), v_mul(ab, cd));
    vmask near_zero = v_lt(cd, v_mul(ab, v_set1(5e-8f)));
    vmask near_pi = v_lt(ab, v_mul(cd, v_set1(5e-8f)));
    vmask regular = m_not(m_or(near_zero, near_pi));
    /* regular: first = arg((a + ib) conj(c + id)), third = e arg((a + ib)(c + id)) */
    vf diff_x = v_fmadd(a, c, v_mul(b, d)), diff_y = v_fnmadd(a, d, v_mul(b, c));
    vf sum_x = v_fnmadd(b, d, v_mul(a, c)), sum_y = v_fmadd(a, d, v_mul(b, c));
    /* lock: the carried angle is 2 atan2(b, a) = arg((a + ib)^2) at middle 0, +-arg((c + id)^2) at
       middle pi (- for extrinsic orders), in the call of the angle that carries it */
    vf sx = v_select(near_zero, a, c), sy = v_select(near_zero, b, d);
    vf lock_x = v_fnmadd(sy, sy, v_mul(sx, sx)), lock_y = v_mul(v_add(sx, sx), sy);
    if (!intrinsic)
        lock_y = v_select(near_pi, v_xor(lock_y, v_set1(-0.0f)), lock_y);
    vf first, third;
    if (intrinsic) {
        first = v_select(regular, atan2_approx(diff_y, diff_x), v_set1(0.0f));
        third = atan2_approx(v_select(regular, sum_y, lock_y), v_select(regular, sum_x, lock_x));
    } else {
        first = atan2_approx(v_select(regular, diff_y, lock_y), v_select(regular, diff_x, lock_x));
        third = v_select(regular, atan2_approx(sum_y, sum_x), v_set1(0.0f));
    }
    third = v_mul(third, v_set1(e));
    vf out[4] = {intrinsic ? third : first, middle, intrinsic ? first : third, v_set1(0.0f)};
    for (int m = 0; m < 3; m++) {
        vf angle = degrees ? v_mul(out[m], v_set1(57.2957795f)) : out[m];
        out[m] = v_select(valid, angle, v_set1(jm_float_from_bits(0x7fc00000u))); /* NaN */
    }
    float staged[JM_W][4];
    v_store_records((char *)staged, 16, 1, out);
    for (int r = 0; r < JM_W; r++)
        memcpy(dst + 12 * r, staged[r], 12);
}

/*
 * Runs an Euler block over n records (in_size -> out_size bytes, packed), JM_W at a time; the
 * last n % JM_W go through zeroed buffers, so no read or write passes either array.
 */
typedef void (*euler_block_fn)(const char *, char *, const int *, int, int);
JM_INLINE void euler_run(euler_block_fn block, const float *in, size_t in_size, float *out, size_t out_size,
                         size_t n, const int *axes, int intrinsic, int degrees) {
    const char *src = (const char *)in;
    char *dst = (char *)out;
    size_t i = 0;
    for (; i + JM_W <= n; i += JM_W)
        block(src + in_size * i, dst + out_size * i, axes, intrinsic, degrees);
    if (i < n) {
        float staged_in[JM_W * 4] = {0}, staged_out[JM_W * 4];
        memcpy(staged_in, src + in_size * i, in_size * (n - i));
        block((const char *)staged_in, (char *)staged_out, axes, intrinsic, degrees);
        memcpy(dst + out_size * i, staged_out, out_size * (n - i));
    }
}

/* jm_euler_to_quats: n packed float[3] Tait-Bryan angles -> float[4] quaternions (euler_block:
   rotation angle error 1e-6 rad within +-720 degrees; any finite angle through far_record; an
   infinite or NaN angle gives NaN). */
void JM_FN(jm_euler_to_quats)(const float *angles, float *quats, size_t n, const int *axes, int intrinsic,
                              int degrees) {
    euler_run(euler_block, angles, 12, quats, 16, n, axes, intrinsic, degrees);
}

/* jm_quats_to_euler: n float[4] -> packed float[3] angles (to_euler_block: the rotation of the
   angles within 1e-6 rad of q's at any finite non-zero scale, gimbal lock as scipy; a zero, NaN
   or infinite quaternion gives three NaN angles). */
void JM_FN(jm_quats_to_euler)(const float *quats, float *angles, size_t n, const int *axes, int intrinsic,
                              int degrees) {
    euler_run(to_euler_block, quats, 16, angles, 12, n, axes, intrinsic, degrees);
}

/* ------------------------------------------------------------------- float64 -- */

/*
 * p * e for an elementary quaternion e = (s along axis a, c): with b, d the next two axes
 * cyclically, (p e)_w = p_w c - p_a s, (p e)_a = p_a c + p_w s, (p e)_b = p_b c + p_d s,
 * (p e)_d = p_d c - p_b s. Eight products where the full Hamilton product takes sixteen (its
 * products with zero components cannot be dropped by the compiler: 0 * inf is NaN).
 */
JM_INLINE void times_axis_f64(vd p[4], const int a, vd s, vd c) {
    const int b = (a + 1) % 3, d = (a + 2) % 3;
    vd pw = p[3], pa = p[a], pb = p[b], pd = p[d];
    p[3] = vd_fnmadd(pa, s, vd_mul(pw, c));
    p[a] = vd_fmadd(pw, s, vd_mul(pa, c));
    p[b] = vd_fmadd(pd, s, vd_mul(pb, c));
    p[d] = vd_fnmadd(pb, s, vd_mul(pd, c));
}

/* times_axis_f64 with the axis a compile-time constant in each case, so that p stays in
   registers (a runtime index puts the array on the stack; docs/design/float64-kernels.md) */
JM_INLINE void times_elementary_f64(vd p[4], int a, vd s, vd c) {
    switch (a) {
    case 0:
        times_axis_f64(p, 0, s, c);
        break;
    case 1:
        times_axis_f64(p, 1, s, c);
        break;
    default:
        times_axis_f64(p, 2, s, c);
    }
}

/*
 * euler_to_quats_f64: euler_to_quats on double[3] angles and double[4] quaternions: q = e0 e1 e2
 * (intrinsic) or e2 e1 e0 (extrinsic), the first factor as it is, then right products by
 * the other two (times_elementary_f64). Accuracy, float64: rotation angle error <= 4e-15 rad
 * against an extended-precision evaluation (7.1e-16 measured over 720,000 triples, every order
 * and path) for angles within +-720 degrees
 * (radians: +-4 pi), and up to 2^40 degrees or 2^20 radians, on every path
 * (tests/kernels/test_euler.py). A NaN or infinite angle gives a NaN quaternion in its own record.
 */
JM_INLINE void euler_f64_block(const char *src, char *dst, const int *axes, int intrinsic, int degrees) {
    vd a[4], s[3], c[3], q[4];
    vd_load_quads(src, 24, &a[0], &a[1], &a[2], &a[3]); /* a[3]: the next record's first angle, unused */
    for (int k = 0; k < 3; k++)
        half_angle_sin_cos_f64(a[k], degrees, &s[k], &c[k]);
    const int first = intrinsic ? 0 : 2, last = 2 - first;
    for (int m = 0; m < 3; m++)
        q[m] = m == axes[first] ? s[first] : vd_set1(0.0);
    q[3] = c[first];
    times_elementary_f64(q, axes[1], s[1], c[1]);
    times_elementary_f64(q, axes[last], s[last], c[last]);
    vd_store_quads(dst, 32, q[0], q[1], q[2], q[3]);
    const vd far = vd_set1(FAR_ANGLE_F64);
    if (JM_UNLIKELY(md_any(md_or(md_or(vd_gt(vd_abs(a[0]), far), vd_gt(vd_abs(a[1]), far)), vd_gt(vd_abs(a[2]), far)))))
        redo_far_records(src, 24, dst, 32, JM_WD, 1, axes, intrinsic, degrees);
}

/*
 * quats_to_euler_f64: quats_to_euler on double[4] quaternions and double[3] angles: the same
 * formulation (one atan2 per output angle, the middle one free of cancellation, q first scaled
 * by a power of two, 2^-1074 ... DBL_MAX) and the same gimbal-lock rule (the third angle 0, the
 * first carrying the rest), on a band scaled to float64: the middle angle within 2e-15 rad of
 * +-pi/2, tested as |(c, d)| < 1e-15 |(a, b)| or the reverse (float32, scipy and
 * jointmath.reference use 1e-7 rad). Setting the third angle to 0 while the middle one is delta
 * from +-pi/2 moves the rotation by up to about delta * |third angle|: 1e-7 would cost up to
 * 3e-7 rad, 2e-15 costs at most ~6e-15, so the round trip holds everywhere. Outside the band
 * the outer angles come from the arguments of the complex products (a + ib)(c -+ id), which
 * keep their relative accuracy however small |(c, d)| gets: each may be ill-conditioned near
 * the lock, their rotation is not.
 * Accuracy, float64 (tests/kernels/test_euler.py, every path): the rotation of the angles (evaluated
 * in extended precision) within 1e-14 rad of q's everywhere, lock band and its edges included;
 * 9.7e-16 measured over 360,000 quaternions, every order, in degrees and radians. Two blocks
 * of JM_WD records are converted together (EULER_F64_GROUPS), step by step: their dependency
 * chains then overlap in the instruction window (docs/design/float64-kernels.md#euler-angles).
 * Records move as 32-byte quads, the 24-byte output at stride 24 (see vd_load_quads).
 * A zero quaternion, or one with a NaN or infinite component, gives three NaN angles.
 */
#define EULER_F64_GROUPS 2
JM_INLINE void to_euler_f64_block(const char *src, char *dst, const int *axes, int intrinsic, int degrees) {
    enum { groups = EULER_F64_GROUPS };
    const int i = intrinsic ? axes[2] : axes[0], j = axes[1], k = intrinsic ? axes[0] : axes[2];
    const double e = (double)((i - j) * (j - k) * (k - i) / 2);
    const vd lock_ratio2 = vd_set1(1e-30); /* tan(1e-15)^2: a band of 2e-15 rad */
    vd q[groups][4], qi[groups], qj[groups], qk[groups], qw[groups];
    vd a[groups], b[groups], c[groups], d[groups], ab2[groups], cd2[groups];
    vd middle[groups], first[groups], third[groups], lock_x[groups], lock_y[groups];
    vd diff_x[groups], diff_y[groups], sum_x[groups], sum_y[groups];
    vdmask valid[groups], near_zero[groups], near_pi[groups], regular[groups];
    EACH(g, groups, vd_load_quads(src + 32 * JM_WD * g, 32, &q[g][0], &q[g][1], &q[g][2], &q[g][3]));
    EACH(g, groups, vd_scale_pow2(q[g], 4));
    EACH(g, groups, valid[g] = vd_ge(vd_add(vd_add(vd_abs(q[g][0]), vd_abs(q[g][1])),
                                            vd_add(vd_abs(q[g][2]), vd_abs(q[g][3]))),
                                     vd_set1(1.0)));
    /* the components by role, read once (runtime indexes into q keep it in memory) */
    EACH(g, groups, qi[g] = q[g][i]; qj[g] = q[g][j]; qk[g] = vd_mul(q[g][k], vd_set1(e)); qw[g] = q[g][3]);
    EACH(g, groups, a[g] = vd_sub(qw[g], qj[g]); b[g] = vd_add(qi[g], qk[g]);
                    c[g] = vd_add(qj[g], qw[g]); d[g] = vd_sub(qk[g], qi[g]));
    /* |(a, b)|^2 and |(c, d)|^2: one of them >= |q|^2 >= 1 after the scaling, so the lock tests
       on the squares hold wherever the other underflows */
    EACH(g, groups, ab2[g] = vd_fmadd(a[g], a[g], vd_mul(b[g], b[g]));
                    cd2[g] = vd_fmadd(c[g], c[g], vd_mul(d[g], d[g])));
    EACH(g, groups, middle[g] = atan2_f64(vd_mul(vd_set1(2.0), vd_fnmadd(qi[g], qk[g], vd_mul(qw[g], qj[g]))),
                                          vd_sqrt(vd_mul(ab2[g], cd2[g]))));
    EACH(g, groups, near_zero[g] = vd_lt(cd2[g], vd_mul(ab2[g], lock_ratio2));
                    near_pi[g] = vd_lt(ab2[g], vd_mul(cd2[g], lock_ratio2));
                    regular[g] = md_not(md_or(near_zero[g], near_pi[g])));
    EACH(g, groups, diff_x[g] = vd_fmadd(a[g], c[g], vd_mul(b[g], d[g]));
                    diff_y[g] = vd_fnmadd(a[g], d[g], vd_mul(b[g], c[g]));
                    sum_x[g] = vd_fnmadd(b[g], d[g], vd_mul(a[g], c[g]));
                    sum_y[g] = vd_fmadd(a[g], d[g], vd_mul(b[g], c[g])));
    for (int g = 0; g < groups; g++) {
        vd sx = vd_select(near_zero[g], a[g], c[g]), sy = vd_select(near_zero[g], b[g], d[g]);
        lock_x[g] = vd_fnmadd(sy, sy, vd_mul(sx, sx));
        lock_y[g] = vd_mul(vd_add(sx, sx), sy);
        if (!intrinsic)
            lock_y[g] = vd_select(near_pi[g], vd_negate(lock_y[g]), lock_y[g]);
    }
    if (intrinsic) {
        EACH(g, groups, first[g] = vd_select(regular[g], atan2_f64(diff_y[g], diff_x[g]), vd_set1(0.0)));
        EACH(g, groups, third[g] = atan2_f64(vd_select(regular[g], sum_y[g], lock_y[g]),
                                             vd_select(regular[g], sum_x[g], lock_x[g])));
    } else {
        EACH(g, groups, first[g] = atan2_f64(vd_select(regular[g], diff_y[g], lock_y[g]),
                                             vd_select(regular[g], diff_x[g], lock_x[g])));
        EACH(g, groups, third[g] = vd_select(regular[g], atan2_f64(sum_y[g], sum_x[g]), vd_set1(0.0)));
    }
    for (int g = 0; g < groups; g++) {
        third[g] = vd_mul(third[g], vd_set1(e));
        vd out[4] = {intrinsic ? third[g] : first[g], middle[g], intrinsic ? first[g] : third[g], vd_set1(0.0)};
        for (int m = 0; m < 3; m++) {
            vd angle = degrees ? vd_mul(out[m], vd_set1(57.29577951308232)) : out[m];
            out[m] = vd_select(valid[g], angle, vd_set1(jm_double_from_bits(0x7ff8000000000000ull))); /* NaN */
        }
        vd_store_quads(dst + 24 * JM_WD * g, 24, out[0], out[1], out[2], out[3]);
    }
}

/* euler_run on float64 lanes: per_block records at a time (what `block` converts), the last
   1 ... per_block through zeroed buffers, so every block before them may move its 24-byte records
   as 32-byte quads (the 8 bytes past its last record belong to the next block) */
JM_INLINE void euler_run_f64(euler_block_fn block, size_t per_block, const double *in, size_t in_size, double *out,
                             size_t out_size, size_t n, const int *axes, int intrinsic, int degrees) {
    const char *src = (const char *)in;
    char *dst = (char *)out;
    size_t i = 0;
    for (; i + per_block < n; i += per_block)
        block(src + in_size * i, dst + out_size * i, axes, intrinsic, degrees);
    if (i < n) {
        double staged_in[EULER_F64_GROUPS * JM_WD * 4] = {0}, staged_out[EULER_F64_GROUPS * JM_WD * 4];
        memcpy(staged_in, src + in_size * i, in_size * (n - i));
        block((const char *)staged_in, (char *)staged_out, axes, intrinsic, degrees);
        memcpy(dst + out_size * i, staged_out, out_size * (n - i));
    }
}

/* jm_euler_to_quats_f64: jm_euler_to_quats on double[3] -> double[4] (euler_f64_block: rotation
   angle error 4e-15 rad). */
void JM_FN(jm_euler_to_quats_f64)(const double *angles, double *quats, size_t n, const int *axes, int intrinsic,
                                  int degrees) {
    euler_run_f64(euler_f64_block, JM_WD, angles, 24, quats, 32, n, axes, intrinsic, degrees);
}

/* jm_quats_to_euler_f64: jm_quats_to_euler on double[4] -> double[3] (to_euler_f64_block: the
   rotation of the angles within 1e-14 rad of q's). */
void JM_FN(jm_quats_to_euler_f64)(const double *quats, double *angles, size_t n, const int *axes, int intrinsic,
                                  int degrees) {
    euler_run_f64(to_euler_f64_block, EULER_F64_GROUPS * JM_WD, quats, 32, angles, 24, n, axes, intrinsic, degrees);
}
