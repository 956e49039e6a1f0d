/*
 * slerp.c - slerp and nlerp between joint lists (jm_joint_quat records: the rotation
 * interpolated, the translation lerped) and between arrays of float32 or float64 quaternions.
 * Compiled once per ISA; each block interpolates JM_W records at once, one record per vector
 * lane (slerp_lanes.h).
 */
#include "joint_blocks.h"

#include <limits.h>
#include <math.h>
#include <string.h>

/*
 * contiguous_full_blocks: blend_joints' blocks of contiguous lists; returns the position after
 * them. The lines below prefetch_below are requested PREFETCH_AHEAD records ahead, those below
 * far_below also PREFETCH_FAR ahead into L2. Called with the constant far_below 0 for every call
 * but a long one in place, so that the loop of the others carries no far requests (with the test
 * in one loop the whole block's register allocation changed: docs/design/slerp.md#loop-shapes).
 */
JM_INLINE size_t contiguous_full_blocks(int mode, const char *a, const char *b, char *o, size_t n,
                                        size_t prefetch_below, size_t far_below, const fixed_t *ft) {
    const ptrdiff_t rec = (ptrdiff_t)sizeof(jm_joint_quat);
    size_t i = 0;
    for (; i + JM_W <= n; i += JM_W) {
        if (i < prefetch_below)
            prefetch_records(a, b, i + PREFETCH_AHEAD, i + PREFETCH_AHEAD + JM_W, 0);
        if (i < far_below)
            prefetch_records(a, b, i + PREFETCH_FAR, i + PREFETCH_FAR + JM_W, 1);
        joints_block(mode, a + (ptrdiff_t)i * rec, rec, b + (ptrdiff_t)i * rec, rec, o + (ptrdiff_t)i * rec, rec,
                     NULL, ft);
    }
    return i;
}

/* t = 0 copies a exactly, like the seed; else the blocks run (t = 1: joints_block's arc end). */
JM_INLINE void blend_joints(int mode, const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, char *o,
                            ptrdiff_t os, size_t n, float t) {
    if (t <= 0.0f) {
        copy_records(a, as, o, os, n);
        return;
    }
    const fixed_t ft = fixed_t_for(t);
    const ptrdiff_t rec = (ptrdiff_t)sizeof(jm_joint_quat);
    size_t i = 0;
    if (as == rec && bs == rec && os == rec) { /* contiguous: constant offsets free the registers */
        const size_t prefetch_below = prefetch_end(n, n, PREFETCH_AHEAD);
        const size_t far_below = far_requests(a == o, n) ? prefetch_end(n, n, PREFETCH_FAR) : 0;
        i = far_below ? contiguous_full_blocks(mode, a, b, o, n, prefetch_below, far_below, &ft)
                      : contiguous_full_blocks(mode, a, b, o, n, prefetch_below, 0, &ft);
    }
    for (; i + JM_W <= n; i += JM_W)
        joints_block(mode, a + (ptrdiff_t)i * as, as, b + (ptrdiff_t)i * bs, bs, o + (ptrdiff_t)i * os, os, NULL, &ft);
    if (i < n) {
        intptr_t idx[JM_W];
        tail_index(NULL, n - i, idx);
        joints_block(mode, a + (ptrdiff_t)i * as, as, b + (ptrdiff_t)i * bs, bs, o + (ptrdiff_t)i * os, os, idx, &ft);
    }
}

/* Per-element fractions: lane i takes t at byte offset (idx[i] or i) * ts, any ts (a column of a
   table, a reversed or strided view); ts = 0 broadcasts. */
JM_INLINE vf load_fractions(const char *t, ptrdiff_t ts, const intptr_t *idx) {
    float lanes[JM_W];
    if (!ts) {
        memcpy(&lanes[0], t, sizeof(float));
        return v_set1(lanes[0]);
    }
    if (!idx && ts == (ptrdiff_t)sizeof(float))
        return v_loadu((const float *)t);
    for (int k = 0; k < JM_W; k++)
        memcpy(&lanes[k], JM_REC(t, ts, idx, k), sizeof(float));
    return v_loadu(lanes);
}

