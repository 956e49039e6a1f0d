/*
 * interp.c - slerp and nlerp between joint records and between quaternion arrays.
 *
 * Compiled once per ISA (see simd.h); each block interpolates JM_W records at once, one record
 * per vector lane. Quaternions are (x, y, z, w). Two slerps:
 *  - one t for every lane (joint lists, slerp with a scalar t): the weights are polynomials in
 *    the dot product whose coefficients are computed from t once per call (fixed_t_weights);
 *  - a t per lane: the seed's transformed formula (no acos, no division): sin and cos of the
 *    angle from the dot product, the angle from a polynomial arctangent, the weights from a
 *    polynomial sine and a reciprocal square root estimate refined by one Newton-Raphson step
 *    with its second-order term (v_rsqrt_fine).
 * All polynomial coefficients are minimax fits made by benchmarks/fit_interp_polys.py; the
 * accuracy figures below were measured by benchmarks/interp_accuracy.py on every path.
 */
#include "jointmath.h"
#include "simd/common.h"
#include "quat_math.h"

#include <limits.h>
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
    EACH(one_minus_t[g] = v_sub(one, t[g]));
    EACH(c[g] = v_min(one, v_abs(d[g])));
    EACH(one_minus_c[g] = v_sub(one, c[g]));
    EACH(sin2[g] = v_mul(one_minus_c[g], v_add(one, c[g])));
    EACH(a[g] = v_mul(one_minus_c[g], v_rsqrt_fine(v_max(sin2[g], v_set1(1e-30f)))));
    EACH(a2[g] = v_mul(a[g], a[g]));
    EACH(atan_ratio[g] = atanc_0_1(a2[g]));
    EACH(omega[g] = v_mul(v_add(a[g], a[g]), atan_ratio[g]));
    EACH(k[g] = v_fmadd(atan_ratio[g], a2[g], atan_ratio[g]));
    EACH(t_omega[g] = v_mul(t[g], omega[g]));
    EACH(rest_omega[g] = v_mul(one_minus_t[g], omega[g]));
    EACH(w0[g] = v_mul(v_mul(one_minus_t[g], k[g]), sinc_0_half_pi(v_mul(rest_omega[g], rest_omega[g]))));
    EACH(w1[g] = v_xor(v_mul(v_mul(t[g], k[g]), sinc_0_half_pi(v_mul(t_omega[g], t_omega[g]))), sign[g]));
}

/*
 * The slerp with one t for every lane (joint lists, scalar t): no angle at all. The weight
 * sin(t w) / sin(w), w in [0, pi/2] the angle to the nearer of b and -b, is a polynomial in
 * u = 2 cos(w) - 1 in [-1, 1] whose coefficients depend on t only:
 *
 *   sin(t w) / sin(w) = sum_k c_k(t) u^k (k < 9),   c_k(t) = t sum_j FIXED_T_FIT[k][j] t^(2j)
 *
 * a minimax fit in absolute error over t in [0, 1] and w in [0, pi/2] made by
 * benchmarks/fit_interp_polys.py: 3.0e-8 in float64, 1.2e-7 evaluated in float32 with the
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

static fixed_t fixed_t_for(float t) {
    fixed_t f;
    f.t = t;
    fixed_t_weight_coefficients(1.0 - (double)t, f.w0);
    fixed_t_weight_coefficients((double)t, f.w1);
    return f;
}

/*
 * sum_k c[k] u^k as E(u^2) + u O(u^2), the even and the odd terms each by Horner's scheme: two
 * independent chains of four steps instead of one of eight. A block's latency is what bounds the
 * joint-list loop on paths without FMA (sse: 12 % faster than plain Horner, measured); the
 * rounding stays close to Horner's (float32 evaluation error 1.2e-7, plain Horner 1.0e-7, full
 * Estrin 1.7e-7; benchmarks/fit_interp_polys.py).
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
    EACH(u[g] = v_fmadd(v_set1(2.0f), v_min(one, v_abs(d[g])), v_set1(-1.0f)));
    EACH(w0[g] = fixed_t_weight(ft->w0, u[g]));
    EACH(w1[g] = v_xor(fixed_t_weight(ft->w1, u[g]), sign[g]));
}

/*
 * nlerp: normalize((1 - t) a +- t b), the sign of the arc. With the shortest arc's sign the sum
 * has squared norm >= (1 - t)^2 |a|^2 + t^2 |b|^2 (>= 1/2 for unit inputs).
 */
JM_INLINE void nlerp_weights(int groups, const vf *sign, const vf *t, vf *w0, vf *w1) {
    EACH(w0[g] = v_sub(v_set1(1.0f), t[g]));
    EACH(w1[g] = v_xor(t[g], sign[g]));
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
    EACH(d[g] = dot4(a[g][0], a[g][1], a[g][2], a[g][3], b[g][0], b[g][1], b[g][2], b[g][3]));
    EACH(sign[g] = arc_sign(d[g]));
    if (mode == SLERP)
        slerp_weights(groups, d, sign, t, w0, w1);
    else if (mode == SLERP_FIXED_T)
        fixed_t_weights(groups, d, sign, ft, w0, w1);
    else
        nlerp_weights(groups, sign, t, w0, w1);
    for (int k = 0; k < 4; k++)
        EACH(out[g][k] = v_fmadd(w1[g], b[g][k], v_mul(w0[g], a[g][k])));
    if (mode == NLERP) {
        vf n2[GROUPS], inv_norm[GROUPS];
        EACH(n2[g] = dot4(out[g][0], out[g][1], out[g][2], out[g][3], out[g][0], out[g][1], out[g][2], out[g][3]));
        EACH(inv_norm[g] = v_rsqrt_fine(n2[g]));
        for (int k = 0; k < 4; k++)
            EACH(out[g][k] = v_mul(out[g][k], inv_norm[g]));
        for (int g = 0; g < groups; g++) {
            vmask redo = nlerp_out_of_range(d[g], n2[g]);
            if (m_any(redo))
                nlerp_redo_in_double(redo, t[g], a[g], b[g], out[g], &sign[g]);
        }
    }
}

/*
 * One block of JM_W joint records: lane i is the record at x + i * stride, or with an index at
 * x + idx[i] * stride, for x = a, b, out. Every load happens before the first store, so out may
 * be a or b itself. The translation (all four floats) is (1 - t) a.t + t b.t; t = 1 gives the
 * arc's end, b.q or -b.q, and b.t exactly.
 * One block at a time, unlike the quaternion arrays' two groups: the fixed-t math is short, and
 * the records' raw vectors of a second block would not fit the registers (on AVX-512, 2 x 16
 * live vectors: the spills made the indexed blocks ~15 % slower, measured).
 */
JM_INLINE void joints_block(int mode, const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, char *o,
                            ptrdiff_t os, const intptr_t *restrict idx, const fixed_t *ft) {
    /* restrict: the stores to o never change the index, so it is not re-read after each */
    vf qa[1][4], qb[1][4], q[1][4], sign;
    voct ra, rb;
    const vf t = v_set1(ft->t), one_minus_t = v_sub(v_set1(1.0f), t);
    v_load_octs(a, as, idx, qa[0], &ra);
    v_load_octs(b, bs, idx, qb[0], &rb);
    blend_lanes(mode, 1, &t, ft, qa, qb, q, &sign);
    if (ft->t >= 1.0f) { /* the end of the arc: +-b.q exactly, b.t copied (the same branch for all blocks) */
        for (int k = 0; k < 4; k++)
            q[0][k] = v_xor(qb[0][k], sign);
        v_store_octs(o, os, idx, q[0], &rb);
        return;
    }
    for (int k = 0; k < JM_OCT_RAW; k++) /* the translations (and on some paths q, replaced below) */
        ra.v[k] = v_fmadd(t, rb.v[k], v_mul(one_minus_t, ra.v[k]));
    v_store_octs(o, os, idx, q[0], &ra);
}

_Static_assert(sizeof(jm_joint_quat) == 32, "joint records are copied with jm_copy_record32");

