/*
 * convert.c - quaternion <-> rotation matrix, for joint records and plain float arrays.
 *
 * Compiled once per ISA (see simd/common.h). Conventions: quaternions are (x, y, z, w); the matrix is
 * the active rotation R with v' = R v (the one scipy's Rotation.as_matrix returns), row-major.
 * Each block converts JM_W records at once, one record per vector lane.
 */
#include "jointmath.h"
#include "simd/common.h"
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

/* jm_joints_to_mats: n jm_joint_quat -> jm_joint_mat (strides in bytes): the rotation of q / |q|
   (quat_to_rotation: max abs element error 5e-7 for any finite non-zero scale; a zero q gives NaN),
   the translation copied to column 3. */
void JM_FN(jm_joints_to_mats)(const char *src, ptrdiff_t ss, char *dst, ptrdiff_t ds, size_t n) {
    JM_FOR_BLOCKS(joints_to_mats_block, src, ss, 32, dst, ds, 48, n);
}

/* jm_mats_to_joints: n jm_joint_mat -> jm_joint_quat: q of the 3x3 part (rotation_to_quat: angle
   error 1e-6 rad, | |q| - 1 | <= 1e-6, finite for finite input, sign as the largest-divisor case
   gives it), t from column 3, t[3] = 0. */
void JM_FN(jm_mats_to_joints)(const char *src, ptrdiff_t ss, char *dst, ptrdiff_t ds, size_t n) {
    JM_FOR_BLOCKS(mats_to_joints_block, src, ss, 48, dst, ds, 32, n);
}

/* jm_quats_to_matrices: n float[4] -> float[3][3], as jm_joints_to_mats' rotation. */
void JM_FN(jm_quats_to_matrices)(const char *src, ptrdiff_t ss, char *dst, ptrdiff_t ds, size_t n) {
    JM_FOR_BLOCKS(quats_to_matrices_block, src, ss, 16, dst, ds, 36, n);
}

/* jm_matrices_to_quats: n float[3][3] -> float[4], as jm_mats_to_joints' rotation. */
void JM_FN(jm_matrices_to_quats)(const char *src, ptrdiff_t ss, char *dst, ptrdiff_t ds, size_t n) {
    JM_FOR_BLOCKS(matrices_to_quats_block, src, ss, 36, dst, ds, 16, n);
}

/* ------------------------------------------------------------------- float64 -- */

/* double[3][3] -> double[4] (vd_load_mat3, rotation_to_quat_f64) */
JM_INLINE void matrices_to_quats_f64_block(const char *src, ptrdiff_t ss, char *dst, ptrdiff_t ds) {
    vd r[9], q[4];
    vd_load_mat3(src, ss, r);
    rotation_to_quat_f64(r, q);
    vd_store_quads(dst, ds, q[0], q[1], q[2], q[3]);
}

/* double[4] -> double[3][3] (vd_store_mat3) */
JM_INLINE void quats_to_matrices_f64_block(const char *src, ptrdiff_t ss, char *dst, ptrdiff_t ds) {
    vd q[4], r[9];
    vd_load_quads(src, ss, &q[0], &q[1], &q[2], &q[3]);
    quat_to_rotation_f64(q[0], q[1], q[2], q[3], r);
    vd_store_mat3(dst, ds, r);
}

/* The AVX-512 path runs the AVX2 kernel (same bits; faster there, simd/avx512.h). */
void JM_FN(jm_quats_to_matrices_f64)(const char *src, ptrdiff_t ss, char *dst, ptrdiff_t ds, size_t n) {
    if (JM_HANDOFF_QUATS_TO_MATRICES_F64) {
        JM_HANDOFF_FN(jm_quats_to_matrices_f64)(src, ss, dst, ds, n);
        return;
    }
    JM_FOR_BLOCKS_D(quats_to_matrices_f64_block, src, ss, 32, dst, ds, 72, n);
}

/* jm_matrices_to_quats_f64: n double[3][3] -> double[4] (rotation_to_quat_f64: angle error
   2e-15 rad, | |q| - 1 | <= 1e-15, finite unit output for finite input, NaN for NaN). */
void JM_FN(jm_matrices_to_quats_f64)(const char *src, ptrdiff_t ss, char *dst, ptrdiff_t ds, size_t n) {
    JM_FOR_BLOCKS_D(matrices_to_quats_f64_block, src, ss, 72, dst, ds, 32, n);
}