/*
 * `groups` blocks of float[4] quaternions with per-element t (SLERP_FIXED_T: one t for all,
 * ft): t = 0 gives a exactly, t = 1 the end of the arc exactly (b, or -b where a . b < 0: the
 * curve stays on one hemisphere up to its last sample), every other t the interpolation. Two
 * blocks side by side: one block's dependency chain (dot product, rsqrt, two polynomials, ~150
 * cycles) is too long for the CPU to overlap with the next on its own.
 * Lanes and loads-before-stores as in joints_block.
 */
JM_INLINE void quats_blocks(int mode, int groups, const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs,
                            const char *t, ptrdiff_t ts, const fixed_t *ft, char *o, ptrdiff_t os,
                            const intptr_t *restrict idx) {
    vf qa[GROUPS][4], qb[GROUPS][4], q[GROUPS][4], tv[GROUPS], sign[GROUPS];
#define GROUP_ARGS(x, xs, idx, g) \
    (idx ? (x) : (x) + (ptrdiff_t)((g) * JM_W) * (xs)), (xs), (idx ? idx + (g) * JM_W : NULL)
    for (int g = 0; g < groups; g++) {
        tv[g] = load_fractions(GROUP_ARGS(t, ts, idx, g));
        v_load_quads_idx(GROUP_ARGS(a, as, idx, g), &qa[g][0], &qa[g][1], &qa[g][2], &qa[g][3]);
        v_load_quads_idx(GROUP_ARGS(b, bs, idx, g), &qb[g][0], &qb[g][1], &qb[g][2], &qb[g][3]);
    }
    blend_lanes(mode, groups, tv, ft, qa, qb, q, sign);
    for (int g = 0; g < groups; g++) {
        vmask at_start = m_not(v_gt(tv[g], v_set1(0.0f))), at_end = v_ge(tv[g], v_set1(1.0f));
        for (int k = 0; k < 4; k++)
            q[g][k] = v_select(at_start, qa[g][k], v_select(at_end, v_xor(qb[g][k], sign[g]), q[g][k]));
    }
    for (int g = 0; g < groups; g++)
        v_store_quads_idx(GROUP_ARGS(o, os, idx, g), q[g][0], q[g][1], q[g][2], q[g][3]);
#undef GROUP_ARGS
}

JM_INLINE void quats_run(int mode, const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, const char *t,
                         ptrdiff_t ts, const fixed_t *ft, char *o, ptrdiff_t os, size_t n) {
    size_t i = 0;
    for (; i + GROUPS * JM_W <= n; i += GROUPS * JM_W)
        quats_blocks(mode, GROUPS, a + (ptrdiff_t)i * as, as, b + (ptrdiff_t)i * bs, bs, t + (ptrdiff_t)i * ts, ts, ft,
                     o + (ptrdiff_t)i * os, os, NULL);
    for (; i + JM_W <= n; i += JM_W)
        quats_blocks(mode, 1, a + (ptrdiff_t)i * as, as, b + (ptrdiff_t)i * bs, bs, t + (ptrdiff_t)i * ts, ts, ft,
                     o + (ptrdiff_t)i * os, os, NULL);
    if (i < n) {
        intptr_t idx[JM_W];
        tail_index(NULL, n - i, idx);
        quats_blocks(mode, 1, a + (ptrdiff_t)i * as, as, b + (ptrdiff_t)i * bs, bs, t + (ptrdiff_t)i * ts, ts, ft,
                     o + (ptrdiff_t)i * os, os, idx);
    }
}

/* A slerp with one t for all (ts = 0) uses the fixed-t weights. */
JM_INLINE void blend_quats(int mode, const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, const char *t,
                           ptrdiff_t ts, char *o, ptrdiff_t os, size_t n) {
    if (mode == SLERP && !ts) {
        float t0;
        memcpy(&t0, t, sizeof t0);
        const fixed_t ft = fixed_t_for(t0);
        quats_run(SLERP_FIXED_T, a, as, b, bs, t, ts, &ft, o, os, n);
    } else {
        quats_run(mode, a, as, b, bs, t, ts, NULL, o, os, n);
    }
}