/* n records (32 bytes each) from src to dst, strides in bytes; nothing when they are the same. */
static void copy_records(const char *src, ptrdiff_t ss, char *dst, ptrdiff_t ds, size_t n) {
    const ptrdiff_t rec = (ptrdiff_t)sizeof(jm_joint_quat);
    if (src == dst && ss == ds)
        return;
    if (ss == rec && ds == rec) {
        memcpy(dst, src, n * sizeof(jm_joint_quat));
        return;
    }
    for (size_t i = 0; i < n; i++)
        jm_copy_record32(dst + (ptrdiff_t)i * ds, src + (ptrdiff_t)i * ss);
}

/*
 * The records of a frame from position `next` up to index[m - 1], except index[0..m) itself
 * (strictly increasing), from a to o; returns the position after index[m - 1] (the next
 * `next`). Called block by block, the unselected records are copied while their cache lines
 * are loaded for the selected ones.
 */
JM_INLINE size_t copy_gaps(const char *a, ptrdiff_t as, char *o, ptrdiff_t os, const intptr_t *index, size_t m,
                           size_t next) {
    /* record by record, no memcpy call: a call in the block loop would make every vector
       register live across it go to the stack */
    for (size_t k = 0; k < m; k++) {
        for (; next < (size_t)index[k]; next++)
            jm_copy_record32(o + (ptrdiff_t)next * os, a + (ptrdiff_t)next * as);
        next++;
    }
    return next;
}

/*
 * copy_gaps for a block of JM_W selected records of contiguous lists, before the block's stores.
 * copy_gaps' loop tests follow the gaps; the branch predictor learns them when they are all equal
 * (every second or third joint, a run) or the index is short enough to be learnt whole (fewer than
 * SPAN_COPY_MIN_INDEX entries, used again in every call and frame). Other gaps (a random subset of
 * a long list) would mispredict about once per selected record, and the lost work and memory
 * requests cost more than copying every record up to the block's last without a test (the
 * block's stores then replace the selected ones): a random half of 1,048,576 joints with a
 * separate out went from 1.49 to 1.14 of the full call on sse, 1.33 to 1.26 on avx2, 1.19 to 0.94
 * on avx512 (medians of 15 rounds, benchmarks/README.md's machine). A random half of 1,024
 * joints keeps copy_gaps (0.70 of the full call on sse; 0.80 copying the spans).
 */
#define SPAN_COPY_MIN_INDEX 4096
JM_INLINE size_t copy_block_gaps(const char *a, char *o, const intptr_t *index, size_t next, int long_index) {
    const ptrdiff_t rec = (ptrdiff_t)sizeof(jm_joint_quat);
    /* (one lane: a block has no gaps of its own; index[1] may lie past the index) */
    if (!long_index || JM_W == 1 || index[JM_W - 1] - index[0] == (JM_W - 1) * (index[1] - index[0]))
        return copy_gaps(a, rec, o, rec, index, JM_W, next);
    for (const size_t end = (size_t)index[JM_W - 1] + 1; next < end; next++)
        jm_copy_record32(o + (ptrdiff_t)next * rec, a + (ptrdiff_t)next * rec);
    return next;
}

/*
 * The lanes of a last, partial block of r < JM_W records: positions 0..r-1 of `first`, the
 * spare lanes repeating the last one (same record, same result: stores stay in bounds).
 */
JM_INLINE void tail_index(const intptr_t *first, size_t r, intptr_t idx[JM_W]) {
    for (size_t k = 0; k < JM_W; k++) {
        size_t j = k < r ? k : r - 1;
        idx[k] = first ? first[j] : (intptr_t)j;
    }
}

/*
 * Software prefetch for lists beyond the L2 cache (PREFETCH_MIN_RECORDS records or more, 1 MB a
 * list): the records PREFETCH_AHEAD positions ahead of a block are requested from both inputs
 * while the block computes. The hardware prefetchers alone left the memory and the math of a
 * block largely serial (benchmarks/bench_interp.py before and after, 1,048,576 joints, avx2 on
 * a first-generation Zen EPYC: the full slerp 8.9 -> 7.4 ns/joint, the every-second-joint index
 * in place 8.9 -> 7.0; 1,024 joints skip it). Contiguous lists only; with an index, within a
 * frame only, and see blend_joints_indexed for which records.
 */
#define PREFETCH_MIN_RECORDS 32768
#define PREFETCH_AHEAD 64

/*
 * In place (out is a), the AVX2 and AVX-512 paths also request the lines PREFETCH_FAR records
 * ahead into L2 (JM_PREFETCH_L2), beside the requests PREFETCH_AHEAD records ahead into L1.
 * Without a third list to write, the core's requests to memory are the limit: the near requests
 * alone hold the L1's miss buffers for a whole memory round trip (a profile put a third of the
 * indexed kernel's samples on its prefetch instructions). 1,048,576 joints, ns per joint, medians
 * of 7 runs alternating the builds (benchmarks/README.md's machine): the full call in place avx2
 * 3.41 -> 2.60, avx512 3.66 -> 2.54; every second joint in place 3.95 -> 2.85 and 4.04 -> 2.99; a
 * random half in place 3.70 -> 2.69 and 3.98 -> 2.92 (128 records ahead: about half the gain; 512:
 * no better than 256). With a separate out= the far requests made every call slower (the writes
 * to out need the memory too: every second joint 3.5 -> 4.6 on avx2), and on sse in place they
 * cost 5-7 % (the full call 4.10 -> 4.39): neither takes them. The L2 hint for the near requests
 * of a call with out= speeds the full call (avx2 4.2-5.2 -> 3.2-3.6 ns) but not the indexed
 * ones (every second joint 3.5-4.3 -> 3.4-4.1), which then cost more than the full call: left
 * as it was (benchmarks/README.md).
 * Only lists of PREFETCH_FAR_MIN_RECORDS records or more take them (4 MiB a list). Over a clip
 * in L3 they cost more than they hid: 2,752 frames of 31 joints (85,312 records, 2.7 MB a list;
 * partial_body_kernels.sh with FRAME_JOINTS=31, both builds in both orders, 6 runs) without them,
 * the full call in place 0.88-0.96 of its time with them, every second joint in place 0.76-0.91
 * of its time, and over the full call: avx2 0.83-1.07 -> 0.71-0.92, avx512 0.85-1.22 -> 0.72-1.06;
 * a random half (4 runs) 0.68-0.83 -> 0.60-0.66 and 0.71-0.98 -> 0.59-0.81. At 131,072 records in one
 * frame every second joint in place cost more without them (avx2 1.03-1.29 of the full call
 * against 0.89-0.96, avx512 1.15-1.45 against 0.92-1.09; the sparser indexes less), at 262,144
 * more still (avx2 1.31-1.41 against 1.12-1.15): lists from 4 MiB on keep them (two runs each,
 * benchmarks/README.md).
 */
#if JM_ISA == JM_ISA_AVX2 || JM_ISA == JM_ISA_AVX512
#define PREFETCH_FAR 256
#else
#define PREFETCH_FAR 0
#endif
#define PREFETCH_FAR_MIN_RECORDS 131072

/* 1 when a call over `records` records of contiguous lists takes the far requests (see PREFETCH_FAR) */
JM_INLINE int far_requests(int in_place, size_t records) {
    return PREFETCH_FAR && in_place && records >= PREFETCH_FAR_MIN_RECORDS;
}

