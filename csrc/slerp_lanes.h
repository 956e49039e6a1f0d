/*
 * slerp_lanes.h - the slerp and nlerp weights of JM_W quaternion pairs per vector, one pair per
 * lane (float32), shared by the joint-list, indexed and quaternion-array kernels (slerp.c,
 * partial_body.c). Compiled per ISA with its includers. Quaternions are (x, y, z, w). Two slerps:
 *  - one t for every lane (joint lists, slerp with a scalar t): the weights are polynomials in
 *    the dot product whose coefficients are computed from t once per call (fixed_t_weights);
 *  - a t per lane: the seed's transformed formula (no acos, no division): sin and cos of the
 *    angle from the dot product, the angle from a polynomial arctangent, the weights from a
 *    polynomial sine and a reciprocal square root estimate refined by one Newton-Raphson step
 *    with its second-order term (v_rsqrt_fine).
 * All polynomial coefficients are minimax fits made by tools/fit_interp_polys.py. Why these
 * forms, and the measured accuracy: docs/design/slerp.md.
 */
#ifndef JM_SLERP_LANES_H
#define JM_SLERP_LANES_H

#include "jointmath.h"
#include "simd/common.h"
#include "quat_math.h"

#include <math.h>
#include <string.h>

/* sin(x) / x for x in [0, pi/2], as a polynomial in x2 = x^2: relative error 6.1e-9 before float
   rounding. */
JM_INLINE vf sinc_0_half_pi(vf x2) {
    /* Estrin's scheme: shorter dependency chains than Horner's (the kernel is latency-bound) */
    vf x4 = v_mul(x2, x2);
    vf p01 = v_fmadd(v_set1(0.0083330665f), x2, v_set1(-0.1666666f));
    vf p23 = v_fmadd(v_set1(2.6057849e-06f), x2, v_set1(-0.00019809605f));
    return v_fmadd(v_fmadd(p23, x4, p01), x2, v_set1(1.0f));
}

/* atan(a) / a for a in [0, 1], as a polynomial in a2 = a^2: relative error 1.7e-8 before float
   rounding. */
JM_INLINE vf atanc_0_1(vf a2) {
    vf a4 = v_mul(a2, a2), a8 = v_mul(a4, a4);
    vf p01 = v_fmadd(v_set1(0.19993773f), a2, v_set1(-0.33333153f));
    vf p23 = v_fmadd(v_set1(0.106660135f), a2, v_set1(-0.14211057f));
    vf p45 = v_fmadd(v_set1(0.043212138f), a2, v_set1(-0.075522356f));
    vf p67 = v_fmadd(v_set1(0.0029207421f), a2, v_set1(-0.016368113f));
    vf p = v_fmadd(v_fmadd(p67, a4, p45), a8, v_fmadd(p23, a4, p01));
    return v_fmadd(p, a2, v_set1(1.0f));
}

/* whether every |q[k]| < limit (NaN: false) */
JM_INLINE vmask all_below(const vf q[4], vf limit) {
    return m_and(m_and(v_lt(v_abs(q[0]), limit), v_lt(v_abs(q[1]), limit)),
                 m_and(v_lt(v_abs(q[2]), limit), v_lt(v_abs(q[3]), limit)));
}

/* a cheap sufficient test for all_below(a, limit) and all_below(b, limit): the sum of the squares
   of the eight components below limit2 = limit^2 (NaN: false). A component at or beyond the limit
   has a square of at least limit^2 (a power of two, or inf), and rounding is monotone, so a sum
   below it means every component is below the limit. Why: eight multiply-adds instead of eight
   abs, eight compares and seven ands; the exact test runs only for blocks where this one fails */
JM_INLINE vmask squares_below(const vf a[4], const vf b[4], vf limit2) {
    vf sa = v_fmadd(a[1], a[1], v_mul(a[0], a[0])), sb = v_fmadd(b[1], b[1], v_mul(b[0], b[0]));
    sa = v_fmadd(a[3], a[3], v_fmadd(a[2], a[2], sa));
    sb = v_fmadd(b[3], b[3], v_fmadd(b[2], b[2], sb));
    return v_lt(v_add(sa, sb), limit2);
}

/* slerp's domain in float32: components below 2^62, so that |a . b| < 2^126 and w0 a + w1 b stay
   finite on every path; nlerp's: finite components */
#define SLERP_COMPONENT_LIMIT 0x1p62f