/*
 * jm_slerp_joints: out[i].q = slerp(a[i].q, b[i].q, t), out[i].t = (1 - t) a[i].t + t b[i].t,
 * for t in [0, 1] and unit quaternions (not normalised: other inputs give w0 a + w1 b with the
 * weights of their raw dot product). Shortest arc: b.q is negated where a.q . b.q < 0 (q and -q
 * are one rotation). t = 0 copies a exactly; t = 1 gives the end of that arc exactly, b.q or
 * -b.q (where the float32 dot product is < 0; -0 and NaN count as >= 0), and b.t, so that a curve
 * sampled up to t = 1 stays on one hemisphere. Never NaN for finite input: the fixed-t weights
 * (one t for all joints) make parallel and antipodal pairs no special case; NaN input gives NaN.
 * Bound, unit quaternions: max abs component error 5e-7 against a float64 slerp, | |q| - 1 | <=
 * 1e-6, on every path (measured: docs/design/slerp.md#accuracy).
 */
void JM_FN(jm_slerp_joints)(const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, char *out, ptrdiff_t os,
                            size_t n, float t) {
    blend_joints(SLERP_FIXED_T, a, as, b, bs, out, os, n, t);
}

/*
 * jm_lerp_joints: out[i].q = normalize((1 - t) a[i].q +- t b[i].q) (nlerp, shortest arc), the
 * translation as in jm_slerp_joints; t = 0 copies a exactly, t = 1 gives the arc's end +-b.q
 * and b.t exactly, as there (the sign of a dot product taken in double where float32's is not
 * trustworthy, see nlerp_out_of_range). a and b may have any finite scale, from the smallest
 * denormal to FLT_MAX, each its own: lanes outside nlerp_out_of_range's range are computed in
 * double (nlerp_records_in_double), so the result is the normalised sum as written; a = b = 0
 * gives NaN. Those lanes cost a scalar double loop over their block; unit inputs never take it
 * unless a . b is exactly 0.
 * Bound: max abs component error 3e-7 against a float64 nlerp, unit or any finite scale, every
 * path (measured: docs/design/slerp.md#accuracy).
 */
void JM_FN(jm_lerp_joints)(const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, char *out, ptrdiff_t os,
                           size_t n, float t) {
    blend_joints(NLERP, a, as, b, bs, out, os, n, t);
}

/*
 * jm_slerp_quats: out[i] = slerp(a[i], b[i], t[i]) on float[4] unit quaternions, shortest arc;
 * t is read at byte offset i * ts. ts = 0 (one t for all): the fixed-t weights of
 * jm_slerp_joints. Else the per-lane formula (slerp_weights). t = 0 gives a[i] and t = 1 the
 * arc's end, b[i] or -b[i] (where a[i] . b[i] < 0), exactly, per element; q vs -q, parallel,
 * antipodal and NaN input as jm_slerp_joints.
 * Bound: max abs component error 5e-7 against a float64 slerp, | |q| - 1 | <= 1e-6, every path
 * (measured: docs/design/slerp.md#accuracy).
 */
void JM_FN(jm_slerp_quats)(const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, const char *t, ptrdiff_t ts,
                           char *out, ptrdiff_t os, size_t n) {
    blend_quats(SLERP, a, as, b, bs, t, ts, out, os, n);
}

/* jm_nlerp_quats: as jm_slerp_quats with the nlerp of jm_lerp_joints (any input scale, accuracy as
   there). */
void JM_FN(jm_nlerp_quats)(const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, const char *t, ptrdiff_t ts,
                           char *out, ptrdiff_t os, size_t n) {
    blend_quats(NLERP, a, as, b, bs, t, ts, out, os, n);
}

/* ------------------------------------------------------------------- float64 -- */
/*
 * jm_slerp_quats_f64 / jm_nlerp_quats_f64: the quaternion-array kernels on double[4] records and
 * double fractions, JM_WD records per block (lane i = record i, vd_load_quads). No float32
 * polynomial carries over: sinc_f64 and atanc_f64 are their own fits (benchmarks/
 * fit_interp_polys.py), the angle comes from one square root and one division
 * (docs/design/slerp.md#a-t-per-lane).
 */

/* sin(x) / x = 1 + s P(s) for s = x^2 in [0, (pi/2)^2]: relative error 3.6e-17 with the
   coefficients rounded to double. Estrin's scheme (short dependency chains). */