/*
 * An index in place on AVX2 / AVX-512 (contiguous_blocks' span requests) requests `blend`'s lines
 * ahead of those of `joints` (the list it reads and writes): into L2 PREFETCH_FAR_BLEND_LEAD
 * records further, into L1 PREFETCH_BLEND_LEAD further. In place, over the full call in place (the
 * full call unchanged), runs of benchmarks/partial_body_numpy.py (11-21 rounds, the two lists in
 * one buffer 0, 64 or 1,024 KiB apart and as NumPy places them; benchmarks/README.md's machine),
 * ranges (medians):
 *   the L2 lead of 512, 28 runs: every second joint avx2 0.89-1.30 (1.14) -> 0.85-1.23 (1.05),
 *   lower in 27 runs; avx512 0.92-1.19 (1.06) -> 0.73-1.05 (0.97), lower in 26; a random half
 *   avx2 0.88-1.30 (1.13) -> 0.92-1.48 (1.12), the paired difference +0.04; avx512 +0.01. 256 or
 *   1,024: less; 2,048: less; 8,192 or a lead for `joints` instead: none.
 *   then the L1 lead of 32, 12 runs: a random half avx2 0.99-1.32 (1.13) -> 0.99-1.10 (1.02),
 *   lower in 10; avx512 0.84-1.25 (0.99) -> 0.84-1.02 (0.94), lower in 11; every second joint
 *   avx2 0.94-1.08 (1.04) -> 0.94-1.11 (1.07), avx512 0.82-1.15 (0.98) -> 0.79-1.10 (0.99). The
 *   worse of the two indexes in each run: avx2 1.04-1.32 (1.13) -> 1.02-1.11 (1.08).
 * Where the two lists lie moves these ratios by up to 0.3 (benchmarks/partial_body_placement.py).
 * Each horizon is one loop over both lists (prefetch_records_lead): with a loop per list and
 * horizon, four short loops per block, an index in place over a clip in L3 (2,752 frames of 31
 * joints, 85,312 records; partial_body_kernels.sh with FRAME_JOINTS=31, two runs) cost, every
 * second joint, 1.19 of the full call on avx2 and 1.29-1.49 on avx512, against 0.86-0.90 and
 * 0.93-1.22 so (0.79-0.82 and 0.84-1.05 without the leads). At 1,048,576 joints in one frame the
 * one loop costs every second joint in place ~0.1 of the full call more and a random half ~0.05
 * less (benchmarks/README.md): the clip, the usual case, decided.
 */
#define PREFETCH_FAR_BLEND_LEAD 512
#define PREFETCH_BLEND_LEAD 32

/* requests the cache line at p into L1, or into L2 (to_l2) */
JM_INLINE void prefetch_line(const char *p, int to_l2) {
    if (to_l2)
        JM_PREFETCH_L2(p);
    else
        JM_PREFETCH(p);
}

/* requests the cache lines of a's records [from, to) and of b's `lead` records further on (those
   below n; none when b is NULL) into L1, or into L2 (to_l2), one loop for both lists (records of
   32 bytes, two a line; see PREFETCH_FAR_BLEND_LEAD); returns the position after the last record
   requested (from when to <= from) */
JM_INLINE size_t prefetch_records_lead(const char *a, const char *b, size_t from, size_t to, size_t lead, size_t n,
                                       int to_l2) {
    const ptrdiff_t rec = (ptrdiff_t)sizeof(jm_joint_quat);
    for (; from < to; from += 2) {
        prefetch_line(a + (ptrdiff_t)from * rec, to_l2);
        if (b && from + lead < n)
            prefetch_line(b + (ptrdiff_t)(from + lead) * rec, to_l2);
    }
    return from;
}

/* prefetch_records_lead with no lead: both lists' records [from, to) */
JM_INLINE size_t prefetch_records(const char *a, const char *b, size_t from, size_t to, int to_l2) {
    return prefetch_records_lead(a, b, from, to, 0, to, to_l2);
}

/* requests into L1, or into L2 (to_l2), the cache lines of x's records at index[k] + shift (k <
   JM_W; index increasing; those below n), each line once: *last_line is the line (address / 64)
   requested last, 0 for none, and is updated */
JM_INLINE void prefetch_shifted_lines(const char *x, const intptr_t *index, size_t shift, size_t n,
                                      uintptr_t *last_line, int to_l2) {
    for (int k = 0; k < JM_W && (size_t)index[k] + shift < n; k++) {
        const char *p = x + (ptrdiff_t)((size_t)index[k] + shift) * (ptrdiff_t)sizeof(jm_joint_quat);
        if ((uintptr_t)p / 64 != *last_line)
            prefetch_line(p, to_l2);
        *last_line = (uintptr_t)p / 64;
    }
}

/* the loop position below which the records `ahead` .. ahead + JM_W - 1 further on exist (of n),
   or 0 (no prefetch) when the call has fewer than PREFETCH_MIN_RECORDS records */
JM_INLINE size_t prefetch_end(size_t n, size_t records, size_t ahead) {
    return records >= PREFETCH_MIN_RECORDS && n >= ahead + JM_W ? n - ahead - JM_W + 1 : 0;
}

/*
 * blend_joints' blocks of contiguous lists; returns the position after them. The lines below
 * prefetch_below are requested PREFETCH_AHEAD records ahead, those below far_below also
 * PREFETCH_FAR ahead into L2. Called with the constant far_below 0 for every call but a long one
 * in place, so that their loop carries no far requests: it compiles to the loop those calls ran
 * before them (with the test in one loop, the register allocation of the whole block changed and
 * the full call with out= ran up to ~10 % slower or faster, varying between builds).
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

/*
 * Indexed: n_frames frames of n_joints records (frame f of array x starts at x + f * n_joints
 * * stride); in every frame the joints at index[0..n_index) are interpolated, the others are
 * copied from a (nothing to copy when o is a). index is strictly increasing within
 * [0, n_joints) (checked by jm_copy_index); the selected records are read through the index, never
 * copied to a temporary. Per block of JM_W selected joints: a run of consecutive joints (the
 * usual partial-body index: a limb, the upper body) loads and stores as the full call's blocks
 * do; with a separate out, in cache, a block of every second joint reads and writes with a
 * stride of two records (every_second_joint_block); any other block reads and writes its records
 * one by one through the index. The math per lane is the same either way: the results are
 * bit-identical to the full call's.
 * Prefetch (long contiguous lists, see PREFETCH_MIN_RECORDS): an index over at least
 * 1 / PREFETCH_SPAN_MAX_GAP of a frame's joints requests every cache line of both lists up to
 * PREFETCH_SPAN_AHEAD records (in place PREFETCH_AHEAD) beyond the block's last selected joint,
 * each line once (`prefetched`: the position up to which they are requested); a sparser one the
 * records of the entries PREFETCH_AHEAD entries ahead. At 1,048,576 joints with a separate
 * out=, against the full call (medians of 9-13 rounds, each variant timed back to back with the
 * full call, benchmarks/README.md's machine), by entry -> span 64 records ahead: every second
 * joint avx2 1.18-1.30 -> 0.92-1.10, avx512 1.05-1.13 -> 0.80-0.89, sse 1.01-1.03 -> 0.90-0.95; a random
 * half avx2 1.27-1.35 -> 0.95-1.13, avx512 1.14-1.16 -> 0.85-0.95; a random quarter avx2 1.45 ->
 * 1.06, avx512 1.31 -> 0.94. Requests by entry fetch the lines of the selected joints only, some
 * twice, and not those of the unselected ones that the copy of the gaps reads; below a quarter
 * the span fetches far more lines than are used (every eighth joint avx2 0.71 by entry, 0.88 by
 * span; in place 0.39 and 0.49). The span 32 records ahead instead of 64 (three runs of 13
 * rounds): avx2 every second joint 1.00-1.06 -> 0.95-0.99, random half 1.04-1.08 -> 0.95-1.04;
 * avx512 0.84-0.94 -> 0.80-0.86 and 0.90-0.99 -> 0.82-0.94; sse unchanged (16 and 24: no better).
 * In place 64 records ahead is the better horizon (one run of 15 rounds, 32 -> 64: every second
 * joint sse 0.75 -> 0.69, avx2 0.91 -> 0.88, avx512 0.80 -> 0.76; random half 0.82 -> 0.81, 0.92
 * -> 0.89, 0.82 -> 0.80; 128: no better), with a separate out= the two were within 0.02 there.
 * In place on AVX2 and AVX-512 the span is also requested PREFETCH_FAR records ahead into L2, as
 * the full call in place does, and `blend`'s lines further ahead than those of `joints` (figures
 * at PREFETCH_FAR_BLEND_LEAD and PREFETCH_FAR; PREFETCH_SPAN_FAR, lists of PREFETCH_FAR_MIN_RECORDS
 * or more). With a separate out over many frames of lists beyond L3, an index that leaves lines
 * of `blend` unread requests instead the lines of `blend` it reads, by entry (see
 * SPARSE_BLEND_MIN_RECORDS).
 */
#define PREFETCH_SPAN_MAX_GAP 4
#define PREFETCH_SPAN_AHEAD 32
enum { NO_PREFETCH, PREFETCH_ENTRIES, PREFETCH_SPAN, PREFETCH_SPAN_FAR, PREFETCH_SPARSE_BLEND };

