/*
 * continuity.c - sign continuity of quaternion sequences (jointmath.make_continuous).
 *
 * Compiled once per ISA (see simd.h). The float32 kernel takes JM_W joints of one frame per
 * block, one per vector lane; frames run one after another (each needs the previous one's
 * result), so the work is one pass of dot products over memory: memory-bound.
 */
#include "jointmath.h"
#include "simd.h"

#define QUAT(base, frame, fs, joint, js) ((base) + (ptrdiff_t)(frame) * (fs) + (ptrdiff_t)(joint) * (js))

/*
 * make_continuous: out[f][j] = -q[f][j] where q[f][j] . out[f - 1][j] < 0, else q[f][j], frame
 * by frame, with out[-1][j] = prev[j] (prev NULL: frame 0 is copied). Flipping against the
 * previous *output* is the running product of the signs of the neighbours' dot products: the
 * result has out[f] . out[f - 1] >= 0 everywhere. Exact: only signs change. A dot product of 0,
 * -0 or NaN keeps the sign; a dot within float32 rounding of 0 may go either way (both are
 * continuous). q and out are separate arrays; strides in bytes (frames, joints).
 */
JM_INLINE void continuity_block(const char *q, ptrdiff_t qs, const char *before, ptrdiff_t bs, char *out,
                                ptrdiff_t os) {
    vf x, y, z, w, px, py, pz, pw;
    v_load_quads(q, qs, &x, &y, &z, &w);
    v_load_quads(before, bs, &px, &py, &pz, &pw);
    const vf dot = v_fmadd(w, pw, v_fmadd(z, pz, v_fmadd(y, py, v_mul(x, px))));
    const vf flip = v_select(v_lt(dot, v_set1(0.0f)), v_set1(-0.0f), v_set1(0.0f)); /* sign bits */
    v_store_quads(out, os, v_xor(x, flip), v_xor(y, flip), v_xor(z, flip), v_xor(w, flip));
}

/* One record the scalar way (tails of the SIMD paths): memcpy keeps the reads free of alignment
   assumptions. */
static void continuity_record(const char *q, const char *before, char *out) {
    float c[4], p[4];
    memcpy(c, q, sizeof c);
    memcpy(p, before, sizeof p);
    if (c[0] * p[0] + c[1] * p[1] + c[2] * p[2] + c[3] * p[3] < 0.0f)
        for (int k = 0; k < 4; k++)
            c[k] = -c[k];
    memcpy(out, c, sizeof c);
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
        size_t j = 0;
        for (; j + JM_W <= n_joints; j += JM_W)
            continuity_block(QUAT(q, f, q_fs, j, q_js), q_js, QUAT(before, 0, 0, j, before_js), before_js,
                             QUAT(out, f, out_fs, j, out_js), out_js);
        for (; j < n_joints; j++)
            continuity_record(QUAT(q, f, q_fs, j, q_js), QUAT(before, 0, 0, j, before_js), QUAT(out, f, out_fs, j, out_js));
    }
}

/* The same on double[4] quaternions, the dot product in double (the compiler vectorises what
   it can on each path). */
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
                if (c[0] * p[0] + c[1] * p[1] + c[2] * p[2] + c[3] * p[3] < 0.0)
                    for (int k = 0; k < 4; k++)
                        c[k] = -c[k];
            }
            memcpy(QUAT(out, f, out_fs, j, out_js), c, sizeof c);
        }
    }
}