JM_INLINE vd sinc_f64(vd s) {
    vd s2 = vd_mul(s, s), s4 = vd_mul(s2, s2);
    vd p01 = vd_fmadd(vd_set1(0.0083333333333333159), s, vd_set1(-0.16666666666666666));
    vd p23 = vd_fmadd(vd_set1(2.7557319219163234e-06), s, vd_set1(-0.00019841269841254974));
    vd p45 = vd_fmadd(vd_set1(1.6058977312464087e-10), s, vd_set1(-2.5052107616996182e-08));
    vd p67 = vd_fmadd(vd_set1(2.7314447669863995e-15), s, vd_set1(-7.6439702967985717e-13));
    vd p = vd_fmadd(vd_fmadd(p67, s2, p45), s4, vd_fmadd(p23, s2, p01));
    return vd_fmadd(p, s, vd_set1(1.0));
}

JM_INLINE vd dot4_f64(const vd a[4], const vd b[4]) {
    return vd_fmadd(a[0], b[0], vd_fmadd(a[1], b[1], vd_fmadd(a[2], b[2], vd_mul(a[3], b[3]))));
}

/* all_below on float64 lanes; SLERP_COMPONENT_LIMIT_F64: slerp's domain in float64 (as float32's) */
JM_INLINE vdmask all_below_f64(const vd q[4], vd limit) {
    return md_and(md_and(vd_lt(vd_abs(q[0]), limit), vd_lt(vd_abs(q[1]), limit)),
                  md_and(vd_lt(vd_abs(q[2]), limit), vd_lt(vd_abs(q[3]), limit)));
}
#define SLERP_COMPONENT_LIMIT_F64 0x1p510

/* arc_sign on float64 lanes: -0.0 where d < 0, +0.0 elsewhere (d >= 0, -0 or NaN) */
JM_INLINE vd arc_sign_f64(vd d) { return vd_select(vd_lt(d, vd_set1(0.0)), vd_set1(-0.0), vd_set1(0.0)); }

/*
 * slerp_weights_f64: w0, w1 with slerp(a, b, t) = w0 a + w1 b for unit quaternions at dot product
 * d (w1 signed by the arc, `sign`), t in [0, 1]:
 *
 *   c = min(|d|, 1) = cos(omega), omega in [0, pi/2] the angle to the nearer of b and -b
 *   sin(omega) = sqrt((1 - c)(1 + c))             (no cancellation near c = 1)
 *   omega <= pi/4:  y = tan(omega / 2) = sin(omega) / (1 + c),  omega = 2 atan(y)
 *   omega >  pi/4:  y = tan(pi/4 - omega / 2) = c / (1 + sin(omega)),  omega = pi/2 - 2 atan(y)
 *
 * so that y is in [0, tan(pi/8)] (atanc_f64, 11 terms instead of ~20 over [0, 1]). K = omega /
 * sin(omega) is A (1 + y^2) below pi/4 (A = atan(y) / y: no division, exactly 1 at omega = 0) and
 * omega / sin(omega) above it (sin(omega) >= 0.7), the one division giving both y and
 * 1 / sin(omega). Then, as the float32 kernel,
 *
 *   w0 = (1 - t) K S(((1 - t) omega)^2),  w1 = +-t K S((t omega)^2),  S(x^2) = sin(x) / x.
 *
 * Parallel pairs (c = 1) get y = 0, omega = 0, K = S = 1: the lerp weights 1 - t and t; antipodal
 * ones are parallel after the sign flip. Every lane divides by at least 1 and takes the square root
 * of a non-negative number: no NaN from finite input.
 */