/*
 * Many frames with a separate out on AVX2 and AVX-512, lists of SPARSE_BLEND_MIN_RECORDS records
 * or more (16 MiB a list, three lists beyond a 32 MiB L3), an index that leaves whole cache lines
 * of `blend` unread (sparse_blend_lines: the first half of every frame, every fourth joint): the
 * span requests take `joints` only, and the lines of `blend` that the index reads are requested
 * by entry, whole frames ahead: PREFETCH_SPAN_AHEAD records rounded up to frames into L1,
 * SPARSE_BLEND_FAR records so into L2 (PREFETCH_SPARSE_BLEND). The span requests of both lists
 * fetched `blend`'s unread lines too (the call moved as many bytes as the full call), and a list
 * read in bursts is a stream the hardware prefetchers follow poorly. 35,776 frames of 31 joints
 * with out=, over the full call (partial_body_kernels.sh with FRAME_JOINTS=31 OFFSET=16, medians of
 * 11 rounds, 8 runs; benchmarks/README.md), ranges (medians): the first half avx2 1.03-1.43 (1.27)
 * -> 0.96-1.17 (1.06), lower in 7 runs; avx512 0.96-1.13 (1.08) -> 0.78-1.07 (0.90), lower in 8;
 * every fourth joint avx2 1.00-1.32 (1.19) -> 0.85-1.19 (1.02), avx512 0.89-1.21 (0.98) ->
 * 0.73-0.95 (0.87). `blend`'s read lines into L2 beside the span requests of both lists (2 runs):
 * the first half avx2 1.24-1.26; the same without `blend`'s span: 1.19-1.28. A clip in L3 (2,752
 * frames) lost with such far requests (the first half 0.87-0.90 -> 1.00-1.04 of the full call):
 * the size threshold keeps them from it; so did this form at 4,500 frames (139,500 records, two runs:
 * the first half avx2 0.90, 1.12 -> 1.01, 1.07). Indexes that read every line or three in four
 * (every second joint, a random half) gained nothing from requests by entry: they keep the span.
 */
#define SPARSE_BLEND_MIN_RECORDS 524288
#define SPARSE_BLEND_FAR 512

/* 1 when index[0..n) (strictly increasing) reads at most 5 in 8 of the cache lines of a frame of
   n_joints records, counting a line as two records (a frame's start may shift them by one): the
   first half of 31 joints or every fourth joint reads 1 in 2, every third joint 11 of 16, a
   random half about 3 in 4, every second joint every line */
static int sparse_blend_lines(const intptr_t *index, size_t n, size_t n_joints) {
    size_t read = 1;
    for (size_t k = 1; k < n; k++)
        read += index[k] >> 1 != index[k - 1] >> 1;
    return 8 * read <= 5 * ((n_joints + 1) / 2);
}

/* 1 when the JM_W entries at index are every second joint from index[0] (one test for the block,
   no branch per entry; called for blocks spanning 2 (JM_W - 1) joints only) */
JM_INLINE int every_second_joint(const intptr_t *index) {
    intptr_t off = 0;
    for (int j = 1; j < JM_W; j++)
        off |= index[j] - index[0] - 2 * j;
    return off == 0;
}

/*
 * On AVX2 and AVX-512 a record is copied by one 256-bit move, which crosses a 64-byte cache line
 * where the record starts 48 bytes into one: every second record of a list 16 bytes off 32-byte
 * alignment (NumPy aligns its arrays to 16 bytes). gap_copies_cross: 1 when the unselected
 * records of every_second_joint_block from `first` (first + 1, first + 3, ...) lie so in the
 * frame fo; its copies then move them by 128-bit halves, which never cross a line (halves).
 * Every second joint of 1,024 with a separate out at such placements (the blocks' stores then
 * stay within lines), against the full call, kernels side by side (partial_body_kernels.sh, 41
 * rounds, an AMD Zen 4, benchmarks/README.md): avx2 0.60-0.62 -> 0.54-0.58, avx512 0.62-0.72 ->
 * 0.58-0.65; the other placements run the blocks as before. Copying every record by halves
 * wherever some cross (random subsets, every third joint) made those slower: only these blocks,
 * chosen once per frame, take them.
 */
#define HALF_COPIES (JM_ISA == JM_ISA_AVX2 || JM_ISA == JM_ISA_AVX512)
JM_INLINE int gap_copies_cross(const char *fo, intptr_t first) {
    return (((uintptr_t)fo + sizeof(jm_joint_quat) * (uintptr_t)(first + 1)) & 63) > 32;
}

JM_INLINE void copy_record(char *dst, const char *src, int halves) {
    if (halves) {
        memcpy(dst, src, 16);
        memcpy(dst + 16, src + 16, 16);
    } else {
        jm_copy_record32(dst, src);
    }
}

/*
 * A block of JM_W selected joints two apart (every second joint from `first`) of contiguous lists
 * with a separate out (fo is not fa), in cache: the records from `next` up to `first` and the one
 * after each selected joint but the last are copied from fa to fo, then the block is read and
 * written with a stride of two records. Returns the position after its last joint (the next
 * `next`). Every offset is a constant from `first`: no index loads and no tested gap loop.
 * Every second joint of 1,024 with a separate out, against the full call (both builds' kernels
 * interleaved in one process, medians of 41-61 rounds, benchmarks/README.md): level on a quiet
 * machine (avx2 0.63-0.64 either way), lower where the machine was busy and the tested copy of
 * the gaps cost most (sse 0.71 -> 0.64, avx2 0.71 -> 0.67, avx512 0.90 -> 0.70 in one run; avx2
 * 0.65-0.76 -> 0.63-0.68 over six). In place (nothing to copy) the indexed block was as fast or
 * faster, and lists beyond the prefetch threshold (memory-bound) gained nothing: both keep the
 * loop as it was.
 * halves: the copies move 128 bits at a time (see gap_copies_cross).
 */
JM_INLINE size_t every_second_joint_block(int mode, const char *fa, const char *fb, char *fo, intptr_t first,
                                          size_t next, const fixed_t *ft, int halves) {
    const ptrdiff_t rec = (ptrdiff_t)sizeof(jm_joint_quat), at = first * rec;
    for (; next < (size_t)first; next++)
        copy_record(fo + (ptrdiff_t)next * rec, fa + (ptrdiff_t)next * rec, halves);
    for (int j = 0; j < JM_W - 1; j++)
        copy_record(fo + at + (2 * j + 1) * rec, fa + at + (2 * j + 1) * rec, halves);
    joints_block(mode, fa + at, 2 * rec, fb + at, 2 * rec, fo + at, 2 * rec, NULL, ft);
    return (size_t)first + 2 * (JM_W - 1) + 1;
}

/*
 * blend_joints_indexed's blocks of JM_W entries for one frame of contiguous lists (fa, fb, fo),
 * while whole blocks remain; returns the entry after them and advances *next as there.
 * blend_joints_indexed calls it once with the constant NO_PREFETCH (lists in cache) and once
 * with the prefetch of the call, so that the loop without prefetch carries none of its state or
 * tests: with them in that loop, every second joint of 1,024 cost ~5 % more on avx2 and avx512
 * (paired runs against main 19bd4e7); three copies (one per mode) made a run of joints on sse
 * ~6 % slower instead (first half of 1,024: 0.77 of the full call against main's 0.72; 0.71 so).
 * Without prefetch it is also called with the constant halves 1 on AVX2 / AVX-512 (the copies
 * of every_second_joint_block by 128-bit halves, see gap_copies_cross). frame: the frame length
 * in records of the flat lists of PREFETCH_SPARSE_BLEND (see blend_frames_flat), else unused.
 */