JM_INLINE vf dot4(vf ax, vf ay, vf az, vf aw, vf bx, vf by, vf bz, vf bw) {
    return v_fmadd(ax, bx, v_fmadd(ay, by, v_fmadd(az, bz, v_mul(aw, bw))));
}

/* The sign of the shortest arc from a to b at dot product d: -0.0 in the lanes where d < 0 (the
   arc ends at -b), +0.0 elsewhere (d >= 0, -0 or NaN: it ends at b). xor-ed into b or its weight. */
JM_INLINE vf arc_sign(vf d) { return v_select(v_lt(d, v_set1(0.0f)), v_set1(-0.0f), v_set1(0.0f)); }

/* Up to GROUPS groups of JM_W quaternions are interpolated together (see quats_blocks). */
#define GROUPS 2

/* The math below does each step for all groups before the next step (EACH, quat_math.h): the
   groups' dependency chains (dot product, rsqrt, two polynomials, ~150 cycles) then sit in the
   instruction window together and overlap. */

/*
 * slerp_weights: per group, w0, w1 with slerp(a, b, t) = w0 a + w1 b for unit quaternions a, b at
 * dot product d (arc sign `sign`), t in [0, 1]. The seed's transformed formula, rearranged so that the weights
 * are the lerp weights times factors near 1 (their rounding errors stay small):
 *
 *   c = min(|d|, 1) = cos(omega), omega in [0, pi/2] the angle to the nearer of b and -b
 *   sin^2(omega) = (1 - c)(1 + c)               (no cancellation near c = 1)
 *   a = tan(omega / 2) = (1 - c) / sin(omega)   in [0, 1]: rsqrt, no division or range reduction
 *   omega = 2 a A(a^2),  A(a^2) = atan(a) / a   polynomial
 *   K = omega / sin(omega) = A(a^2) (1 + a^2)   since sin(omega) = 2a / (1 + a^2)
 *   w0 = (1 - t) S(((1 - t) omega)^2) K,  w1 = +-t S((t omega)^2) K,  S(x^2) = sin(x) / x
 *
 * w1 takes the sign of the arc (arc_sign: negative where d < 0). Nearly parallel pairs (c rounds to 1: the
 * angle is below float resolution, ~3.5e-4 rad) get a = 0, omega = 0 and K = S = 1: exactly the
 * lerp weights 1 - t and t. sin^2 is kept away from zero before the rsqrt so that no lane
 * computes 0 * inf. Antipodal inputs are parallel after the sign flip.
 */
JM_INLINE void slerp_weights(int groups, const vf *d, const vf *sign, const vf *t, vf *w0, vf *w1) {
    const vf one = v_set1(1.0f);
    vf one_minus_t[GROUPS], c[GROUPS], one_minus_c[GROUPS], sin2[GROUPS], a[GROUPS], a2[GROUPS];
    vf atan_ratio[GROUPS], omega[GROUPS], k[GROUPS], t_omega[GROUPS], rest_omega[GROUPS];
    EACH(g, groups, one_minus_t[g] = v_sub(one, t[g]));
    EACH(g, groups, c[g] = v_min(one, v_abs(d[g])));
    EACH(g, groups, one_minus_c[g] = v_sub(one, c[g]));
    EACH(g, groups, sin2[g] = v_mul(one_minus_c[g], v_add(one, c[g])));
    EACH(g, groups, a[g] = v_mul(one_minus_c[g], v_rsqrt_fine(v_max(sin2[g], v_set1(1e-30f)))));
    EACH(g, groups, a2[g] = v_mul(a[g], a[g]));
    EACH(g, groups, atan_ratio[g] = atanc_0_1(a2[g]));
    EACH(g, groups, omega[g] = v_mul(v_add(a[g], a[g]), atan_ratio[g]));
    EACH(g, groups, k[g] = v_fmadd(atan_ratio[g], a2[g], atan_ratio[g]));
    EACH(g, groups, t_omega[g] = v_mul(t[g], omega[g]));
    EACH(g, groups, rest_omega[g] = v_mul(one_minus_t[g], omega[g]));
    EACH(g, groups, w0[g] = v_mul(v_mul(one_minus_t[g], k[g]), sinc_0_half_pi(v_mul(rest_omega[g], rest_omega[g]))));
    EACH(g, groups, w1[g] = v_xor(v_mul(v_mul(t[g], k[g]), sinc_0_half_pi(v_mul(t_omega[g], t_omega[g]))), sign[g]));
}