JM_INLINE void slerp_weights_f64(int groups, const vd *d, const vd *sign, const vd *t, vd *w0, vd *w1) {
    const vd one = vd_set1(1.0);
    vd c[GROUPS], sin_omega[GROUPS], numerator[GROUPS], denominator[GROUPS], also[GROUPS], reciprocal[GROUPS];
    vd y[GROUPS], y2[GROUPS], atan_ratio[GROUPS], two_atan[GROUPS], omega[GROUPS], k[GROUPS], rest[GROUPS];
    vd t_omega[GROUPS], rest_omega[GROUPS];
    vdmask wide[GROUPS];
    EACH(g, groups, c[g] = vd_min(one, vd_abs(d[g]))); /* NaN d stays NaN (vd_min: b when either is NaN) */
    EACH(g, groups, sin_omega[g] = vd_sqrt(vd_mul(vd_sub(one, c[g]), vd_add(one, c[g]))));
    EACH(g, groups, wide[g] = vd_lt(c[g], sin_omega[g])); /* omega > pi/4 */
    EACH(g, groups, numerator[g] = vd_select(wide[g], c[g], sin_omega[g]));
    EACH(g, groups, denominator[g] = vd_add(one, vd_select(wide[g], sin_omega[g], c[g])));
    /* wide: 1 / sin(omega) from the same reciprocal */
    EACH(g, groups, also[g] = vd_select(wide[g], sin_omega[g], one));
    EACH(g, groups, reciprocal[g] = vd_div(one, vd_mul(denominator[g], also[g])));
    EACH(g, groups, y[g] = vd_mul(vd_mul(numerator[g], also[g]), reciprocal[g]));
    EACH(g, groups, y2[g] = vd_mul(y[g], y[g]));
    EACH(g, groups, atan_ratio[g] = atanc_f64(y2[g]));
    EACH(g, groups, two_atan[g] = vd_mul(vd_add(y[g], y[g]), atan_ratio[g]));
    EACH(g, groups, omega[g] = vd_select(wide[g], vd_sub(vd_set1(1.5707963267948966), two_atan[g]), two_atan[g]));
    EACH(g, groups, k[g] = vd_select(wide[g], vd_mul(omega[g], vd_mul(denominator[g], reciprocal[g])),
                                     vd_fmadd(atan_ratio[g], y2[g], atan_ratio[g])));
    EACH(g, groups, rest[g] = vd_sub(one, t[g]));
    EACH(g, groups, t_omega[g] = vd_mul(t[g], omega[g]));
    EACH(g, groups, rest_omega[g] = vd_mul(rest[g], omega[g]));
    EACH(g, groups, w0[g] = vd_mul(vd_mul(rest[g], k[g]), sinc_f64(vd_mul(rest_omega[g], rest_omega[g]))));
    EACH(g, groups, w1[g] = vd_xor(vd_mul(vd_mul(t[g], k[g]), sinc_f64(vd_mul(t_omega[g], t_omega[g]))), sign[g]));
}

/*
 * Where the float64 nlerp's direct sums can be trusted: dot product d and squared norm n2 of the
 * sum with 2^-960 <= |d|, n2 <= 2^960. Then nothing overflowed, a product that underflowed (error
 * <= 2^-1075) can neither flip the sign of d nor move the sum's direction measurably (<= 2^-590
 * relative), and the square root and division work on normal numbers. Else (inputs beyond about
 * 2^+-480 in size, exactly orthogonal pairs, inf and NaN) the lane is redone from exponents and
 * mantissas (nlerp_record_scaled).
 */
JM_INLINE vdmask nlerp_out_of_range_f64(vd d, vd n2) {
    const vd lo = vd_set1(0x1p-960), hi = vd_set1(0x1p960), abs_d = vd_abs(d);
    return md_not(md_and(md_and(vd_ge(abs_d, lo), vd_ge(hi, abs_d)), md_and(vd_ge(n2, lo), vd_ge(hi, n2))));
}

/* q = m 2^e with the largest |m[i]| in [0.5, 1) (ldexp: exact but for components below 2^-1074
   of the largest); a zero q gives m = 0, e = 0 */
static void mantissas_f64(const double q[4], double m[4], int *e) {
    double largest = fmax(fmax(fabs(q[0]), fabs(q[1])), fmax(fabs(q[2]), fabs(q[3])));
    frexp(largest, e);
    for (int i = 0; i < 4; i++)
        m[i] = ldexp(q[i], -*e);
}