JM_INLINE size_t contiguous_blocks(int mode, int prefetch, const char *fa, const char *fb, char *fo, size_t n_joints,
                                   const intptr_t *index, size_t n_index, size_t prefetch_below, size_t frame,
                                   int in_place, int long_index, int halves, const fixed_t *ft, size_t *next) {
    const ptrdiff_t rec = (ptrdiff_t)sizeof(jm_joint_quat);
    size_t k = 0, prefetched = (size_t)index[0], done = *next;
    size_t far = prefetched; /* PREFETCH_SPAN_FAR */
    /* PREFETCH_SPARSE_BLEND: how far ahead (whole frames) and the last lines requested of blend */
    const size_t near_shift = prefetch == PREFETCH_SPARSE_BLEND ? (PREFETCH_SPAN_AHEAD + frame - 1) / frame * frame : 0;
    const size_t far_shift = prefetch == PREFETCH_SPARSE_BLEND ? (SPARSE_BLEND_FAR + frame - 1) / frame * frame : 0;
    uintptr_t near_line = 0, far_line = 0;
    for (; k + JM_W <= n_index; k += JM_W) {
        if (prefetch == PREFETCH_SPARSE_BLEND) {
            const size_t ahead = (size_t)index[k + JM_W - 1] + PREFETCH_SPAN_AHEAD;
            prefetched = prefetch_records_lead(fa, NULL, prefetched, ahead < n_joints ? ahead : n_joints, 0, 0, 0);
            prefetch_shifted_lines(fb, index + k, near_shift, n_joints, &near_line, 0);
            prefetch_shifted_lines(fb, index + k, far_shift, n_joints, &far_line, 1);
        } else if (prefetch == PREFETCH_SPAN || prefetch == PREFETCH_SPAN_FAR) {
            const size_t last = (size_t)index[k + JM_W - 1];
            const size_t ahead = last + (in_place ? PREFETCH_AHEAD : PREFETCH_SPAN_AHEAD);
            if (PREFETCH_FAR && prefetch == PREFETCH_SPAN_FAR) { /* in place; blend's lead (PREFETCH_FAR_BLEND_LEAD) */
                const size_t far_ahead = last + PREFETCH_FAR;
                prefetched = prefetch_records_lead(fa, fb, prefetched, ahead < n_joints ? ahead : n_joints,
                                                   PREFETCH_BLEND_LEAD, n_joints, 0);
                far = prefetch_records_lead(fa, fb, far, far_ahead < n_joints ? far_ahead : n_joints,
                                            PREFETCH_FAR_BLEND_LEAD, n_joints, 1);
            } else {
                prefetched = prefetch_records(fa, fb, prefetched, ahead < n_joints ? ahead : n_joints, 0);
            }
        } else if (prefetch == PREFETCH_ENTRIES && k < prefetch_below) {
            for (size_t p = k + PREFETCH_AHEAD; p < k + PREFETCH_AHEAD + JM_W; p++) {
                JM_PREFETCH(fa + index[p] * rec);
                JM_PREFETCH(fb + index[p] * rec);
            }
        }
        const intptr_t span = index[k + JM_W - 1] - index[k];
        if (JM_W > 1 && prefetch == NO_PREFETCH && !in_place && span == 2 * (JM_W - 1) &&
            every_second_joint(index + k)) {
            done = every_second_joint_block(mode, fa, fb, fo, index[k], done, ft, halves);
            continue;
        }
        if (!in_place)
            done = copy_block_gaps(fa, fo, index + k, done, long_index);
        if (span == JM_W - 1) { /* a run of joints: the full call's block */
            const ptrdiff_t run = index[k] * rec;
            joints_block(mode, fa + run, rec, fb + run, rec, fo + run, rec, NULL, ft);
        } else {
            joints_block(mode, fa, rec, fb, rec, fo, rec, index + k, ft);
        }
    }
    *next = done;
    return k;
}

/*
 * The blocks of one frame (fa, fb, fo; n_joints records) for index[0..n_index), its records from
 * `next` on (the ones before are done); returns the position after the last one done (with a
 * separate out the rest of the frame is the caller's to copy). For contiguous lists: span_prefetch
 * (PREFETCH_SPAN, PREFETCH_SPAN_FAR, PREFETCH_SPARSE_BLEND, or NO_PREFETCH for none or the
 * requests by entry below prefetch_below) and frame as contiguous_blocks.
 */
JM_INLINE size_t frame_blocks(int mode, const char *fa, ptrdiff_t as, const char *fb, ptrdiff_t bs, char *fo,
                              ptrdiff_t os, size_t n_joints, const intptr_t *index, size_t n_index, int contiguous,
                              int in_place, int span_prefetch, size_t prefetch_below, size_t frame, int long_index,
                              const fixed_t *ft, size_t next) {
    size_t k = 0;
    if (contiguous) { /* the offsets are shifts of the index */
        if (PREFETCH_FAR && span_prefetch == PREFETCH_SPARSE_BLEND) /* a loop of its own, never in place */
            k = contiguous_blocks(mode, PREFETCH_SPARSE_BLEND, fa, fb, fo, n_joints, index, n_index, 0, frame, 0,
                                  long_index, 0, ft, &next);
        else if (span_prefetch || prefetch_below)
            k = contiguous_blocks(mode, span_prefetch ? span_prefetch : PREFETCH_ENTRIES, fa, fb, fo, n_joints, index,
                                  n_index, prefetch_below, 0, in_place, long_index, 0, ft, &next);
        else if (HALF_COPIES && !in_place && gap_copies_cross(fo, index[0]))
            k = contiguous_blocks(mode, NO_PREFETCH, fa, fb, fo, n_joints, index, n_index, 0, 0, in_place, long_index,
                                  1, ft, &next);
        else
            k = contiguous_blocks(mode, NO_PREFETCH, fa, fb, fo, n_joints, index, n_index, 0, 0, in_place, long_index,
                                  0, ft, &next);
    }
    for (; k + JM_W <= n_index; k += JM_W) {
        if (!in_place)
            next = copy_gaps(fa, as, fo, os, index + k, JM_W, next);
        joints_block(mode, fa, as, fb, bs, fo, os, index + k, ft);
    }
    if (k < n_index) {
        intptr_t idx[JM_W];
        tail_index(index + k, n_index - k, idx);
        if (!in_place)
            next = copy_gaps(fa, as, fo, os, index + k, n_index - k, next);
        joints_block(mode, fa, as, fb, bs, fo, os, idx, ft);
    }
    return next;
}

/*
 * Many frames of contiguous lists with an index of fewer than FLAT_CHUNK entries: frame by
 * frame, each frame would end in a partial block (15 of 31 joints: blocks of 8 and 7 lanes) and
 * its own copy of the frame's rest. Instead the lists run as one frame of n_frames * n_joints
 * records, selected by the frames' entries one after another (entry k of frame f at position f *
 * n_joints + index[k]), built FLAT_CHUNK entries at a time on the stack (with the PREFETCH_AHEAD
 * + JM_W entries after them that the prefetch by entry reads): blocks run on across frame ends,
 * and a gap runs from one frame into the next. Lanes and results as frame by frame. Frames of 31
 * joints, over the full call (partial_body_kernels.sh with FRAME_JOINTS=31, medians of 21 rounds,
 * 31 at 64 frames; frame by frame -> flat; every second joint, the first half, a random 15, every
 * third, every fourth; benchmarks/README.md):
 *   64 frames (in L1/L2), avx2, out=:  0.67 0.87 1.07 0.87 0.64 -> 0.62 0.70 0.70 0.59 0.52
 *                             in place: 0.59 0.65 0.86 0.66 0.40 -> 0.55 0.54 0.58 0.44 0.34
 *   2,752 frames (a clip, in L3), avx2, out=: 0.95 0.97 1.01 1.05 0.75 -> 0.88 0.83 0.73 0.73 0.67
 *   35,776 frames (lists beyond the caches), in place, avx2: 1.24 1.48 1.10 1.55 1.08 -> 1.05 1.05
 *   0.99 1.04 1.04; avx512 1.10 1.26 0.87 1.25 0.90 -> 0.89 0.87 0.86 0.95 0.96. There with a
 *   separate out the two are within about 0.1 of 1.0 either way (avx2 0.93 1.09 0.91 1.08 0.96 ->
 *   1.01 1.07 1.01 0.95 1.05). Prefetching by entry instead of by span, or no prefetch with a
 *   separate out, was slower there (up to 1.33 and 1.41).
 */
