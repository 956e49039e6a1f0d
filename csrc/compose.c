/*
 * compose.c - products of 3x4 joint matrices (rigid transforms), and forward kinematics.
 *
 * Compiled once per ISA (see simd/common.h). Each block composes JM_W pairs, one per vector lane; the
 * forward-kinematics blocks hold JM_W frames, one per lane.
 */
#include "jointmath.h"
#include "simd/common.h"
#include "quat_math.h"

/*
 * compose: out = a * b for transforms [R | t]: R = Ra Rb, t = Ra tb + ta, i.e. applying b
 * first, then a (a parent's world transform times a child's local one).
 * Accuracy, float32: each element is a 3-term dot product (plus ta): error within a few ulp of
 * the largest term, e.g. <= 4e-7 relative to |Ra| |b| for rotations; NaN stays in its record.
 */
JM_INLINE void compose_lanes(const vf m[12], const vf n[12], vf c[12]) {
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
}

/* sum of |v[i]|, i < 12, in a fixed order: NaN if any element is NaN, inf if one is inf or the sum
   overflows; the same bits on every path */
JM_INLINE vf abs_sum12(const vf v[12]) {
    vf sum = v_abs(v[0]);
    for (int i = 1; i < 12; i++)
        sum = v_add(sum, v_abs(v[i]));
    return sum;
}

/*
 * surely_inside: a cheap sufficient test for compose's domain, per lane: the sum of the squares of
 * the 24 elements below 2^120 (NaN: false). Then, by Cauchy-Schwarz, sum|a| * sum|b| <= 12 *
 * sqrt(sum a^2 * sum b^2) <= 6 * (sum a^2 + sum b^2) < 2^123, rounding included, well below
 * FLT_MAX / 4: the exact test would pass. Why: the exact test (two ordered abs sums and 12 selects)
 * cost as much as the products; this one is 24 multiply-adds in four short chains, and the exact
 * test runs only for blocks where it fails (elements of about 2^58 and more, inf or NaN).
 */
JM_INLINE vmask surely_inside(const vf m[12], const vf n[12]) {
    vf s[4] = {v_mul(m[0], m[0]), v_mul(m[1], m[1]), v_mul(m[2], m[2]), v_mul(m[3], m[3])};
    for (int i = 4; i < 12; i++)
        s[i % 4] = v_fmadd(m[i], m[i], s[i % 4]);
    for (int i = 0; i < 12; i++)
        s[i % 4] = v_fmadd(n[i], n[i], s[i % 4]);
    return v_lt(v_add(v_add(s[0], s[1]), v_add(s[2], s[3])), v_set1(0x1p120f));
}

/*
 * compose_block_checked: compose_block for a block where surely_inside failed in some lane: the
 * exact domain test, sum|a| * sum|b| below FLT_MAX / 4, and NaN in the lanes outside it. Out of line
 * and from memory again: the common path keeps its registers for the products.
 */
JM_COLD static void compose_block_checked(const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, char *out,
                                          ptrdiff_t os) {
    vf m[12], n[12], c[12];
    v_load_records(a, as, 3, m);
    v_load_records(b, bs, 3, n);
    compose_lanes(m, n, c);
    vmask inside = v_lt(v_mul(abs_sum12(m), abs_sum12(n)), v_set1(FLT_MAX / 4)); /* NaN: false */
    for (int i = 0; i < 12; i++)
        c[i] = v_select(inside, c[i], v_set1(NAN));
    v_store_records(out, os, 3, c);
}

/*
 * block_surely_inside: surely_inside for a whole block whose records are packed (48 bytes apart)
 * at both a and b, read from memory as 12 plain vectors each: no transposition to wait for. Each
 * lane's sum of squares (elements of several records) below 2^120 / JM_W: the sum over all lanes,
 * which bounds every record's, is below 2^120 (NaN or inf: false).
 */
JM_INLINE int block_surely_inside(const char *a, const char *b) {
    vf s[4] = {v_set1(0.0f), v_set1(0.0f), v_set1(0.0f), v_set1(0.0f)};
    for (int i = 0; i < 12; i++) {
        const vf x = v_loadu((const float *)a + i * JM_W), y = v_loadu((const float *)b + i * JM_W);
        s[i % 2] = v_fmadd(x, x, s[i % 2]);
        s[2 + i % 2] = v_fmadd(y, y, s[2 + i % 2]);
    }
    return !m_any(m_not(v_lt(v_add(v_add(s[0], s[1]), v_add(s[2], s[3])), v_set1(0x1p120f / JM_W))));
}

