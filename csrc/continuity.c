/*
 * continuity.c - sign continuity of quaternion sequences (jointmath.make_continuous).
 *
 * Compiled once per ISA (see simd/common.h). The float32 kernel takes JM_W joints of one frame per
 * block, one per vector lane; frames run one after another (each needs the previous one's
 * result), so the work is one pass of dot products over memory: memory-bound.
 */
#include "jointmath.h"
#include "simd/common.h"

#define QUAT(base, frame, fs, joint, js) ((base) + (ptrdiff_t)(frame) * (fs) + (ptrdiff_t)(joint) * (js))

/*
 * make_continuous: out[f][j] = -q[f][j] where q[f][j] . out[f - 1][j] < 0, else q[f][j], frame
 * by frame, with out[-1][j] = prev[j] (prev NULL: frame 0 is copied). Flipping against the
 * previous *output* is the running product of the signs of the neighbours' dot products: the
 * result has out[f] . out[f - 1] >= 0 everywhere. Exact: only signs change. A dot product of 0,
 * -0 or NaN keeps the sign; a dot within rounding of 0 (relative to |q| |out[f - 1]|) may go
 * either way (both are continuous). Quaternions of any finite scale: a float32 dot product that
 * underflows or overflows (|q| |p| beyond about 2^+-50: before, 1e-23-sized quaternions and
 * 2e19-sized ones kept opposite signs) is taken again in double. q and out are separate arrays;
 * strides in bytes (frames, joints).
 */

/* Whether c . p < 0 for float[4] c, p, in double: a product of two floats is exact there and far
   inside its range, so the sign is right at any finite scale (up to the rounding of the sum). */
static int opposite_f32(const float c[4], const float p[4]) {
    double d = 0.0;
    for (int k = 0; k < 4; k++)
        d += (double)c[k] * p[k];
    return d < 0.0;
}

/* float32 dot products trusted for their sign: 2^-100 <= |d| <= FLT_MAX (no product overflowed,
   those that underflowed are too small to flip it); any other (0, tiny, inf, NaN) is taken again
   in double (cold for quaternions of ordinary size). */
#define ORDINARY_DOT_MIN 0x1p-100f
#define ORDINARY_DOT_MAX 0x1.fffffep127f

/* One record the scalar way (frames of fewer joints than a block, and blocks with a dot product
   out of float32's reach): memcpy keeps the reads free of alignment assumptions. */
static void continuity_record(const char *q, const char *before, char *out) {
    float c[4], p[4];
    memcpy(c, q, sizeof c);
    memcpy(p, before, sizeof p);
    const float d = c[0] * p[0] + c[1] * p[1] + c[2] * p[2] + c[3] * p[3];
    uint32_t d_bits, bits[4];
    memcpy(&d_bits, &d, sizeof d_bits);
    uint32_t sign = d_bits & 0x80000000u; /* no branch on the sign: it is as often one as the other */
    /* ordinary: the exponent field of |d| from 2^-100's (27) to FLT_MAX's (254) */
    if (JM_UNLIKELY(((d_bits >> 23) & 0xffu) - 27u > 227u))
        sign = opposite_f32(c, p) ? 0x80000000u : 0u;
    memcpy(bits, c, sizeof bits);
    for (int k = 0; k < 4; k++)
        bits[k] ^= sign;
    memcpy(out, bits, sizeof bits);
}

JM_INLINE void continuity_block(const char *q, ptrdiff_t qs, const char *before, ptrdiff_t bs, char *out,
                                ptrdiff_t os) {
    vf x, y, z, w, px, py, pz, pw;
    v_load_quads(q, qs, &x, &y, &z, &w);
    v_load_quads(before, bs, &px, &py, &pz, &pw);
    const vf dot = v_fmadd(w, pw, v_fmadd(z, pz, v_fmadd(y, py, v_mul(x, px))));
    const vf size = v_abs(dot);
    if (JM_UNLIKELY(m_any(m_not(m_and(v_ge(size, v_set1(ORDINARY_DOT_MIN)),
                                      v_ge(v_set1(ORDINARY_DOT_MAX), size)))))) {
        for (int i = 0; i < JM_W; i++)
            continuity_record(q + i * qs, before + i * bs, out + i * os);
        return;
    }
    const vf flip = v_select(v_lt(dot, v_set1(0.0f)), v_set1(-0.0f), v_set1(0.0f)); /* sign bits */
    v_store_quads(out, os, v_xor(x, flip), v_xor(y, flip), v_xor(z, flip), v_xor(w, flip));
}