#define FLAT_CHUNK 256
#define FLAT_LOOKAHEAD (PREFETCH_AHEAD + JM_W - 1) /* entries the prefetch by entry reads beyond a block */
JM_INLINE void blend_frames_flat(int mode, const char *a, const char *b, char *o, size_t n_frames, size_t n_joints,
                                 const intptr_t *index, size_t n_index, int in_place, int span_prefetch,
                                 int entry_prefetch, int long_index, const fixed_t *ft) {
    const ptrdiff_t rec = (ptrdiff_t)sizeof(jm_joint_quat);
    const size_t n = n_frames * n_joints;
    const size_t lookahead = entry_prefetch ? FLAT_LOOKAHEAD : 0;
    intptr_t flat[FLAT_CHUNK + FLAT_LOOKAHEAD + JM_W + FLAT_CHUNK];
    size_t next = 0, filled = 0, frame = 0;
    while (frame < n_frames || filled) {
        /* whole frames up to FLAT_CHUNK + lookahead entries (at least one frame) */
        for (; frame < n_frames && (filled < FLAT_CHUNK + lookahead || !filled); frame++) {
            const intptr_t base = (intptr_t)(frame * n_joints);
            for (size_t j = 0; j < n_index; j++)
                flat[filled + j] = base + index[j];
            filled += n_index;
        }
        /* the whole blocks whose prefetch entries are in; all of them once every frame is (the
           prefetch then stops FLAT_LOOKAHEAD entries before the end, as contiguous_blocks' does) */
        const size_t ready = frame < n_frames ? (filled - lookahead) / JM_W * JM_W : filled;
        size_t prefetch_below = 0; /* none where the call takes no prefetch by entry */
        if (lookahead)
            prefetch_below = frame < n_frames ? ready : filled > lookahead ? filled - lookahead : 0;
        next = frame_blocks(mode, a, rec, b, rec, o, rec, n, flat, ready, 1, in_place, span_prefetch, prefetch_below,
                            n_joints, long_index, ft, next);
        memmove(flat, flat + ready, (filled - ready) * sizeof(intptr_t));
        filled -= ready;
    }
    copy_records(a + (ptrdiff_t)next * rec, rec, o + (ptrdiff_t)next * rec, rec, n - next);
}

JM_INLINE void blend_joints_indexed(int mode, const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, char *o,
                                    ptrdiff_t os, size_t n_frames, size_t n_joints, const intptr_t *index,
                                    size_t n_index, float t) {
    const fixed_t ft = fixed_t_for(t);
    const ptrdiff_t rec = (ptrdiff_t)sizeof(jm_joint_quat);
    const int contiguous = as == rec && bs == rec && os == rec, in_place = a == o && as == os;
    const size_t records = n_frames * n_joints;
    if (t <= 0.0f || !n_index) {
        for (size_t f = 0; f < n_frames; f++)
            copy_records(a + (ptrdiff_t)(f * n_joints) * as, as, o + (ptrdiff_t)(f * n_joints) * os, os, n_joints);
        return;
    }
    if (!index) /* tells the compiler which branch of JM_REC runs */
        JM_UNREACHABLE();
    const int span = PREFETCH_SPAN_MAX_GAP * n_index >= n_joints, long_index = n_index >= SPAN_COPY_MIN_INDEX;
    const int prefetch = records >= PREFETCH_MIN_RECORDS;
    const int flat = contiguous && n_frames > 1 && n_index < FLAT_CHUNK;
    int span_prefetch = NO_PREFETCH; /* the requests by span of a long call (contiguous_blocks) */
    if (span && prefetch) {
        span_prefetch = PREFETCH_SPAN;
        if (far_requests(in_place, records))
            span_prefetch = PREFETCH_SPAN_FAR;
        else if (PREFETCH_FAR && !in_place && flat && records >= SPARSE_BLEND_MIN_RECORDS &&
                 sparse_blend_lines(index, n_index, n_joints))
            span_prefetch = PREFETCH_SPARSE_BLEND;
    }
    if (flat) {
        blend_frames_flat(mode, a, b, o, n_frames, n_joints, index, n_index, in_place, span_prefetch, prefetch && !span,
                          long_index, &ft);
        return;
    }
    const size_t prefetch_below = span ? 0 : prefetch_end(n_index, records, PREFETCH_AHEAD);
    for (size_t f = 0; f < n_frames; f++) {
        const char *fa = a + (ptrdiff_t)(f * n_joints) * as, *fb = b + (ptrdiff_t)(f * n_joints) * bs;
        char *fo = o + (ptrdiff_t)(f * n_joints) * os;
        const size_t next = frame_blocks(mode, fa, as, fb, bs, fo, os, n_joints, index, n_index, contiguous, in_place,
                                         span_prefetch, prefetch_below, 0, long_index, &ft, 0);
        copy_records(fa + (ptrdiff_t)next * as, as, fo + (ptrdiff_t)next * os, os, n_joints - next);
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
 * curve stays on one hemisphere up to its last sample), every other t the interpolation. Two blocks side by side: one block's dependency chain (dot product, rsqrt,
 * two polynomials, ~150 cycles) is too long for the CPU to overlap with the next on its own.
 * Lanes and loads-before-stores as in joints_block.
 */
JM_INLINE void quats_blocks(int mode, int groups, const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs,
                            const char *t, ptrdiff_t ts, const fixed_t *ft, char *o, ptrdiff_t os,
                            const intptr_t *restrict idx) {
    vf qa[GROUPS][4], qb[GROUPS][4], q[GROUPS][4], tv[GROUPS], sign[GROUPS];
#define GROUP_ARGS(x, xs, g) (idx ? (x) : (x) + (ptrdiff_t)((g) * JM_W) * (xs)), (xs), (idx ? idx + (g) * JM_W : NULL)
    for (int g = 0; g < groups; g++) {
        tv[g] = load_fractions(GROUP_ARGS(t, ts, g));
        v_load_quads_idx(GROUP_ARGS(a, as, g), &qa[g][0], &qa[g][1], &qa[g][2], &qa[g][3]);
        v_load_quads_idx(GROUP_ARGS(b, bs, g), &qb[g][0], &qb[g][1], &qb[g][2], &qb[g][3]);
    }
    blend_lanes(mode, groups, tv, ft, qa, qb, q, sign);
    for (int g = 0; g < groups; g++) {
        vmask at_start = m_not(v_gt(tv[g], v_set1(0.0f))), at_end = v_ge(tv[g], v_set1(1.0f));
        for (int k = 0; k < 4; k++)
            q[g][k] = v_select(at_start, qa[g][k], v_select(at_end, v_xor(qb[g][k], sign[g]), q[g][k]));
    }
    for (int g = 0; g < groups; g++)
        v_store_quads_idx(GROUP_ARGS(o, os, g), q[g][0], q[g][1], q[g][2], q[g][3]);
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
 * weights of their raw dot product). Shortest arc: b.q is negated where a.q . b.q < 0. t = 0
 * copies a exactly; t = 1 gives the end of that arc exactly, b.q or -b.q (where the float32 dot
 * product is < 0; -0 and NaN count as >= 0), and b.t, so that a curve sampled up to t = 1 stays
 * on one hemisphere. Never NaN for finite input; the fixed-t weights (one t for all joints), so
 * parallel and antipodal pairs need no special case.
 * Accuracy, unit quaternions, float32, measured by benchmarks/interp_accuracy.py over 10^7
 * pairs (random pairs and one in ten nearly parallel or nearly antipodal at 1e-3 ... 1e-7, one
 * random t per 10,000 pairs): max abs component error against a float64 slerp 2.43e-7
 * (scalar, sse), 2.20e-7 (avx2; avx512, which computes the same FMAs, was not run since the
 * even/odd evaluation: no AVX-512 on that machine); | |q| - 1 | <= 3.3e-7. The tests check 5e-7
 * and 1e-6 on every path, on random, identical, antipodal, nearly parallel and orthogonal pairs.
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
 * Accuracy, unit quaternions, measured as for jm_slerp_joints: max abs component error
 * against a float64 nlerp 1.76e-7 (scalar, sse), 1.59e-7 (avx2, avx512); inputs at random
 * scales 2^-149 ... 2^127 (same or one each, 10^6 pairs) 1.85e-7 (scalar), 1.64e-7 (sse), 1.53e-7
 * (avx2), 1.50e-7 (avx512), no non-finite result (before the double lanes: up to 54 % of them
 * inf or NaN). The tests check 3e-7.
 */
