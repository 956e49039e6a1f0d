/*
 * convert.c - quaternion <-> rotation matrix, for joint records and plain float arrays.
 *
 * Compiled once per ISA (see simd.h). Conventions: quaternions are (x, y, z, w); the matrix is
 * the active rotation R with v' = R v (the one scipy's Rotation.as_matrix returns), row-major.
 * Each block converts JM_W records at once, one record per vector lane.
 */
#include "jointmath.h"
#include "simd.h"
#include "quat_math.h"

/* JOINT_QUAT (q, t) -> JOINT_MAT: rotation from q, translation t copied to column 3. */
JM_INLINE void joints_to_mats_block(const char *src, ptrdiff_t ss, char *dst, ptrdiff_t ds) {
    vf joint[8], r[9];
    v_load_records(src, ss, 2, joint); /* x y z w | tx ty tz 0 */
    quat_to_rotation(joint[0], joint[1], joint[2], joint[3], r);
    const vf mat[12] = {r[0], r[1], r[2], joint[4], r[3], r[4], r[5], joint[5], r[6], r[7], r[8], joint[6]};
    v_store_records(dst, ds, 3, mat);
}

/* JOINT_MAT -> JOINT_QUAT: q from the 3x3 part, t from column 3, t[3] = 0. */
JM_INLINE void mats_to_joints_block(const char *src, ptrdiff_t ss, char *dst, ptrdiff_t ds) {
    vf mat[12], joint[8];
    v_load_records(src, ss, 3, mat);
    const vf r[9] = {mat[0], mat[1], mat[2], mat[4], mat[5], mat[6], mat[8], mat[9], mat[10]};
    rotation_to_quat(r, &joint[0], &joint[1], &joint[2], &joint[3]);
    joint[4] = mat[3];
    joint[5] = mat[7];
    joint[6] = mat[11];
    joint[7] = v_set1(0.0f);
    v_store_records(dst, ds, 2, joint);
}

/*
 * float[4] -> float[3][3]. A 36-byte matrix is written as the quads at floats 0..3, 4..7 and
 * 5..8: the last overlaps the second by three floats of equal value and stays inside the record.
 */
JM_INLINE void quats_to_matrices_block(const char *src, ptrdiff_t ss, char *dst, ptrdiff_t ds) {
    vf q[4], r[9];
    v_load_records(src, ss, 1, q);
    quat_to_rotation(q[0], q[1], q[2], q[3], r);
    v_store_quads(dst, ds, r[0], r[1], r[2], r[3]);
    v_store_quads(dst + 16, ds, r[4], r[5], r[6], r[7]);
    v_store_quads(dst + 20, ds, r[5], r[6], r[7], r[8]);
}

/* float[3][3] -> float[4], reading the same three quads. */
JM_INLINE void matrices_to_quats_block(const char *src, ptrdiff_t ss, char *dst, ptrdiff_t ds) {
    vf r[9], again5, again6, again7, q[4];
    v_load_quads(src, ss, &r[0], &r[1], &r[2], &r[3]);
    v_load_quads(src + 16, ss, &r[4], &r[5], &r[6], &r[7]);
    v_load_quads(src + 20, ss, &again5, &again6, &again7, &r[8]);
    (void)again5, (void)again6, (void)again7;
    rotation_to_quat(r, &q[0], &q[1], &q[2], &q[3]);
    v_store_records(dst, ds, 1, q);
}

void JM_FN(jm_joints_to_mats)(const char *src, ptrdiff_t ss, char *dst, ptrdiff_t ds, size_t n) {
    JM_FOR_BLOCKS(joints_to_mats_block, src, ss, 32, dst, ds, 48, n);
}

void JM_FN(jm_mats_to_joints)(const char *src, ptrdiff_t ss, char *dst, ptrdiff_t ds, size_t n) {
    JM_FOR_BLOCKS(mats_to_joints_block, src, ss, 48, dst, ds, 32, n);
}

void JM_FN(jm_quats_to_matrices)(const char *src, ptrdiff_t ss, char *dst, ptrdiff_t ds, size_t n) {
    JM_FOR_BLOCKS(quats_to_matrices_block, src, ss, 16, dst, ds, 36, n);
}

void JM_FN(jm_matrices_to_quats)(const char *src, ptrdiff_t ss, char *dst, ptrdiff_t ds, size_t n) {
    JM_FOR_BLOCKS(matrices_to_quats_block, src, ss, 36, dst, ds, 16, n);
}