#if JM_COMPOSE_ROWS
/*
 * compose_rows_block: compose_block's products for a block inside the domain, row by row: row i
 * of JM_W / 4 records at a time, one record's row per 128-bit quad (jm_load_4_quads),
 * c_ij = a_i0 b_0j + a_i1 b_1j + a_i2 b_2j, + a_i3 for j = 3, in compose_lanes' order of operations:
 * bit for bit its results (and so forward_kinematics'). Why: where JM_COMPOSE_ROWS is set, moving
 * the records into lanes and back costs more than the products; here each term takes a splat.
 */
JM_INLINE void compose_rows_block(const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, char *out, ptrdiff_t os) {
    const vf minus_zero = v_set1(-0.0f); /* c + -0 is c, -0 included: lanes 0-2 add nothing */
    for (int k = 0; k < 4; k++) {
        const vf b0 = jm_load_4_quads(b, bs, k), b1 = jm_load_4_quads(b + 16, bs, k);
        const vf b2 = jm_load_4_quads(b + 32, bs, k);
        for (int i = 0; i < 3; i++) {
            const vf row = jm_load_4_quads(a + 16 * i, as, k);
            vf c = v_mul(jm_quad_splat(row, 0), b0);
            c = v_fmadd(jm_quad_splat(row, 1), b1, c);
            c = v_fmadd(jm_quad_splat(row, 2), b2, c);
            jm_store_4_quads(out + 16 * i, os, k, v_add(c, jm_quad_last(minus_zero, row)));
        }
    }
}
#endif

/*
 * compose_block: JM_W products, each inside compose's domain or NaN. Domain: sum|a| * sum|b| below
 * FLT_MAX / 4 (over each record's 12 elements), so that no product or partial sum can overflow.
 * Outside it (NaN or inf in a record, or elements large enough to overflow) all 12 elements are
 * NaN. Why: there a fused multiply-add gave inf or a finite sum where separate multiplies and
 * adds gave NaN or inf, so the paths disagreed. The cheap test comes before the products (from
 * memory for packed records, else from the transposed ones), so that no input stays live past
 * them, and the exact test is out of line (compose_block_checked).
 */