void JM_FN(jm_lerp_joints)(const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, char *out, ptrdiff_t os,
                           size_t n, float t) {
    blend_joints(NLERP, a, as, b, bs, out, os, n, t);
}

#if JM_ISA == JM_ISA_AVX512
/*
 * Whether an index of n joints runs on this path's own indexed slerp: when it has blocks of 16 and
 * at least half of them (of a sample, below) are runs of consecutive joints (one 512-bit move per
 * two records, as the full call). Else (and for fewer than 16 entries) the AVX2 kernel runs: a
 * scattered block of 16 reads and writes every record on its own, and on a CPU that executes
 * 512-bit shuffles as two 256-bit halves (AMD Zen 4) the 16 inserts and 8 extracts beside the
 * transposes made such a block cost ~1.4 full blocks, where an AVX2 block of 8 scattered records
 * costs about one full AVX2 block (measured on the EPYC of benchmarks/README.md: every second joint
 * of 1,024, in place 0.76 of the full AVX-512 call on this kernel, ~0.65 on AVX2's). The fixed-t
 * slerp computes the same FMAs in the same order on both paths (no estimate instruction), so the
 * results are bit-identical either way.
 */
/* up to RUNS_SAMPLE blocks, evenly spread, decide: reading every block's ends (every second cache
   line of the index) before the kernel reads the index again cost a long call 10-20 % (every second
   joint of 1,048,576 in place, kernels side by side in huge pages, 15 rounds: 1.24 -> 1.04 of the
   full call in place; with out= 0.84 -> 0.77), and the vectorised loop over the 32 blocks of 512
   entries 0.01-0.03 of a 1,024-joint call (benchmarks/README.md). Either kernel gives the same
   results. */
#define RUNS_SAMPLE 16
static int runs_dominate(const intptr_t *index, size_t n) {
    const size_t blocks = n / JM_W, step = blocks > RUNS_SAMPLE ? blocks / RUNS_SAMPLE : 1;
    size_t runs = 0, sampled = 0;
    for (size_t b = 0; b < blocks; b += step, sampled++)
        runs += index[b * JM_W + JM_W - 1] - index[b * JM_W] == JM_W - 1;
    return sampled && 2 * runs >= sampled;
}
#endif

/* jm_slerp_joints on the joints at `index` of every frame, the others copied (see above). */
void JM_FN(jm_slerp_joints_indexed)(const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, char *out,
                                    ptrdiff_t os, size_t n_frames, size_t n_joints, const intptr_t *index,
                                    size_t n_index, float t) {
#if JM_ISA == JM_ISA_AVX512
    if (!runs_dominate(index, n_index)) {
        jm_slerp_joints_indexed_avx2(a, as, b, bs, out, os, n_frames, n_joints, index, n_index, t);
        return;
    }
#endif
    blend_joints_indexed(SLERP_FIXED_T, a, as, b, bs, out, os, n_frames, n_joints, index, n_index, t);
}

/* jm_lerp_joints on the joints at `index` of every frame, the others copied. */
void JM_FN(jm_lerp_joints_indexed)(const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, char *out,
                                   ptrdiff_t os, size_t n_frames, size_t n_joints, const intptr_t *index,
                                   size_t n_index, float t) {
    blend_joints_indexed(NLERP, a, as, b, bs, out, os, n_frames, n_joints, index, n_index, t);
}

/*
 * jm_slerp_quats: out[i] = slerp(a[i], b[i], t[i]) on float[4] quaternions; t is read at
 * byte offset i * ts. ts = 0 (one t for all): the fixed-t weights of jm_slerp_joints, same
 * accuracy. Else the per-lane formula (slerp_weights), measured as above with a random t per
 * pair: max abs component error 2.66e-7 (scalar, sse), 2.39e-7 (avx2, avx512), | |q| - 1 | <=
 * 3.3e-7; the tests check 5e-7. t = 0 gives a[i] and t = 1 the arc's end, b[i] or -b[i] (where
 * a[i] . b[i] < 0), exactly, per element. Unit quaternions, as jm_slerp_joints.
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

/*
 * jm_copy_index: copies index[0..n) to copy[0..n) (copy may be index itself) and returns 1 when
 * the values copied are strictly increasing within [0, n_joints) (what the indexed kernels above
 * require; the usual index of partial-body blending), else 0. The check is made on the values as
 * they were copied (each read once, compared in registers), never on a second read of index:
 * another thread may write index meanwhile, and the kernels then read the copy, which is what
 * was checked. It runs on every indexed call: branch-free, AVX2 / AVX-512 four / eight entries
 * per step in registers, SSE4.1 four in two registers; the scalar and NEON paths copy a chunk,
 * then check the copy.
 */
#define INDEX_CHUNK 512 /* entries (4 KB) */
int JM_FN(jm_copy_index)(const intptr_t *index, intptr_t *copy, size_t n, size_t n_joints) {
    size_t k = 0;
    uint64_t bad = 0;
#if JM_ISA == JM_ISA_AVX512
    __m512i last = _mm512_set1_epi64(-1); /* the entry before the first: index[0] > -1 */
    __mmask8 not_above = 0;
    for (; k + 8 <= n; k += 8) {
        const __m512i v = _mm512_loadu_si512((const void *)(index + k));
        _mm512_storeu_si512((void *)(copy + k), v);
        not_above |= _mm512_cmple_epi64_mask(v, _mm512_alignr_epi64(v, last, 7)); /* last[7], v[0..6] */
        last = v;
    }
    bad = not_above;
#elif JM_ISA == JM_ISA_AVX2
    __m256i last = _mm256_set1_epi64x(-1), above = _mm256_set1_epi64x(-1);
    for (; k + 4 <= n; k += 4) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(index + k));
        _mm256_storeu_si256((__m256i *)(copy + k), v);
        /* last[3], v[0], v[1], v[2]: last[2..3] | v[0..1], then per 128-bit lane 8 bytes along */
        const __m256i before = _mm256_alignr_epi8(v, _mm256_permute2x128_si256(last, v, 0x21), 8);
        above = _mm256_and_si256(above, _mm256_cmpgt_epi64(v, before));
        last = v;
    }
    bad = _mm256_movemask_epi8(above) != -1;
#endif
#if JM_ISA == JM_ISA_AVX2 || JM_ISA == JM_ISA_AVX512
    intptr_t previous = k ? copy[k - 1] : -1; /* the copy: no second read of index */
    for (; k < n; k++) {
        const intptr_t v = index[k];
        copy[k] = v;
        bad |= v <= previous;
        previous = v;
    }
#else
    /* no 64-bit compare before SSE4.2 (nor on the scalar path): the check is made on unsigned
       differences. A strictly increasing copy of values in [0, 2^62) has every copy[k] -
       copy[k - 1] - 1 and every copy[k] below 2^62; anything else (a larger or negative value, a
       repeat, a step down) sets one of the two top bits (values of 2^62 and more, possible only
       with joint_index's n_joints, then take the caller's full check). */
    uint64_t top_bits = 0;
#if JM_ISA == JM_ISA_SSE
    /* four entries a step in registers, as AVX2. Before, as the scalar path: a plain index
       (t = 0 in place, over a joint_index) of 512 entries 176 -> 121-127 ns, 2,000 909 -> 465-564
       ns, 524,288 (every second joint of 1,048,576) 0.34 -> 0.13 ms */
    __m128i last = _mm_set1_epi64x(-1), top = _mm_setzero_si128();
    const __m128i one = _mm_set1_epi64x(1);
    for (; k + 4 <= n; k += 4) {
        const __m128i v0 = _mm_loadu_si128((const __m128i *)(index + k));
        const __m128i v1 = _mm_loadu_si128((const __m128i *)(index + k + 2));
        _mm_storeu_si128((__m128i *)(copy + k), v0);
        _mm_storeu_si128((__m128i *)(copy + k + 2), v1);
        const __m128i step0 = _mm_sub_epi64(v0, _mm_alignr_epi8(v0, last, 8)); /* v0 - (last[1], v0[0]) */
        const __m128i step1 = _mm_sub_epi64(v1, _mm_alignr_epi8(v1, v0, 8));
        top = _mm_or_si128(top, _mm_or_si128(_mm_or_si128(_mm_sub_epi64(step0, one), _mm_sub_epi64(step1, one)),
                                             _mm_or_si128(v0, v1)));
        last = v1;
    }
    top_bits = (uint64_t)_mm_cvtsi128_si64(_mm_or_si128(top, _mm_unpackhi_epi64(top, top)));
    for (; k < n; k++) { /* the last entries of n not a multiple of 4 */
        const intptr_t v = index[k];
        copy[k] = v;
        top_bits |= ((uint64_t)v - (uint64_t)(k ? copy[k - 1] : -1) - 1) | (uint64_t)v;
    }