/*
 * The slerp with one t for every lane (joint lists, scalar t): no angle at all. The weight
 * sin(t w) / sin(w), w in [0, pi/2] the angle to the nearer of b and -b, is a polynomial in
 * u = 2 cos(w) - 1 in [-1, 1] whose coefficients depend on t only:
 *
 *   sin(t w) / sin(w) = sum_k c_k(t) u^k (k < 9),   c_k(t) = t sum_j FIXED_T_FIT[k][j] t^(2j)
 *
 * a minimax fit in absolute error over t in [0, 1] and w in [0, pi/2] made by
 * tools/fit_interp_polys.py: 3.0e-8 in float64, 1.2e-7 evaluated in float32 with the
 * coefficients computed once per call. The lanes evaluate two such polynomials (for 1 - t and
 * t, fixed_t_weight): about the work of nlerp's normalisation. Parallel and antipodal pairs
 * are no special case (u = 1 gives the lerp weights within the fit error).
 */
#define FIXED_T_TERMS 9
static const double FIXED_T_FIT[FIXED_T_TERMS][5] = {
    {1.2091996030985857, -0.22100597682611317, 0.012117930016249034, -0.0003162156445560161, 4.6739672176961497e-06},
    {-0.26359938676670236, 0.29187116326789619, -0.029365666437440673, 0.0011164204821093055, -2.2694359336380472e-05},
    {0.069732086098537718, -0.092430265918114068, 0.024172951931177487, -0.0015184559373989538, 4.3322342866720688e-05},
    {-0.019847072332592024, 0.028168714341987283, -0.0093138506907268197, 0.0010277082936669788, -3.4450767555631823e-05},
    {0.0058690852446952428, -0.0086301256197360461, 0.0031671617851133623, -0.00041742061179861762, 1.3250146645395119e-05},
    {-0.0017380030627078811, 0.0026126124441923251, -0.0010320552227990232, 0.00018133702168024845, -2.5852914615456145e-05},
    {0.00052680793662619296, -0.00080838739310196822, 0.0003539914391822477, -0.00010181350530472837, 2.6208324159469111e-05},
    {-0.00021359635368725551, 0.00032919774616820588, -0.00013344594460166752, 1.2136010218910555e-05, 6.7841880268584778e-06},
    {7.056485111238784e-05, -0.00010705986431962299, 3.2994241489745447e-05, 1.6357586266916201e-05, -1.1239938998098529e-05},
};

typedef struct {
    float t;
    float w0[FIXED_T_TERMS], w1[FIXED_T_TERMS]; /* c_k(1 - t), c_k(t) */
} fixed_t;

/* c_k(t) for every k, evaluated in double and rounded once */
static void fixed_t_weight_coefficients(double t, float c[FIXED_T_TERMS]) {
    const double t2 = t * t;
    for (int k = 0; k < FIXED_T_TERMS; k++) {
        const double *row = FIXED_T_FIT[k];
        c[k] = (float)(t * (row[0] + t2 * (row[1] + t2 * (row[2] + t2 * (row[3] + t2 * row[4])))));
    }
}

/* out of line: once per call, and the callers' loops keep their registers */
JM_NOINLINE static fixed_t fixed_t_for(float t) {
    fixed_t f;
    f.t = t;
    fixed_t_weight_coefficients(1.0 - (double)t, f.w0);
    fixed_t_weight_coefficients((double)t, f.w1);
    return f;
}

/*
 * fixed_t_weight: sum_k c[k] u^k as E(u^2) + u O(u^2), the even and the odd terms each by
 * Horner's scheme: two independent chains of four steps instead of one of eight, since a block's
 * latency bounds the joint-list loop on paths without FMA; float32 evaluation error 1.2e-7
 * (docs/design/slerp.md#one-t-for-every-lane-the-fixed-t-weights).
 */
_Static_assert(FIXED_T_TERMS % 2 == 1, "fixed_t_weight: the highest term is an even one");
JM_INLINE vf fixed_t_weight(const float c[FIXED_T_TERMS], vf u) {
    vf u2 = v_mul(u, u), even = v_set1(c[FIXED_T_TERMS - 1]), odd = v_set1(c[FIXED_T_TERMS - 2]);
    for (int k = FIXED_T_TERMS - 3; k >= 0; k -= 2)
        even = v_fmadd(even, u2, v_set1(c[k]));
    for (int k = FIXED_T_TERMS - 4; k >= 1; k -= 2)
        odd = v_fmadd(odd, u2, v_set1(c[k]));
    return v_fmadd(odd, u, even);
}