/*
 * normalize((1 - t) a +- t b) of one pair at any finite scales, and the arc's sign (-0.0 where
 * a . b < 0) in *sign: with a = ma 2^ea, b = mb 2^eb (mantissas_f64) and each weight w = f 2^g
 * (frexp), the terms f m 2^(g + e) are summed after scaling both by 2^-E, E the larger exponent
 * of a live term (ldexp; a term that underflows is below 2^-1074 of the other). With the arc's
 * sign the sum's norm is at least the larger term's, >= 1/4 after the scaling: the normalisation
 * can neither overflow nor underflow. a = b = 0 gives NaN (0 / 0); an inf or NaN component NaN.
 */
static void nlerp_record_scaled(const double a[4], const double b[4], double t, double out[4], double *sign) {
    if (!(isfinite(a[0]) && isfinite(a[1]) && isfinite(a[2]) && isfinite(a[3]) && isfinite(b[0]) &&
          isfinite(b[1]) && isfinite(b[2]) && isfinite(b[3]))) {
        for (int i = 0; i < 4; i++)
            out[i] = NAN;
        return;
    }
    double m[2][4], sum[4] = {0.0, 0.0, 0.0, 0.0}, n2 = 0.0;
    int e[2], g[2], top = INT_MIN;
    mantissas_f64(a, m[0], &e[0]);
    mantissas_f64(b, m[1], &e[1]);
    const double d = m[0][0] * m[1][0] + m[0][1] * m[1][1] + m[0][2] * m[1][2] + m[0][3] * m[1][3];
    *sign = d < 0.0 ? -0.0 : 0.0;
    double f[2] = {frexp(1.0 - t, &g[0]), frexp(d < 0.0 ? -t : t, &g[1])};
    int live[2];
    for (int k = 0; k < 2; k++) {
        live[k] = f[k] != 0.0 && (m[k][0] != 0.0 || m[k][1] != 0.0 || m[k][2] != 0.0 || m[k][3] != 0.0);
        if (live[k] && g[k] + e[k] > top)
            top = g[k] + e[k];
    }
    for (int k = 0; k < 2; k++)
        if (live[k])
            for (int i = 0; i < 4; i++)
                sum[i] += ldexp(f[k] * m[k][i], g[k] + e[k] - top);
    for (int i = 0; i < 4; i++)
        n2 += sum[i] * sum[i];
    const double inv_norm = 1.0 / sqrt(n2);
    for (int i = 0; i < 4; i++)
        out[i] = sum[i] * inv_norm;
}

/* out and sign of the lanes in `redo` from nlerp_record_scaled (the others unchanged). Cold:
   only blocks holding such a lane call it. */
JM_COLD static void nlerp_redo_scaled(vdmask redo, vd t, const vd a[4], const vd b[4], vd out[4], vd *sign) {
    double qa[4 * JM_WD], qb[4 * JM_WD], qo[4 * JM_WD], lane[4 * JM_WD]; /* lane: t, redo, sign, - */
    const vd zero = vd_set1(0.0);
    vd unused_t, unused_redo, unused_last;
    vd_store_quads((char *)qa, 32, a[0], a[1], a[2], a[3]);
    vd_store_quads((char *)qb, 32, b[0], b[1], b[2], b[3]);
    vd_store_quads((char *)qo, 32, out[0], out[1], out[2], out[3]);
    vd_store_quads((char *)lane, 32, t, vd_select(redo, vd_set1(1.0), zero), *sign, zero);
    for (int i = 0; i < JM_WD; i++)
        if (lane[4 * i + 1] != 0.0)
            nlerp_record_scaled(qa + 4 * i, qb + 4 * i, lane[4 * i], qo + 4 * i, &lane[4 * i + 2]);
    vd_load_quads((const char *)qo, 32, &out[0], &out[1], &out[2], &out[3]);
    vd_load_quads((const char *)lane, 32, &unused_t, &unused_redo, sign, &unused_last);
}

/* lane i: the fraction at byte offset i * ts (ts = 0: one for all) */
JM_INLINE vd load_fractions_f64(const char *t, ptrdiff_t ts) {
    double lanes[JM_WD];
    if (!ts) {
        memcpy(&lanes[0], t, sizeof(double));
        return vd_set1(lanes[0]);
    }
    if (ts == (ptrdiff_t)sizeof(double))
        return vd_loadu((const double *)t);
    for (int k = 0; k < JM_WD; k++)
        memcpy(&lanes[k], t + k * ts, sizeof(double));
    return vd_loadu(lanes);
}