#else
    /* chunks in L1 are copied, then the copy checked (GCC vectorises the check) */
    for (; k < n; k += INDEX_CHUNK) {
        const size_t len = n - k < INDEX_CHUNK ? n - k : INDEX_CHUNK;
        if (copy != index)
            memcpy(copy + k, index + k, len * sizeof(intptr_t));
        const intptr_t *chunk = copy + k;
        const uint64_t previous = k ? (uint64_t)chunk[-1] : (uint64_t)-1;
        top_bits |= ((uint64_t)chunk[0] - previous - 1) | (uint64_t)chunk[0];
        for (size_t j = 1; j < len; j++)
            top_bits |= ((uint64_t)chunk[j] - (uint64_t)chunk[j - 1] - 1) | (uint64_t)chunk[j];
    }
#endif
    bad = top_bits >> 62;
#endif
    return !bad && (!n || (size_t)copy[n - 1] < n_joints);
}

#if JM_ISA == JM_ISA_SCALAR
/*
 * jm_slerp_joints_libm: the commonly used C slerp (acos of the dot product, three libm sines,
 * lerp below 1e-6 of parallel), one joint at a time. Not used by the package: it is the
 * baseline the benchmarks measure the kernels above against.
 */
void jm_slerp_joints_libm(const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, char *out, ptrdiff_t os,
                          size_t n, float t) {
    for (size_t i = 0; i < n; i++) {
        jm_joint_quat ja, jb, jo;
        memcpy(&ja, a + (ptrdiff_t)i * as, sizeof ja);
        memcpy(&jb, b + (ptrdiff_t)i * bs, sizeof jb);
        float cosom = ja.q[0] * jb.q[0] + ja.q[1] * jb.q[1] + ja.q[2] * jb.q[2] + ja.q[3] * jb.q[3];
        float abs_cosom = fabsf(cosom), scale0, scale1;
        if (1.0f - abs_cosom > 1e-6f) {
            float omega = acosf(abs_cosom), inv_sin = 1.0f / sinf(omega);
            scale0 = sinf((1.0f - t) * omega) * inv_sin;
            scale1 = sinf(t * omega) * inv_sin;
        } else {
            scale0 = 1.0f - t;
            scale1 = t;
        }
        scale1 = cosom >= 0.0f ? scale1 : -scale1;
        for (int k = 0; k < 4; k++) {
            jo.q[k] = scale0 * ja.q[k] + scale1 * jb.q[k];
            jo.t[k] = (1.0f - t) * ja.t[k] + t * jb.t[k];
        }
        memcpy(out + (ptrdiff_t)i * os, &jo, sizeof jo);
    }
}
#endif

/* ------------------------------------------------------------------- float64 -- */
/*
 * jm_slerp_quats_f64 / jm_nlerp_quats_f64: the quaternion-array kernels on double[4] records and
 * double fractions, JM_WD records per block (lane i = record i, vd_load_quads). No float32
 * polynomial carries over: sinc_f64 and atanc_f64 are their own fits (benchmarks/
 * fit_interp_polys.py, float64 section), the angle comes from one square root and one division.
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
    EACH(c[g] = vd_min(one, vd_abs(d[g]))); /* NaN d stays NaN (vd_min: b when either is NaN) */
    EACH(sin_omega[g] = vd_sqrt(vd_mul(vd_sub(one, c[g]), vd_add(one, c[g]))));
    EACH(wide[g] = vd_lt(c[g], sin_omega[g])); /* omega > pi/4 */
    EACH(numerator[g] = vd_select(wide[g], c[g], sin_omega[g]));
    EACH(denominator[g] = vd_add(one, vd_select(wide[g], sin_omega[g], c[g])));
    EACH(also[g] = vd_select(wide[g], sin_omega[g], one)); /* wide: 1 / sin(omega) from the same reciprocal */
    EACH(reciprocal[g] = vd_div(one, vd_mul(denominator[g], also[g])));
    EACH(y[g] = vd_mul(vd_mul(numerator[g], also[g]), reciprocal[g]));
    EACH(y2[g] = vd_mul(y[g], y[g]));
    EACH(atan_ratio[g] = atanc_f64(y2[g]));
    EACH(two_atan[g] = vd_mul(vd_add(y[g], y[g]), atan_ratio[g]));
    EACH(omega[g] = vd_select(wide[g], vd_sub(vd_set1(1.5707963267948966), two_atan[g]), two_atan[g]));
    EACH(k[g] = vd_select(wide[g], vd_mul(omega[g], vd_mul(denominator[g], reciprocal[g])),
                          vd_fmadd(atan_ratio[g], y2[g], atan_ratio[g])));
    EACH(rest[g] = vd_sub(one, t[g]));
    EACH(t_omega[g] = vd_mul(t[g], omega[g]));
    EACH(rest_omega[g] = vd_mul(rest[g], omega[g]));
    EACH(w0[g] = vd_mul(vd_mul(rest[g], k[g]), sinc_f64(vd_mul(rest_omega[g], rest_omega[g]))));
    EACH(w1[g] = vd_xor(vd_mul(vd_mul(t[g], k[g]), sinc_f64(vd_mul(t_omega[g], t_omega[g]))), sign[g]));
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
    EACH(d[g] = dot4_f64(qa[g], qb[g]));
    EACH(sign[g] = arc_sign_f64(d[g]));
    if (mode == SLERP) {
        slerp_weights_f64(groups, d, sign, tv, w0, w1);
    } else {
        EACH(w0[g] = vd_sub(vd_set1(1.0), tv[g]));
        EACH(w1[g] = vd_xor(tv[g], sign[g]));
    }
    for (int k = 0; k < 4; k++)
        EACH(q[g][k] = vd_fmadd(w1[g], qb[g][k], vd_mul(w0[g], qa[g][k])));
    if (mode == NLERP) {
        vd n2[GROUPS], inv_norm[GROUPS];
        EACH(n2[g] = dot4_f64(q[g], q[g]));
        EACH(inv_norm[g] = vd_div(vd_set1(1.0), vd_sqrt(n2[g])));
        for (int k = 0; k < 4; k++)
            EACH(q[g][k] = vd_mul(q[g][k], inv_norm[g]));
        for (int g = 0; g < groups; g++) {
            vdmask redo = nlerp_out_of_range_f64(d[g], n2[g]);
            if (JM_UNLIKELY(md_any(redo)))
                nlerp_redo_scaled(redo, tv[g], qa[g], qb[g], q[g], &sign[g]);
        }
    }
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
 * Accuracy, float64 unit quaternions: max abs component error against an extended-precision
 * slerp 6.6e-16 (scalar, sse), 6.0e-16 (avx2, avx512), per-element or one t, measured over 10^6
 * random pairs (a tenth nearly parallel or antipodal at 1e-3 ... 1e-15; benchmarks/
 * interp_accuracy.py --float64-only) and the hard pairs of tests/test_float64_interp.py
 * (identical, antipodal, nearly parallel and antipodal, around omega = pi/4 and pi/2); the tests
 * check 2e-15 on every path.
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
 * Accuracy: max abs component error against an extended-precision nlerp 3.5e-16 on unit pairs
 * (measured as for jm_slerp_quats_f64) and 3.4e-16 with each input at its own random scale
 * 2^-1074 ... 2^1022, every path; the tests check 2e-15 (tests/test_float64_interp.py).
 */
void JM_FN(jm_nlerp_quats_f64)(const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, const char *t,
                               ptrdiff_t ts, char *out, ptrdiff_t os, size_t n) {
    quats_run_f64(NLERP, a, as, b, bs, t, ts, out, os, n);
}