/* per group, the slerp weights w0, w1 of dot product d for the t of ft (w1 signed by the arc) */
JM_INLINE void fixed_t_weights(int groups, const vf *d, const vf *sign, const fixed_t *ft, vf *w0, vf *w1) {
    const vf one = v_set1(1.0f);
    vf u[GROUPS];
    EACH(g, groups, u[g] = v_fmadd(v_set1(2.0f), v_min(one, v_abs(d[g])), v_set1(-1.0f)));
    EACH(g, groups, w0[g] = fixed_t_weight(ft->w0, u[g]));
    EACH(g, groups, w1[g] = v_xor(fixed_t_weight(ft->w1, u[g]), sign[g]));
}

/*
 * nlerp: normalize((1 - t) a +- t b), the sign of the arc. With the shortest arc's sign the sum
 * has squared norm >= (1 - t)^2 |a|^2 + t^2 |b|^2 (>= 1/2 for unit inputs).
 */
JM_INLINE void nlerp_weights(int groups, const vf *sign, const vf *t, vf *w0, vf *w1) {
    EACH(g, groups, w0[g] = v_sub(v_set1(1.0f), t[g]));
    EACH(g, groups, w1[g] = v_xor(t[g], sign[g]));
}

/*
 * Where the float32 nlerp can be trusted: a dot product d and squared norm n2 of the sum with
 * 2^-100 <= |d|, n2 <= 2^100. Then no float32 operation overflowed, the products that underflowed
 * (absolute error <= 2^-150 each) cannot flip the sign of d or move the direction of the sum by
 * more than 2^-98 relative, and rsqrt works on a normal number. Everything else (inputs beyond
 * about 2^+-50 in size, denormal ones, exactly orthogonal pairs, NaN and inf) is redone in double.
 */
#define ORDINARY_MIN 0x1p-100f
#define ORDINARY_MAX 0x1p100f
JM_INLINE vmask nlerp_out_of_range(vf d, vf n2) {
    const vf lo = v_set1(ORDINARY_MIN), hi = v_set1(ORDINARY_MAX), abs_d = v_abs(d);
    return m_not(m_and(m_and(v_ge(abs_d, lo), v_ge(hi, abs_d)), m_and(v_ge(n2, lo), v_ge(hi, n2))));
}

/*
 * The nlerp of records a[i], b[i] (float[4]) at lane[i] = (t, redo, sign, -) for the i < JM_W
 * with redo != 0, in double: out[i] = normalize((1 - t) a +- t b) rounded once, lane[i] sign =
 * the arc's sign (-0.0 where a . b < 0). A product of two floats and the square of a sum of
 * two lie in 2^-596 ... 2^258, far inside double's normal range, so this is right for inputs of
 * any finite scale (a . b exact up to the rounding of three additions). a = b = 0 gives NaN.
 * Cold: called only for blocks with such a lane.
 */
JM_COLD static void nlerp_records_in_double(const float *a, const float *b, float *out,
                                                                   float *lane) {
    for (int i = 0; i < JM_W; i++) {
        const float *qa = a + 4 * i, *qb = b + 4 * i;
        float *l = lane + 4 * i;
        if (l[1] == 0.0f)
            continue;
        double d = 0.0, n2 = 0.0, sum[4];
        for (int k = 0; k < 4; k++)
            d += (double)qa[k] * qb[k];
        const double w0 = 1.0 - l[0], w1 = d < 0.0 ? -(double)l[0] : (double)l[0];
        for (int k = 0; k < 4; k++) {
            sum[k] = w0 * qa[k] + w1 * qb[k];
            n2 += sum[k] * sum[k];
        }
        const double inv_norm = 1.0 / sqrt(n2);
        for (int k = 0; k < 4; k++)
            out[4 * i + k] = (float)(sum[k] * inv_norm);
        l[2] = d < 0.0 ? -0.0f : 0.0f;
    }
}