/*
 * `groups` blocks of JM_WD double[4] records side by side (as quats_blocks: the blocks' long
 * dependency chains overlap), block g at x + (g JM_WD + i) * xs for x = a, b, out and fractions
 * at t + (g JM_WD + i) * ts: slerp or nlerp, then t = 0 gives a and t = 1 the arc's end, b or -b,
 * exactly. Every load happens before the first store (out may be a or b itself).
 */
JM_INLINE void quats_blocks_f64(int mode, int groups, const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs,
                                const char *t, ptrdiff_t ts, char *o, ptrdiff_t os) {
    vd qa[GROUPS][4], qb[GROUPS][4], q[GROUPS][4], tv[GROUPS], d[GROUPS], sign[GROUPS], w0[GROUPS], w1[GROUPS];
#define GROUP_OFFSET(xs, g) ((ptrdiff_t)((g) * JM_WD) * (xs))
    for (int g = 0; g < groups; g++) {
        vd_load_quads(a + GROUP_OFFSET(as, g), as, &qa[g][0], &qa[g][1], &qa[g][2], &qa[g][3]);
        vd_load_quads(b + GROUP_OFFSET(bs, g), bs, &qb[g][0], &qb[g][1], &qb[g][2], &qb[g][3]);
        tv[g] = load_fractions_f64(t + GROUP_OFFSET(ts, g), ts);
    }
    vdmask inside[GROUPS]; /* the domain, as blend_lanes: outside it arc sign + and NaN between the ends */
    const vd limit = vd_set1(mode == NLERP ? INFINITY : SLERP_COMPONENT_LIMIT_F64);
    EACH(g, groups, inside[g] = md_and(all_below_f64(qa[g], limit), all_below_f64(qb[g], limit)));
    EACH(g, groups, d[g] = dot4_f64(qa[g], qb[g]));
    EACH(g, groups, d[g] = vd_select(inside[g], d[g], vd_set1(0.0)));
    EACH(g, groups, sign[g] = arc_sign_f64(d[g]));
    if (mode == SLERP) {
        slerp_weights_f64(groups, d, sign, tv, w0, w1);
    } else {
        EACH(g, groups, w0[g] = vd_sub(vd_set1(1.0), tv[g]));
        EACH(g, groups, w1[g] = vd_xor(tv[g], sign[g]));
    }
    for (int k = 0; k < 4; k++)
        EACH(g, groups, q[g][k] = vd_fmadd(w1[g], qb[g][k], vd_mul(w0[g], qa[g][k])));
    if (mode == NLERP) {
        vd n2[GROUPS], inv_norm[GROUPS];
        EACH(g, groups, n2[g] = dot4_f64(q[g], q[g]));
        EACH(g, groups, inv_norm[g] = vd_div(vd_set1(1.0), vd_sqrt(n2[g])));
        for (int k = 0; k < 4; k++)
            EACH(g, groups, q[g][k] = vd_mul(q[g][k], inv_norm[g]));
        for (int g = 0; g < groups; g++) {
            vdmask redo = nlerp_out_of_range_f64(d[g], n2[g]);
            if (JM_UNLIKELY(md_any(redo)))
                nlerp_redo_scaled(md_and(redo, inside[g]), tv[g], qa[g], qb[g], q[g], &sign[g]);
        }
    }
    for (int k = 0; k < 4; k++)
        EACH(g, groups, q[g][k] = vd_select(inside[g], q[g][k], vd_set1(NAN)));
    for (int g = 0; g < groups; g++) {
        vdmask at_start = md_not(vd_gt(tv[g], vd_set1(0.0))), at_end = vd_ge(tv[g], vd_set1(1.0));
        if (md_any(md_or(at_start, at_end))) /* skipped by blocks of inner fractions only */
            for (int k = 0; k < 4; k++)
                q[g][k] = vd_select(at_start, qa[g][k], vd_select(at_end, vd_xor(qb[g][k], sign[g]), q[g][k]));
    }
    for (int g = 0; g < groups; g++)
        vd_store_quads(o + GROUP_OFFSET(os, g), os, q[g][0], q[g][1], q[g][2], q[g][3]);
#undef GROUP_OFFSET
}