/* Whether c . p < 0 for double[4] c, p: the dot product as it is, unless it lies beyond 2^+-900
   (a product may have underflowed or overflowed), then of c and p each scaled by a power of two
   to a largest |component| in [0.5, 1) (exact). */
static int opposite_f64(const double c[4], const double p[4]) {
    double d = c[0] * p[0] + c[1] * p[1] + c[2] * p[2] + c[3] * p[3];
    if (JM_UNLIKELY(!(fabs(d) >= 0x1p-900 && fabs(d) <= 0x1p900))) {
        int ec, ep;
        frexp(fmax(fmax(fabs(c[0]), fabs(c[1])), fmax(fabs(c[2]), fabs(c[3]))), &ec);
        frexp(fmax(fmax(fabs(p[0]), fabs(p[1])), fmax(fabs(p[2]), fabs(p[3]))), &ep);
        d = 0.0;
        for (int k = 0; k < 4; k++)
            d += ldexp(c[k], -ec) * ldexp(p[k], -ep);
    }
    return d < 0.0;
}

void JM_FN(jm_make_continuous)(const char *q, ptrdiff_t q_fs, ptrdiff_t q_js, char *out, ptrdiff_t out_fs,
                               ptrdiff_t out_js, const char *prev, ptrdiff_t prev_js, size_t n_frames,
                               size_t n_joints) {
    for (size_t f = 0; f < n_frames; f++) {
        const char *before = f ? QUAT(out, f - 1, out_fs, 0, 0) : prev;
        const ptrdiff_t before_js = f ? out_js : prev_js;
        if (!before) { /* frame 0 without prev */
            for (size_t j = 0; j < n_joints; j++)
                memcpy(QUAT(out, 0, 0, j, out_js), QUAT(q, 0, 0, j, q_js), 16);
            continue;
        }
        if (n_joints < JM_W) {
            for (size_t j = 0; j < n_joints; j++)
                continuity_record(QUAT(q, f, q_fs, j, q_js), QUAT(before, 0, 0, j, before_js),
                                  QUAT(out, f, out_fs, j, out_js));
            continue;
        }
        /* whole blocks; the last one ends at the last joint, overlapping the one before it (its
           records get the same signs again: q and before are not written) */
        size_t j = 0;
        for (; j + JM_W <= n_joints; j += JM_W)
            continuity_block(QUAT(q, f, q_fs, j, q_js), q_js, QUAT(before, 0, 0, j, before_js), before_js,
                             QUAT(out, f, out_fs, j, out_js), out_js);
        if (j < n_joints) {
            j = n_joints - JM_W;
            continuity_block(QUAT(q, f, q_fs, j, q_js), q_js, QUAT(before, 0, 0, j, before_js), before_js,
                             QUAT(out, f, out_fs, j, out_js), out_js);
        }
    }
}

/* The same on double[4] quaternions, the dot product in double (opposite_f64: any finite scale). */
void JM_FN(jm_make_continuous_f64)(const char *q, ptrdiff_t q_fs, ptrdiff_t q_js, char *out, ptrdiff_t out_fs,
                                   ptrdiff_t out_js, const char *prev, ptrdiff_t prev_js, size_t n_frames,
                                   size_t n_joints) {
    for (size_t f = 0; f < n_frames; f++) {
        const char *before = f ? QUAT(out, f - 1, out_fs, 0, 0) : prev;
        const ptrdiff_t before_js = f ? out_js : prev_js;
        for (size_t j = 0; j < n_joints; j++) {
            double c[4], p[4];
            memcpy(c, QUAT(q, f, q_fs, j, q_js), sizeof c);
            if (before) {
                memcpy(p, QUAT(before, 0, 0, j, before_js), sizeof p);
                if (opposite_f64(c, p))
                    for (int k = 0; k < 4; k++)
                        c[k] = -c[k];
            }
            memcpy(QUAT(out, f, out_fs, j, out_js), c, sizeof c);
        }
    }
}