JM_INLINE void compose_block(const char *a, ptrdiff_t as, const char *b, ptrdiff_t bs, char *out, ptrdiff_t os) {
    const int packed = as == 48 && bs == 48;
    if (JM_UNLIKELY(packed && !block_surely_inside(a, b))) {
        compose_block_checked(a, as, b, bs, out, os);
        return;
    }
#if JM_COMPOSE_ROWS
    if (packed) {
        compose_rows_block(a, as, b, bs, out, os);
        return;
    }
#endif
    vf m[12], n[12], c[12];
    v_load_records(a, as, 3, m);
    v_load_records(b, bs, 3, n);
    if (JM_UNLIKELY(!packed && m_any(m_not(surely_inside(m, n))))) {
        compose_block_checked(a, as, b, bs, out, os);
        return;
    }
    compose_lanes(m, n, c);
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

/*
 * One block of JM_W frames (lane i: the frame at byte offset (lanes[i] or i) * frame stride),
 * joint after joint: the local transform from the joint record (quat_to_rotation, as
 * jm_joints_to_mats), composed with the parent's world transform kept in registers' layout in
 * `world_lanes` (12 vectors a slot: joint j's written to slot[j] when it is done, read by its
 * children through parent_slot), then written to the frames' records. Every joint costs one
 * conversion and one product; its inputs are in the L1 cache (the parent's vectors were written
 * moments before).
 */
JM_INLINE void hierarchy_block(const char *joints, ptrdiff_t in_frame, char *world, ptrdiff_t out_frame,
                               size_t n_joints, const intptr_t *restrict parent_slot, const intptr_t *restrict slot,
                               vf *restrict world_lanes, const intptr_t *restrict lanes, size_t prefetch_lines) {
    /* the next block's records, a few lines per joint (prefetch_lines of input and of output in
       all): a block's first touch of each line would otherwise wait for memory, joint by joint */
    const size_t lines_per_joint = (prefetch_lines + n_joints - 1) / n_joints;
    const char *next_in = joints + JM_W * in_frame;
    char *next_out = world + JM_W * out_frame;
    for (size_t j = 0; j < n_joints; j++) {
        for (size_t l = j * lines_per_joint; l < (j + 1) * lines_per_joint && l < prefetch_lines; l++) {
            JM_PREFETCH(next_in + 64 * (ptrdiff_t)l * 2 / 3); /* input: 2/3 of the output's bytes */
            JM_PREFETCH(next_out + 64 * (ptrdiff_t)l);
        }
        vf q[4], t[4], r[9];
        const char *record = joints + (ptrdiff_t)j * (ptrdiff_t)sizeof(jm_joint_quat);
        v_load_quads_idx(record, in_frame, lanes, &q[0], &q[1], &q[2], &q[3]);
        v_load_quads_idx(record + 16, in_frame, lanes, &t[0], &t[1], &t[2], &t[3]);
        quat_to_rotation(q[0], q[1], q[2], q[3], r);
        const vf local[12] = {r[0], r[1], r[2], t[0], r[3], r[4], r[5], t[1], r[6], r[7], r[8], t[2]};
        vf *mine = world_lanes + 12 * slot[j];
        if (parent_slot[j] < 0)
            for (int k = 0; k < 12; k++)
                mine[k] = local[k];
        else
            compose_lanes(world_lanes + 12 * parent_slot[j], local, mine);
        char *out = world + (ptrdiff_t)j * (ptrdiff_t)sizeof(jm_joint_mat);
        for (int k = 0; k < 3; k++)
            v_store_quads_idx(out + 16 * k, out_frame, lanes, mine[4 * k], mine[4 * k + 1], mine[4 * k + 2],
                              mine[4 * k + 3]);
    }
}

/*
 * jm_forward_kinematics: world[f][j] = world[f][parents[j]] * local(joints[f][j]), or the local
 * transform itself for a root (parents[j] < 0), with local(q, t) = [R(q) | t] as
 * jm_joints_to_mats and the product as jm_compose_mats: every world transform is bit-identical to
 * that chain of the two kernels on the same path. One pass over the frames, JM_W frames per block
 * (the last block repeats its last frame in the spare lanes: the same record written twice with
 * the same value, never past the arrays). Accuracy: each product adds the error of
 * jm_compose_mats to its parent's, so a chain of k joints is within about k times the error of
 * one conversion and one product (float32).
 */
_Static_assert(JM_W <= JM_MAX_LANES && sizeof(vf) <= 64, "JM_HIERARCHY_SCRATCH holds 12 vectors per slot");

void JM_FN(jm_forward_kinematics)(const char *joints, char *world, size_t n_frames, size_t n_joints,
                                  const intptr_t *parent_slot, const intptr_t *slot, void *scratch) {
    /* vf-aligned: the vectors are read and written as whole registers */
    vf *world_lanes = (vf *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    const ptrdiff_t in_frame = (ptrdiff_t)(n_joints * sizeof(jm_joint_quat));
    const ptrdiff_t out_frame = (ptrdiff_t)(n_joints * sizeof(jm_joint_mat));
    size_t f = 0;
    for (; f + JM_W <= n_frames; f += JM_W) {
        /* the output lines of the next block, if it is a full one (the input's are fewer) */
        const size_t prefetch_lines = f + 2 * JM_W <= n_frames ? (size_t)(JM_W * out_frame) / 64 : 0;
        hierarchy_block(joints + (ptrdiff_t)f * in_frame, in_frame, world + (ptrdiff_t)f * out_frame, out_frame,
                        n_joints, parent_slot, slot, world_lanes, NULL, prefetch_lines);
    }
    if (f < n_frames) {
        intptr_t lanes[JM_W];
        for (size_t k = 0; k < JM_W; k++)
            lanes[k] = (intptr_t)(f + k < n_frames ? k : n_frames - f - 1);
        hierarchy_block(joints + (ptrdiff_t)f * in_frame, in_frame, world + (ptrdiff_t)f * out_frame, out_frame,
                        n_joints, parent_slot, slot, world_lanes, lanes, 0);
    }
}