/* n records, GROUPS * JM_WD and then JM_WD at a time; the last n % JM_WD through stack copies whose
   spare lanes repeat the last record (nothing read or written past the arrays, no spare lane on
   the cold path). */
JM_INLINE void quats_run_f64(int mode, const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, const char *t,
                             ptrdiff_t ts, char *o, ptrdiff_t os, size_t n) {
    size_t i = 0;
    for (; i + GROUPS * JM_WD <= n; i += GROUPS * JM_WD)
        quats_blocks_f64(mode, GROUPS, a + (ptrdiff_t)i * as, as, b + (ptrdiff_t)i * bs, bs, t + (ptrdiff_t)i * ts,
                         ts, o + (ptrdiff_t)i * os, os);
    for (; i + JM_WD <= n; i += JM_WD)
        quats_blocks_f64(mode, 1, a + (ptrdiff_t)i * as, as, b + (ptrdiff_t)i * bs, bs, t + (ptrdiff_t)i * ts, ts,
                         o + (ptrdiff_t)i * os, os);
    if (i < n) {
        char qa[JM_WD * 32], qb[JM_WD * 32], qo[JM_WD * 32], tt[JM_WD * 8];
        const size_t r = n - i;
        for (size_t k = 0; k < JM_WD; k++) {
            const ptrdiff_t j = (ptrdiff_t)(i + (k < r ? k : r - 1));
            memcpy(qa + 32 * k, a + j * as, 32);
            memcpy(qb + 32 * k, b + j * bs, 32);
            memcpy(tt + 8 * k, t + j * ts, 8);
        }
        quats_blocks_f64(mode, 1, qa, 32, qb, 32, tt, 8, qo, 32);
        for (size_t k = 0; k < r; k++)
            memcpy(o + (ptrdiff_t)(i + k) * os, qo + 32 * k, 32);
    }
}

/*
 * jm_slerp_quats_f64: out[i] = slerp(a[i], b[i], t[i]) on double[4] unit quaternions, t read at
 * byte offset i * ts (ts = 0: one t for all, the same per-lane formula), slerp_weights_f64.
 * Shortest arc; t = 0 gives a[i] and t = 1 the arc's end, b[i] or -b[i] (where the float64 dot
 * product is < 0; -0 and NaN count as >= 0), exactly. Nearly parallel and antipodal pairs take
 * the same formula (no NaN, no special case). Not normalised: other inputs give w0 a + w1 b with
 * the weights of their raw dot product.
 * Bound: max abs component error 2e-15 against an extended-precision slerp, every path
 * (measured: docs/design/slerp.md#accuracy).
 */
void JM_FN(jm_slerp_quats_f64)(const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, const char *t,
                               ptrdiff_t ts, char *out, ptrdiff_t os, size_t n) {
    quats_run_f64(SLERP, a, as, b, bs, t, ts, out, os, n);
}

/*
 * jm_nlerp_quats_f64: out[i] = normalize((1 - t[i]) a[i] +- t[i] b[i]) (shortest arc), double[4]
 * records, endpoints exactly as jm_slerp_quats_f64. a and b may have any finite scale, each its
 * own, from 2^-1074 to DBL_MAX, and t any double in [0, 1] (denormal included): lanes outside
 * nlerp_out_of_range_f64 (inputs beyond ~2^+-480, exactly orthogonal pairs, inf, NaN) are
 * computed from mantissas and exponents (nlerp_record_scaled), so the result is the normalised
 * sum as written; unit inputs take that cold path only where a . b is exactly 0. a = b = 0 gives
 * NaN, an inf or NaN component NaN (t = 0, 1: a, +-b as they are).
 * Bound: max abs component error 2e-15 against an extended-precision nlerp, unit or any finite
 * scale, every path (measured: docs/design/slerp.md#accuracy).
 */
void JM_FN(jm_nlerp_quats_f64)(const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, const char *t,
                               ptrdiff_t ts, char *out, ptrdiff_t os, size_t n) {
    quats_run_f64(NLERP, a, as, b, bs, t, ts, out, os, n);
}
