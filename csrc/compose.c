/*
 * compose.c - products of 3x4 joint matrices (rigid transforms), the step of forward kinematics.
 *
 * Compiled once per ISA (see simd.h). Each block composes JM_W pairs, one per vector lane.
 */
#include "jointmath.h"
#include "simd.h"

/*
 * compose: out = a * b for transforms [R | t]: R = Ra Rb, t = Ra tb + ta, i.e. applying b
 * first, then a (a parent's world transform times a child's local one).
 * Accuracy, float32: each element is a 3-term dot product (plus ta): error within a few ulp of
 * the largest term, e.g. <= 4e-7 relative to |Ra| |b| for rotations; NaN stays in its record.
 */
JM_INLINE void compose_block(const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, char *out, ptrdiff_t os) {
    vf m[12], n[12], c[12];
    v_load_records(a, as, 3, m);
    v_load_records(b, bs, 3, n);
    for (int i = 0; i < 3; i++) {
        const vf *row = &m[4 * i]; /* Ra row i and ta_i */
        for (int j = 0; j < 4; j++) {
            /* column j of b: rotation column, or the translation (j = 3) which also gets ta_i */
            vf sum = v_mul(row[0], n[j]);
            sum = v_fmadd(row[1], n[4 + j], sum);
            sum = v_fmadd(row[2], n[8 + j], sum);
            c[4 * i + j] = j == 3 ? v_add(sum, row[3]) : sum;
        }
    }
    v_store_records(out, os, 3, c);
}

void JM_FN(jm_compose_mats)(const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, char *out, ptrdiff_t os,
                            size_t n) {
    size_t i = 0;
    for (; i + JM_W <= n; i += JM_W)
        compose_block(a + (ptrdiff_t)i * as, as, b + (ptrdiff_t)i * bs, bs, out + (ptrdiff_t)i * os, os);
    if (i < n) { /* the tail through zeroed buffers: never past the end of any array */
        char sa[JM_W * 48] = {0}, sb[JM_W * 48] = {0}, so[JM_W * 48];
        for (size_t k = 0; k < n - i; k++) {
            memcpy(sa + 48 * k, a + (ptrdiff_t)(i + k) * as, 48);
            memcpy(sb + 48 * k, b + (ptrdiff_t)(i + k) * bs, 48);
        }
        compose_block(sa, 48, sb, 48, so, 48);
        for (size_t k = 0; k < n - i; k++)
            memcpy(out + (ptrdiff_t)(i + k) * os, so + 48 * k, 48);
    }
}