/* out and sign of the lanes in `redo` from nlerp_records_in_double (the others unchanged) */
JM_INLINE void nlerp_redo_in_double(vmask redo, vf t, const vf a[4], const vf b[4], vf out[4], vf *sign) {
    float qa[4 * JM_W], qb[4 * JM_W], qo[4 * JM_W], lane[4 * JM_W];
    const vf zero = v_set1(0.0f);
    vf unused_t, unused_redo, unused_last;
    v_store_quads((char *)qa, 16, a[0], a[1], a[2], a[3]);
    v_store_quads((char *)qb, 16, b[0], b[1], b[2], b[3]);
    v_store_quads((char *)qo, 16, out[0], out[1], out[2], out[3]);
    v_store_quads((char *)lane, 16, t, v_select(redo, v_set1(1.0f), zero), *sign, zero);
    nlerp_records_in_double(qa, qb, qo, lane);
    v_load_quads((const char *)qo, 16, &out[0], &out[1], &out[2], &out[3]);
    v_load_quads((const char *)lane, 16, &unused_t, &unused_redo, sign, &unused_last);
}

enum { SLERP, SLERP_FIXED_T, NLERP };

/* out[g] = interp(a[g], b[g], t[g]) on the four component vectors of JM_W quaternions, g < groups
   (SLERP_FIXED_T: t is ft->t, the same in every lane), and sign[g] the sign of the arc (arc_sign:
   the end of the arc at t = 1 is b[g] xor sign[g]). */
JM_INLINE void blend_lanes(int mode, int groups, const vf *t, const fixed_t *ft, vf a[][4], vf b[][4], vf out[][4],
                           vf *sign) {
    vf d[GROUPS], w0[GROUPS], w1[GROUPS];
    vmask inside[GROUPS];
    /* outside the domain (a component of a or b at or beyond the limit, NaN included) the arc
       sign is + and the result NaN between the ends, on every path. Why: whether a . b came out
       inf, NaN or finite there depended on the path's fused multiply-adds, and with it the arc
       sign and the weights (min with NaN) */
    const float limit = mode == NLERP ? INFINITY : SLERP_COMPONENT_LIMIT;
    EACH(g, groups, inside[g] = squares_below(a[g], b[g], v_set1(limit * limit)));
    vmask surely_inside = inside[0];
    for (int g = 1; g < groups; g++)
        surely_inside = m_and(surely_inside, inside[g]);
    const int some_outside = m_any(m_not(surely_inside)); /* rare: then the exact test and selects */
    if (JM_UNLIKELY(some_outside))
        EACH(g, groups, inside[g] = m_and(all_below(a[g], v_set1(limit)), all_below(b[g], v_set1(limit))));
    EACH(g, groups, d[g] = dot4(a[g][0], a[g][1], a[g][2], a[g][3], b[g][0], b[g][1], b[g][2], b[g][3]));
    if (JM_UNLIKELY(some_outside))
        EACH(g, groups, d[g] = v_select(inside[g], d[g], v_set1(0.0f)));
    EACH(g, groups, sign[g] = arc_sign(d[g]));
    if (mode == SLERP)
        slerp_weights(groups, d, sign, t, w0, w1);
    else if (mode == SLERP_FIXED_T)
        fixed_t_weights(groups, d, sign, ft, w0, w1);
    else
        nlerp_weights(groups, sign, t, w0, w1);
    for (int k = 0; k < 4; k++)
        EACH(g, groups, out[g][k] = v_fmadd(w1[g], b[g][k], v_mul(w0[g], a[g][k])));
    if (mode == NLERP) {
        vf n2[GROUPS], inv_norm[GROUPS];
        EACH(g, groups, n2[g] = dot4(out[g][0], out[g][1], out[g][2], out[g][3],
                                     out[g][0], out[g][1], out[g][2], out[g][3]));
        EACH(g, groups, inv_norm[g] = v_rsqrt_fine(n2[g]));
        for (int k = 0; k < 4; k++)
            EACH(g, groups, out[g][k] = v_mul(out[g][k], inv_norm[g]));
        for (int g = 0; g < groups; g++) {
            vmask redo = nlerp_out_of_range(d[g], n2[g]);
            if (m_any(redo))
                nlerp_redo_in_double(m_and(redo, inside[g]), t[g], a[g], b[g], out[g], &sign[g]);
        }
    }
    if (JM_UNLIKELY(some_outside))
        for (int k = 0; k < 4; k++)
            EACH(g, groups, out[g][k] = v_select(inside[g], out[g][k], v_set1(NAN)));
}

#endif /* JM_SLERP_LANES_H */
